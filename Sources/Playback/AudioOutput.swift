import Foundation

/// A named place the player's audio goes: this machine's speakers, a Snapcast server's pipe or TCP source, or any
/// GStreamer sink line.
public struct AudioOutput: Sendable, Equatable, CustomStringConvertible {
    /// How the audio gets there.
    public enum Kind: Sendable, Equatable {
        /// `autoaudiosink`, or `element device=DEVICE` (alsasink unless another element is named) when a device is.
        case local(device: String?, element: String?)
        /// The FIFO of snapserver's `pipe://` source.
        case snapcastPipe(path: String, format: SampleFormat)
        /// snapserver's `tcp://HOST:PORT?mode=server` source, which Tonearm connects to.
        case snapcastTCP(host: String, port: Int, format: SampleFormat)
        /// Any gst-launch style sink line (`wavenc ! filesink location=…`).
        case pipeline(String)
    }

    /// The raw format a Snapcast source expects: snapserver's `sampleformat`, always 16-bit little-endian.
    public struct SampleFormat: Sendable, Equatable, CustomStringConvertible {
        public var rate: Int
        public var channels: Int

        public init(rate: Int = 48000, channels: Int = 2) {
            self.rate = rate
            self.channels = channels
        }

        /// snapserver's own notation, `RATE:BITS:CHANNELS` (`48000:16:2`); Tonearm writes 16-bit samples only.
        public init?(_ text: String) {
            let parts = text.split(separator: ":").map { Int($0) }
            guard parts.count == 3, let rate = parts[0], let bits = parts[1], let channels = parts[2],
                  (8000...384_000).contains(rate), bits == 16, (1...8).contains(channels) else { return nil }
            self.init(rate: rate, channels: channels)
        }

        public var description: String { "\(rate):16:\(channels)" }
    }

    public var name: String
    public var kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The output a bare sink description (the `audio-sink` setting) stands for.
    public static func sink(_ description: String, name: String = "default") -> AudioOutput {
        // Not Foundation's trimmingCharacters: on the start's path its first use (NSString, generic decoding) cost
        // about 1 ms of runtime look-ups before the first answer.
        var line = Substring(description)
        while line.first?.isWhitespace == true { line.removeFirst() }
        while line.last?.isWhitespace == true { line.removeLast() }
        let trimmed = String(line)
        return AudioOutput(name: name, kind: trimmed == PlaybackEngine.defaultSink ? .local(device: nil, element: nil) : .pipeline(trimmed))
    }

    /// The kind as the config names it.
    public var kindName: String {
        switch kind {
        case .local: return "local"
        case .snapcastPipe: return "snapcast-pipe"
        case .snapcastTCP: return "snapcast-tcp"
        case .pipeline: return "pipeline"
        }
    }

    /// Where it goes, for people: a device, a FIFO, a host and port, a sink line.
    public var detail: String {
        switch kind {
        case .local(let device, let element):
            guard let device else { return element ?? PlaybackEngine.defaultSink }
            return "\(element ?? "alsasink") device=\(device)"
        case .snapcastPipe(let path, let format): return "\(path) (\(format))"
        case .snapcastTCP(let host, let port, let format): return "\(host):\(port) (\(format))"
        case .pipeline(let line): return line
        }
    }

    public var description: String { "\(name) (\(kindName): \(detail))" }
}
