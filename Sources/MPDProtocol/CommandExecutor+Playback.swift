import Foundation
import TonearmCore

/// Transport and settings: play, pause, seek, volume, repeat/random/single.
extension CommandExecutor {
    func playback(_ name: String, _ a: [String], _ r: inout Reply) async throws(MPDAck) {
        switch name {
        case "play":
            try count(name, a, 0...1)
            if a.isEmpty {
                await player.play()
            } else {
                let position = try Self.integer(a[0])
                // mpd: a negative position plays the current song.
                if position < 0 { await player.play(); return }
                let id = try await id(atPosition: position)
                await player.goTo(id)
            }
        case "playid":
            try count(name, a, 0...1)
            if a.isEmpty {
                await player.play()
            } else {
                let id = try await id(forSongID: a[0])
                await player.goTo(id)
            }
        case "pause":
            try count(name, a, 0...1)
            switch a.first {
            case nil: await player.playPause()
            case "1": await player.pause()
            case "0": await player.play()
            default: throw MPDAck(.arg, "Boolean (0/1) expected: \(a[0])")
            }
        case "stop": try count(name, a, 0...0); await player.stop()
        case "next": try count(name, a, 0...0); await player.next()
        case "previous": try count(name, a, 0...0); await player.previous()
        case "seek":
            try count(name, a, 2...2)
            let id = try await id(atPosition: try Self.integer(a[0]))
            try await seek(id, Self.seconds(a[1]))
        case "seekid":
            try count(name, a, 2...2)
            let id = try await id(forSongID: a[0])
            try await seek(id, Self.seconds(a[1]))
        case "seekcur":
            try count(name, a, 1...1)
            let view = player.inspect { $0 }
            guard let current = view.currentID, view.status != .stopped else { throw MPDAck(.playerSync, "Not playing") }
            let text = a[0]
            let value = try Self.seconds(text.hasPrefix("+") ? String(text.dropFirst()) : text)
            if text.hasPrefix("+") || text.hasPrefix("-") {
                await player.seek(by: Int64(value * 1e6))
            } else {
                await player.setPosition(current, Int64(value * 1e6))
            }
        case "setvol":
            try count(name, a, 1...1)
            let volume = try Self.integer(a[0])
            guard (0...100).contains(volume) else { throw MPDAck(.arg, "Invalid volume value") }
            try await setVolume(Double(volume) / 100)
        case "volume":
            try count(name, a, 1...1)
            let change = try Self.integer(a[0])
            guard (-100...100).contains(change) else { throw MPDAck(.arg, "Invalid volume value") }
            let now = player.inspect { $0.volume }
            let target = min(100, max(0, Int((now * 100).rounded()) + change))
            try await setVolume(Double(target) / 100)
        case "getvol":
            try count(name, a, 0...0)
            r.line("volume", Int((player.inspect { $0.volume } * 100).rounded()))
        case "repeat":
            try count(name, a, 1...1)
            let on = try Self.boolean(a[0])
            let loop = player.inspect { $0.loop }
            if on && loop == .none { await player.setLoop(.playlist) }
            if !on && loop != .none { await player.setLoop(.none) }
        case "random":
            try count(name, a, 1...1)
            await player.setShuffle(try Self.boolean(a[0]))
        case "single":
            try count(name, a, 1...1)
            // Tonearm's loop modes: single with repeat plays the song again and again (LoopStatus Track); single
            // without repeat (stop after the song) and oneshot have no counterpart.
            if a[0] == "oneshot" { throw .notSupported("single oneshot") }
            let on = try Self.boolean(a[0])
            let loop = player.inspect { $0.loop }
            if on, loop != .track {
                await player.setLoop(.track)
            } else if !on, loop == .track {
                await player.setLoop(.playlist)
            }
        case "consume":
            try count(name, a, 1...1)
            guard try !Self.boolean(a[0]) else { throw .notSupported("consume mode") }
        case "continue":
            // Tonearm's own option, set like consume: 0 or off, 1 or similar, or a playlist (playlist:NAME or NAME)
            // whose next track not queued is added as the queue is about to end. status says which.
            try count(name, a, 1...1)
            let mode: ContinueMode = switch a[0] {
            case "0", "off": .off
            case "1", "similar": .similar
            default: ContinueMode(a[0]) ?? .playlist(a[0])
            }
            do {
                try await player.setContinueMode(mode)
            } catch {
                throw MPDAck(.arg, (error as? TonearmError)?.message ?? "\(error)")
            }
        case "crossfade":
            // Tonearm's own crossfade: consecutive tracks of one album in order stay gapless (see [playback.crossfade]).
            try count(name, a, 1...1)
            guard let seconds = Int(a[0]), seconds >= 0 else { throw MPDAck(.arg, "Integer expected: \(a[0])") }
            do {
                try await player.setCrossfade(seconds: Double(seconds))
            } catch {
                throw MPDAck(.arg, (error as? TonearmError)?.message ?? "\(error)")
            }
        default:
            throw .unknownCommand(name)
        }
    }

    private func setVolume(_ value: Double) async throws(MPDAck) {
        do { try await player.setVolume(value) } catch { throw MPDAck(.arg, "Invalid volume value") }
    }

    private func seek(_ id: TrackID, _ seconds: Double) async throws(MPDAck) {
        guard seconds >= 0 else { throw MPDAck(.arg, "Negative position") }
        do {
            try await player.play(id, from: Int64(seconds * 1e6), keepPaused: true)
        } catch {
            throw .noSuchSong()
        }
    }

    // MARK: Arguments

    static func integer(_ text: String) throws(MPDAck) -> Int {
        guard let value = Int(text) else { throw MPDAck(.arg, "Integer expected: \(text)") }
        return value
    }

    static func seconds(_ text: String) throws(MPDAck) -> Double {
        guard let value = Double(text), value.isFinite else { throw MPDAck(.arg, "Number expected: \(text)") }
        return value
    }

    static func boolean(_ text: String) throws(MPDAck) -> Bool {
        switch text {
        case "0": return false
        case "1": return true
        default: throw MPDAck(.arg, "Boolean (0/1) expected: \(text)")
        }
    }

    /// `START:END` (END excluded; open when empty) or one position; clamped to `count`.
    static func range(_ text: String, count: Int) throws(MPDAck) -> Range<Int> {
        if let colon = text.firstIndex(of: ":") {
            guard let start = Int(text[..<colon]), start >= 0 else { throw MPDAck(.arg, "Integer expected: \(text)") }
            let endText = text[text.index(after: colon)...]
            let end: Int
            if endText.isEmpty { end = count } else {
                guard let e = Int(endText), e >= start else { throw MPDAck(.arg, "Bad range: \(text)") }
                end = e
            }
            guard start <= count else { throw .badSongIndex() }
            return start..<min(end, count)
        }
        let position = try integer(text)
        guard position >= 0, position < count else { throw .badSongIndex() }
        return position..<(position + 1)
    }

    func id(atPosition position: Int) async throws(MPDAck) -> TrackID {
        let ids = player.inspect { $0.tracks.map(\.id) }
        guard position >= 0, position < ids.count else { throw .badSongIndex() }
        return ids[position]
    }

    func id(forSongID text: String) async throws(MPDAck) -> TrackID {
        guard let serial = UInt64(text) else { throw MPDAck(.arg, "Integer expected: \(text)") }
        let ids = player.inspect { $0.tracks.map(\.id) }
        guard let id = ids.first(where: { $0.serial == serial }) else { throw .noSuchSong() }
        return id
    }
}
