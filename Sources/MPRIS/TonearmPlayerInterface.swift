import Foundation
import DBus
import TonearmCore

/// org.tonearm.Player1: Tick, its interval, the queue editing TrackList lacks, and the ReplayGain mode.
struct TonearmPlayerInterface: DBusInterfaceHandler {
    static let name = "org.tonearm.Player1"
    private let declared = Contract(TonearmPlayerInterface.name)
    var interface: DBusInterfaceDescription { declared.description }
    let player: Player
    /// Behind the Waveform method.
    var waveforms: WaveformService?
    /// Where the web face listens, once it does.
    var webAddress: @Sendable () -> String? = { nil }

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged {
            let uris = (a.first?.arrayValue ?? []).compactMap(\.stringValue)
            switch method {
            case "Enqueue":
                return [.objectPathArray(try await player.add(uris, at: .end).map(\.path))]
            case "EnqueueNext":
                return [.objectPathArray(try await player.add(uris, at: .afterCurrent).map(\.path))]
            case "ReplaceQueue":
                return [.objectPathArray(try await player.replaceQueue(uris, play: a[1].boolValue ?? false).map(\.path))]
            case "MoveTrack":
                try await player.move(TrackID(path: a[0].stringValue ?? ""), after: TrackID(path: a[1].stringValue ?? ""))
                return []
            case "Clear":
                await player.clear()
                return []
            case "Waveform":
                return try await WaveformReply.call(waveforms, target: a[0].stringValue ?? "", width: a[1], player: player)
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    /// Waveform may decode a whole file: every other call goes on meanwhile.
    func answersOutOfOrder(_ method: String) -> Bool { method == "Waveform" }

    /// Waveform, and queueing network streams or playlists (they wait for the server).
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool {
        if method == "Waveform" { return true }
        guard ["Enqueue", "EnqueueNext", "ReplaceQueue"].contains(method) else { return false }
        return MediaPlayer2Interface.reachesNetwork((arguments.first?.arrayValue ?? []).compactMap(\.stringValue))
    }

    func get(_ property: String) async throws -> DBusValue {
        guard let value = currentValue(property) else { throw DBusError.unknownProperty(property) }
        return value
    }

    /// From the published state, on the bus thread.
    func currentValue(_ property: String) -> DBusValue? {
        let s = player.state.snapshot
        if LyricsEncoding.properties.contains(property) {
            return LyricsEncoding.values(s.lyrics, line: s.lyricsLine?.index)[property]
        }
        switch property {
        case "TickInterval": return .int64(Self.microseconds(s.tickInterval))
        case "ReplayGainMode": return .string(s.replayGainMode.rawValue)
        case "Equalizer", "EqualizerBands", "EqualizerPreamp": return Self.equalizerProperties(s.equalizer)[property]
        case "EqualizerPresets": return .stringArray(s.equalizerPresets)
        case "EqualizerFrequencies": return .array(element: "d", EqualizerSettings.frequencies.map { .double($0) })
        case "Crossfade": return .double(s.crossfade)
        case "CrossfadeSilenceThreshold": return .double(s.silenceThreshold)
        case "Continue": return .string(s.continueMode.text)
        case "ReplayGain": return .double(20 * log10(max(1e-6, s.appliedGain)))
        case "Buffering": return .int32(Int32(s.buffering))
        case "Outputs":
            return .array(element: "(sss)", s.outputs.map { .structure([.string($0.name), .string($0.kind), .string($0.detail)]) })
        case "Output": return .string(s.output)
        case "OutputError": return .string(s.outputProblem)
        case "WebAddress": return .string(webAddress() ?? "")
        default: return nil
        }
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        switch property {
        case "TickInterval":
            do {
                try await player.setTickInterval(.microseconds(value.int64Value ?? 0))
            } catch let e as TonearmError {
                throw DBusError.invalidArgs(e.message)
            }
        case "ReplayGainMode":
            guard let text = value.stringValue else { throw DBusError.invalidArgs("ReplayGainMode is a string: off, track, album or auto") }
            // An unknown mode is org.tonearm.Error.InvalidValue, naming the valid ones.
            try await bridged { await player.setReplayGainMode(try ReplayGainMode.parse(text)) }
        case "Equalizer":
            guard let text = value.stringValue else {
                throw TonearmError.invalidValue("Equalizer is a string: off, on or a preset (see EqualizerPresets)").dbus
            }
            try await bridged { try await player.setEqualizer(named: text) }
        case "EqualizerBands":
            guard let items = value.arrayValue, case let bands = items.compactMap(\.doubleValue), bands.count == items.count else {
                throw TonearmError.invalidValue("EqualizerBands is an array of 10 doubles (dB, 29 Hz … 15 kHz)").dbus
            }
            try await bridged { try await player.setEqualizerBands(bands) }
        case "EqualizerPreamp":
            guard let preamp = value.doubleValue else { throw TonearmError.invalidValue("EqualizerPreamp is a double (dB)").dbus }
            try await bridged { try await player.setEqualizerPreamp(preamp) }
        case "Crossfade":
            guard let seconds = value.doubleValue else { throw DBusError.invalidArgs("Crossfade is a number of seconds (d), 0 to 15") }
            try await bridged { try await player.setCrossfade(seconds: seconds) }
        case "CrossfadeSilenceThreshold":
            guard let level = value.doubleValue else { throw DBusError.invalidArgs("CrossfadeSilenceThreshold is a level in dBFS (d)") }
            try await bridged { try await player.setCrossfadeSilence(threshold: level) }
        case "Continue":
            guard let text = value.stringValue, let mode = ContinueMode(text) else {
                throw TonearmError.invalidValue("Continue is off, similar or playlist:NAME").dbus
            }
            try await bridged { try await player.setContinueMode(mode) }
        case "Output":
            guard let name = value.stringValue else { throw DBusError.invalidArgs("Output is the name of an output (see Outputs)") }
            try await bridged { try await player.setOutput(name) }
        case "ReplayGain", "Buffering", "Outputs", "OutputError", "WebAddress", "EqualizerPresets", "EqualizerFrequencies":
            throw DBusError.propertyReadOnly(property)
        default:
            throw DBusError.unknownProperty(property)
        }
    }

    /// Equalizer, EqualizerBands and EqualizerPreamp for `state`.
    static func equalizerProperties(_ state: EqualizerState) -> [String: DBusValue] {
        ["Equalizer": .string(state.name), "EqualizerBands": .array(element: "d", state.curve.bands.map { .double($0) }),
         "EqualizerPreamp": .double(state.curve.preamp)]
    }

    static func microseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    }
}
