import ArgumentParser
import DBus
import Foundation

struct EqualizerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eq",
        abstract: "Print or change the graphic equalizer.",
        discussion: """
            With no argument, prints the equalizer: off, a preset or custom, the preamp, and each band's gain \\
            as a bar. PRESET is one of the presets (flat, bass, treble, loudness, voice, and those of \\
            [playback.equalizer.presets]); off takes the equalizer out of the path, on brings the last curve \\
            back. BAND=DB sets a band: BAND is its index 0–9, a frequency (60, 1k, 1kHz, 15k: the nearest \\
            band within half an octave), or bass (29–237 Hz), mid (474 Hz–1.9 kHz) or treble (3.8–15 kHz) for \\
            a group; DB is from -24 to +12. preamp=DB sets the preamp. A preset followed by bands starts from \\
            the preset. The change is heard at once, without a click; it lasts across restarts \\
            ([playback.equalizer] in config.toml is the default). --json prints {"equalizer", "preamp", \\
            "bands": [{"hz", "db"}], "presets"}.

            Examples: tonearm eq, tonearm eq bass, tonearm eq off, tonearm eq 1k=+3 60=-2, tonearm eq voice preamp=-2
            """
    )

    @Argument(help: ArgumentHelp("off, on, a preset, BAND=DB or preamp=DB.", valueName: "change"))
    var changes: [String] = []

    @Flag(name: .long, help: "Print {\"equalizer\", \"preamp\", \"bands\", \"presets\"} instead of a table.")
    var json = false

    /// Band groups a person may name instead of one band.
    static let groups: [String: ClosedRange<Int>] = ["bass": 0...3, "mid": 4...6, "treble": 7...9]

    /// The bands `text` names, given the bands' frequencies; nil when it names none.
    static func bands(named text: String, frequencies: [Double]) -> [Int]? {
        var t = String(text.lowercased().trimmingWhitespace)
        if let group = groups[t] { return Array(group) }
        if let index = Int(t), frequencies.indices.contains(index) { return [index] }
        if t.hasSuffix("hz") { t.removeLast(2) }
        var scale = 1.0
        if t.hasSuffix("k") {
            t.removeLast()
            scale = 1000
        }
        guard let number = Double(t), number.isFinite, number > 0, !frequencies.isEmpty else { return nil }
        let hertz = number * scale
        let nearest = frequencies.indices.min { abs(log2(frequencies[$0] / hertz)) < abs(log2(frequencies[$1] / hertz)) }!
        return abs(log2(frequencies[nearest] / hertz)) <= 0.5 ? [nearest] : nil
    }

    /// A gain written as "+6", "-3.5", "6dB".
    static func decibels(_ text: String) -> Double? {
        var t = String(text.lowercased().trimmingWhitespace)
        if t.hasSuffix("db") { t.removeLast(2) }
        if t.hasPrefix("+") { t.removeFirst() }
        guard let value = Double(t), value.isFinite else { return nil }
        return value
    }

    func validate() throws {
        for change in changes where change.contains("=") {
            let parts = change.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, Self.decibels(parts[1]) != nil else {
                throw ValidationError("'\(change)' is not BAND=DB: write e.g. 1k=+3, 60=-2, bass=4 or preamp=-3")
            }
        }
        if changes.filter({ !$0.contains("=") }).count > 1 {
            throw ValidationError("give one preset (or off / on), then BAND=DB changes")
        }
    }

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        let frequencies = try await client.tonearmProperty("EqualizerFrequencies").arrayValue?.compactMap(\.looseDouble) ?? []
        do {
            if let word = changes.first(where: { !$0.contains("=") }) {
                try await client.setTonearmProperty("Equalizer", .string(word.lowercased()))
            }
            let edits = changes.filter { $0.contains("=") }.map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            var bands = try await client.tonearmProperty("EqualizerBands").arrayValue?.compactMap(\.looseDouble) ?? []
            var bandsChanged = false
            for edit in edits {
                let value = Self.decibels(edit[1])!
                if edit[0].lowercased() == "preamp" {
                    try await client.setTonearmProperty("EqualizerPreamp", .double(value))
                    continue
                }
                guard let indices = Self.bands(named: edit[0], frequencies: frequencies) else {
                    throw CLIFailure.badArgument("'\(edit[0])' names no band: use 0–9, a frequency such as 60, 1k or 15k, or bass, mid, treble")
                }
                for i in indices where bands.indices.contains(i) { bands[i] = value }
                bandsChanged = true
            }
            if bandsChanged {
                try await client.setTonearmProperty("EqualizerBands", .array(element: "d", bands.map { .double($0) }))
            }
        } catch let error as DBusError {
            throw CLIFailure.badArgument(error.message)
        }
        let name = try await client.tonearmProperty("Equalizer").looseString ?? "?"
        let preamp = try await client.tonearmProperty("EqualizerPreamp").looseDouble ?? 0
        let bands = try await client.tonearmProperty("EqualizerBands").arrayValue?.compactMap(\.looseDouble) ?? []
        let presets = try await client.tonearmProperty("EqualizerPresets").looseStrings
        if json {
            let rows = zip(frequencies, bands).map { JSONValue.object([("hz", .number($0)), ("db", .number($1))]) }
            Output.line(JSONValue.object([("equalizer", .string(name)), ("preamp", .number(preamp)), ("bands", .array(rows)),
                                          ("presets", .array(presets.map { .string($0) }))]).serialized)
            return
        }
        Output.line("\(name)  preamp \(String(format: "%+.1f", preamp)) dB  (presets: \(presets.joined(separator: ", ")))")
        for (hz, db) in zip(frequencies, bands) { Output.line(Self.row(hz: hz, db: db)) }
    }

    /// "  947 Hz   +6.0 dB        │██████      ": 1 dB a cell, cuts to the left of the axis (−12 and below fill it).
    static func row(hz: Double, db: Double) -> String {
        let label = hz < 1000 ? "\(Int(hz)) Hz" : String(format: "%.1f kHz", hz / 1000)
        let cells = Int(min(12, abs(db)).rounded())
        let left = db < 0 ? String(repeating: " ", count: 12 - cells) + String(repeating: "█", count: cells) : String(repeating: " ", count: 12)
        let right = db > 0 ? String(repeating: "█", count: cells) + String(repeating: " ", count: 12 - cells) : String(repeating: " ", count: 12)
        let padded = String(repeating: " ", count: max(0, 9 - label.count)) + label
        return "\(padded)  \(String(format: "%+5.1f", db)) dB  \(left)│\(right)"
    }
}
