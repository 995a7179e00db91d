import CGStreamer
import Foundation
import Logging
import Synchronization

/// The sink bin built for one output, with the descriptor it writes to (a Snapcast FIFO or socket), which is closed
/// only when the bin is let go of: after playbin has gone through NULL and dropped it.
final class OutputSink: @unchecked Sendable {
    let output: AudioOutput
    /// A non-floating reference, ours.
    let element: UnsafeMutablePointer<GstElement>
    /// The silent clock-synchronised stand-in (no device, or the real output was lost).
    let isNull: Bool
    /// The stand-in for an output that was lost.
    let isParked: Bool
    private let fd: Int32?

    private init(output: AudioOutput, element: UnsafeMutablePointer<GstElement>, isNull: Bool, fd: Int32?, isParked: Bool = false) {
        self.output = output
        self.element = element
        self.isNull = isNull
        self.fd = fd
        self.isParked = isParked
    }

    deinit {
        _ = gst_element_set_state(element, GST_STATE_NULL)
        gst_object_unref(element)
        if let fd { close(fd) }
    }

    /// Builds and opens the sink of `output`; throws a `PlaybackError` that says why it cannot (within about a
    /// second: nothing here waits for a reader or a server).
    static func open(_ output: AudioOutput, logger: Logger) throws -> OutputSink {
        switch output.kind {
        case .local(let device, let element):
            guard let device else {
                let (sink, isNull) = try AudioSink.make(PlaybackEngine.defaultSink, logger: logger)
                return OutputSink(output: output, element: sink, isNull: isNull, fd: nil)
            }
            let quoted = "\"" + device.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            return try checked(output, AudioSink.parse("\(element ?? "alsasink") device=\(quoted)"), isNull: false)
        case .pipeline(let line):
            let (sink, isNull) = try AudioSink.make(line, logger: logger)
            return try checked(output, sink, isNull: isNull)
        case .snapcastPipe(let path, let format):
            return try writing(output, to: OutputConnection.openFIFO(path), format: format)
        case .snapcastTCP(let host, let port, let format):
            return try writing(output, to: OutputConnection.connect(host: host, port: port), format: format)
        }
    }

    /// Builds the sink of an output opened before there was an engine (`PreparedOutput.connect`), on the descriptor
    /// opened then.
    static func build(_ prepared: PreparedOutput, logger: Logger) throws -> OutputSink {
        switch prepared.output.kind {
        case .snapcastPipe(_, let format), .snapcastTCP(_, _, let format):
            if let fd = prepared.connection?.take() { return try writing(prepared.output, to: fd, format: format) }
        case .local, .pipeline:
            break
        }
        return try open(prepared.output, logger: logger)
    }

    /// Where the audio waits while the real output is gone: silent, at the pace of the clock.
    static func parking(for output: AudioOutput) throws -> OutputSink {
        OutputSink(output: output, element: try AudioSink.parse("fakesink sync=true"), isNull: true, fd: nil, isParked: true)
    }

    /// The stream converted to the Snapcast source's raw format and written to `fd`. Not synchronised to the clock:
    /// the reader's pace is the clock (with `sync=true` a FIFO drops the start). A queue of up to 2 s feeds the writer
    /// from a thread of its own: a FIFO holds only 64 KiB (0.34 s), and a busy machine's gapless hand-over took
    /// longer than that, so snapserver read nothing and played 130 ms of silence between two tracks.
    private static func writing(_ output: AudioOutput, to fd: Int32, format: AudioOutput.SampleFormat) throws -> OutputSink {
        let line = "audioconvert ! audioresample ! audio/x-raw,format=S16LE,layout=interleaved,rate=\(format.rate),channels=\(format.channels)"
            + " ! queue max-size-time=2000000000 max-size-bytes=0 max-size-buffers=0 ! fdsink fd=\(fd) sync=false"
        do {
            return OutputSink(output: output, element: try AudioSink.parse(line), isNull: false, fd: fd)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Opens the sink once (READY) so that a device or file that cannot open is an error now, not a failed track.
    /// Not a file sink that writes into a FIFO: opening it waits for a reader, and closing it again ends that reader's
    /// stream (`cat`, or any reader that does not open the FIFO again, would get nothing of what is played after).
    private static func checked(_ output: AudioOutput, _ sink: UnsafeMutablePointer<GstElement>, isNull: Bool) throws -> OutputSink {
        let built = OutputSink(output: output, element: sink, isNull: isNull, fd: nil)
        if writesToFIFO(sink) { return built }
        guard gst_element_set_state(sink, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE else {
            throw OutputConnection.failure("the output '\(output.name)' (\(output.detail)) cannot be opened")
        }
        _ = gst_element_set_state(sink, GST_STATE_NULL)
        return built
    }

    /// Whether `sink` is a bin whose file sink writes into a FIFO.
    private static func writesToFIFO(_ sink: UnsafeMutablePointer<GstElement>) -> Bool {
        guard tn_is_bin(sink) != 0, let location = tn_bin_file_sink_location(tn_bin(sink)) else { return false }
        defer { g_free(location) }
        var info = stat()
        return stat(location, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }

    /// Whether a GStreamer object is this sink or inside it (the source of a bus message).
    func contains(_ object: UnsafeMutablePointer<GstObject>) -> Bool {
        let mine = tn_gst_object(element)
        return object == mine || gst_object_has_as_ancestor(object, mine) != 0
    }
}

/// An output opened and ready to take over (`PlaybackEngine.prepareOutput`), handed to `useOutput`.
public final class PreparedOutput: Sendable {
    public let output: AudioOutput
    let sink: OutputSink?
    /// What a Snapcast output writes into, opened before its sink could be built.
    let connection: Connection?

    init(_ sink: OutputSink) {
        output = sink.output
        self.sink = sink
        connection = nil
    }

    /// For engines without GStreamer (tests' fakes): an output with nothing built.
    public init(unbuilt output: AudioOutput) {
        self.output = output
        sink = nil
        connection = nil
    }

    private init(_ output: AudioOutput, connection: Connection?) {
        self.output = output
        sink = nil
        self.connection = connection
    }

    /// Opens what `output` writes into without GStreamer, which may still be setting up: a Snapcast FIFO or socket
    /// (so one that cannot be opened is refused now, as `prepareOutput` would); a device or a pipeline is checked
    /// when its sink is built, at `useOutput`.
    public static func connect(_ output: AudioOutput) throws -> PreparedOutput {
        switch output.kind {
        case .snapcastPipe(let path, _):
            return PreparedOutput(output, connection: Connection(try OutputConnection.openFIFO(path)))
        case .snapcastTCP(let host, let port, _):
            return PreparedOutput(output, connection: Connection(try OutputConnection.connect(host: host, port: port)))
        case .local, .pipeline:
            return PreparedOutput(output, connection: nil)
        }
    }

    /// A descriptor handed to one sink, or closed with its owner when none took it.
    final class Connection: Sendable {
        private let fd: Int32
        private let taken = Atomic(false)

        init(_ fd: Int32) { self.fd = fd }

        func take() -> Int32? { taken.exchange(true, ordering: .acquiringAndReleasing) ? nil : fd }

        deinit { if !taken.load(ordering: .acquiring) { close(fd) } }
    }
}
