import Foundation
import Synchronization
import TonearmCore

/// Runs mpd commands against the player and the library and writes their replies. One executor serves every
/// connection; what belongs to one client (its password, its binary limit) travels in `ClientState`.
public final class CommandExecutor: Sendable {
    /// What a connection remembers between commands.
    public struct ClientState: Sendable, Equatable {
        public var authorized: Bool
        /// The largest binary chunk the client takes (`binarylimit`).
        public var binaryLimit = 8192

        public init(authorized: Bool) { self.authorized = authorized }
    }

    let player: Player
    let tracker: ChangeTracker
    let library: LibraryCache
    let librarySource: (any MPDLibrarySource)?
    let password: String?
    /// The saved playlists; nil where the daemon has none to offer (then none exist).
    let playlists: (any MPDPlaylistStore)?
    let started = Date()
    let updateJobs = UpdateJobs()

    public init(player: Player, library: (any MPDLibrarySource)?, tracker: ChangeTracker, password: String?,
                playlists: (any MPDPlaylistStore)? = nil) {
        self.playlists = playlists
        self.player = player
        self.tracker = tracker
        self.librarySource = library
        self.library = LibraryCache(library: library)
        self.password = password
    }

    /// The state a new connection starts in.
    public var newClient: ClientState { ClientState(authorized: password == nil) }

    /// The library changed: later reads see the new index.
    func libraryChanged() async { await library.invalidate() }

    /// Commands any client may send before giving the password.
    static let open: Set<String> = ["password", "ping", "close"]

    /// The reply to a lone `status` or `ping` line (blanks around it allowed), from the published state alone: it is
    /// written on the connection's event loop without a hop to a task. Nil for any other line, which goes through
    /// `run`. The caller checks that the line is a single command of an authorized client.
    public func answerAtOnce<Line: BidirectionalCollection<UInt8>>(_ line: Line) -> [UInt8]? {
        guard let first = line.firstIndex(where: { !CommandTokenizer.isSpace($0) }),
              let last = line.lastIndex(where: { !CommandTokenizer.isSpace($0) }) else { return nil }
        let word = line[first...last]
        if word.elementsEqual("ping".utf8) { return Self.ok }
        guard word.elementsEqual("status".utf8) else { return nil }
        var reply = Reply(capacity: 512)
        status(&reply)
        reply.append("OK\n")
        return reply.bytes
    }

    private static let ok = Array("OK\n".utf8)

    /// Runs request lines as one batch; returns the reply and whether the connection must close.
    public func run(_ lines: [String], mode: MPDSession.ListMode, client: inout ClientState) async -> (reply: [UInt8], close: Bool) {
        var reply = Reply()
        var skipUntil = 0
        for (index, line) in lines.enumerated() {
            if index < skipUntil { continue }
            // A run of plain `add`s in a list (clients add an album that way) goes to the player as one batch.
            if mode != .single, client.authorized, let batch = await addBatch(lines, from: index), batch.added > 1 {
                if mode == .listOK { for _ in 0..<batch.added { reply.append("list_OK\n") } }
                skipUntil = index + batch.added
                continue
            }
            var name = ""
            do throws(MPDAck) {
                let (command, arguments) = try CommandTokenizer.tokenize(line)
                name = command
                if name == "close" { return (reply.bytes, true) }
                guard client.authorized || Self.open.contains(name) else {
                    throw MPDAck(.permission, "you don't have permission for \"\(name)\"")
                }
                var out = Reply()
                try await execute(name, arguments, into: &out, client: &client)
                reply.append(out)
            } catch {
                var ack = error
                ack.index = index
                // An unknown command's ACK names no command, as mpd's does.
                if ack.command.isEmpty, !(ack.code == .unknown && ack.message.hasPrefix("unknown command")) { ack.command = name }
                reply.append(ack.line)
                return (reply.bytes, false)
            }
            if mode == .listOK { reply.append("list_OK\n") }
        }
        reply.append("OK\n")
        return (reply.bytes, false)
    }

    /// Adds the run of `add URI` lines starting at `start` in one call; nil (nothing done) when any of them is not
    /// a plain add or cannot be resolved, so they run one by one and the failing one gets its ACK.
    func addBatch(_ lines: [String], from start: Int) async -> (added: Int, Void)? {
        var uris: [String] = []
        for line in lines[start...] {
            guard let (name, arguments) = try? CommandTokenizer.tokenize(line), name == "add", arguments.count == 1,
                  uris.count < Player.maximumBatch else { break }
            guard let resolved = try? await self.uris(for: arguments[0], single: true) else { return nil }
            uris += resolved
        }
        guard uris.count > 1 else { return nil }
        do { _ = try await player.add(uris, at: .end) } catch { return nil }
        return (uris.count, ())
    }

    func execute(_ name: String, _ a: [String], into r: inout Reply, client: inout ClientState) async throws(MPDAck) {
        switch name {
        // Connection
        case "ping": try count(name, a, 0...0)
        case "password":
            try count(name, a, 1...1)
            guard let password, a[0] == password else { throw MPDAck(.password, "incorrect password") }
            client.authorized = true
        case "binarylimit":
            try count(name, a, 1...1)
            guard let limit = Int(a[0]), limit >= 64 else { throw MPDAck(.arg, "Value too small") }
            client.binaryLimit = min(limit, 1 << 24)
        case "commands":
            try count(name, a, 0...0)
            for command in Self.supported.sorted() { r.line("command", command) }
        case "notcommands": break
        case "tagtypes":
            if a.isEmpty {
                for tag in MPDSong.suppliedTags { r.line("tagtype", tag) }
            } else {
                // "clear", "all", "enable …", "disable …": every tag is always sent; clients ignore what they do not need.
                guard ["clear", "all", "enable", "disable"].contains(a[0]) else { throw MPDAck(.arg, "Unknown sub command") }
            }
        case "urlhandlers":
            try count(name, a, 0...0)
            for scheme in ["file://", "http://", "https://"] { r.line("handler", scheme) }
        case "decoders": break
        case "config": throw MPDAck(.permission, "Command only permitted to local clients")
        case "channels", "readmessages", "listneighbors": break
        case "listmounts": r.line("mount", "")
        case "subscribe", "unsubscribe", "sendmessage": throw .notSupported("client-to-client messaging")
        case "sticker", "stickernames", "stickertypes": try await stickerCommand(name, a, &r)
        // ReplayGain: mpd's modes are Tonearm's (off, track, album, auto), shared with Player1.ReplayGainMode.
        case "replay_gain_status":
            try count(name, a, 0...0)
            r.line("replay_gain_mode", player.state.snapshot.replayGainMode.rawValue)
        case "replay_gain_mode":
            try count(name, a, 1...1)
            guard let mode = ReplayGainMode(rawValue: a[0]) else { throw MPDAck(.arg, "Unrecognized replay gain mode") }
            await player.setReplayGainMode(mode)
        // mixrampdb sets the level below which a track's end counts as silence before a fade (Tonearm measures it from
        // the audio: no MixRamp tags needed); mixrampdelay's overlap is the crossfade itself, so only "nan" (off) is taken.
        case "mixrampdb":
            try count(name, a, 1...1)
            guard let level = Double(a[0]), level.isFinite else { throw MPDAck(.arg, "Float expected: \(a[0])") }
            do {
                try await player.setCrossfadeSilence(threshold: level)
            } catch {
                throw MPDAck(.arg, (error as? TonearmError)?.message ?? "\(error)")
            }
        case "mixrampdelay":
            try count(name, a, 1...1)
            guard a[0].lowercased() == "nan" || Double(a[0]).map({ $0 < 0 }) == true else {
                throw MPDAck(.arg, "mixrampdelay is not used by Tonearm: the overlap is the crossfade (set it with crossfade)")
            }
        case "clearerror":
            try count(name, a, 0...0)
            tracker.clearError()
        // Status
        case "status":
            try count(name, a, 0...0)
            status(&r)
        case "currentsong":
            try count(name, a, 0...0)
            try await currentSong(&r)
        case "stats":
            try count(name, a, 0...0)
            try await stats(&r)
        // Playback
        case "play", "playid", "pause", "stop", "next", "previous", "seek", "seekid", "seekcur",
             "setvol", "volume", "getvol", "repeat", "random", "single", "consume", "crossfade", "continue":
            try await playback(name, a, &r)
        // Queue
        case "add", "addid", "delete", "deleteid", "move", "moveid", "clear", "shuffle", "swap", "swapid",
             "playlistinfo", "playlistid", "plchanges", "plchangesposid", "playlistfind", "playlistsearch", "prio", "prioid", "rangeid":
            try await queueCommand(name, a, &r)
        // Library
        case "lsinfo", "listall", "listallinfo", "listfiles", "find", "search", "findadd", "searchadd", "list", "count",
             "update", "rescan", "albumart", "readpicture":
            try await libraryCommand(name, a, &r, client: client)
        // Stored playlists: Tonearm's saved playlists
        case "listplaylists", "listplaylist", "listplaylistinfo", "load", "save", "rm", "rename", "playlistadd",
             "playlistclear", "playlistdelete", "playlistmove", "searchaddpl", "findaddpl":
            try await storedPlaylistCommand(name, a, &r)
        // Outputs: Tonearm's named outputs, one playing at a time; enabling one switches to it
        case "outputs":
            try count(name, a, 0...0)
            let now = player.state.snapshot
            let current = now.output
            for (id, output) in now.outputs.enumerated() {
                r.line("outputid", id)
                r.line("outputname", output.name)
                r.line("plugin", output.kind)
                r.line("outputenabled", output.name == current ? 1 : 0)
            }
        case "enableoutput", "disableoutput", "toggleoutput", "outputset":
            try count(name, a, 1...3)
            let outputs = player.state.snapshot.outputs
            guard let id = Int(a[0]), outputs.indices.contains(id) else { throw MPDAck(.noExist, "No such audio output") }
            let isCurrent = outputs[id].name == player.state.snapshot.output
            switch name {
            case "outputset":
                throw MPDAck(.system, "Tonearm's outputs have no runtime attributes; set them in config.toml")
            case "disableoutput" where isCurrent, "toggleoutput" where isCurrent:
                throw MPDAck(.system, "Tonearm plays into one output at a time: enable another one to switch")
            case "disableoutput":
                break
            default:
                do {
                    try await player.setOutput(outputs[id].name)
                } catch {
                    throw MPDAck(.system, (error as? TonearmError)?.message ?? "\(error)")
                }
            }
        case "idle", "noidle", "command_list_begin", "command_list_ok_begin", "command_list_end":
            throw MPDAck(.arg, "\(name) is only allowed on its own")
        default:
            throw .unknownCommand(name)
        }
    }

    static let supported: Set<String> = [
        "ping", "password", "binarylimit", "close", "commands", "notcommands", "tagtypes", "urlhandlers", "decoders",
        "channels", "readmessages", "listmounts", "listneighbors", "replay_gain_status", "replay_gain_mode", "clearerror",
        "status", "currentsong", "stats", "idle", "noidle",
        "play", "playid", "pause", "stop", "next", "previous", "seek", "seekid", "seekcur", "setvol", "volume", "getvol",
        "repeat", "random", "single", "consume", "crossfade", "continue",
        "add", "addid", "delete", "deleteid", "move", "moveid", "clear", "shuffle", "swap", "swapid",
        "playlistinfo", "playlistid", "plchanges", "plchangesposid", "playlistfind", "playlistsearch",
        "lsinfo", "listall", "listallinfo", "listfiles", "find", "search", "findadd", "searchadd", "list", "count",
        "update", "rescan", "albumart", "readpicture", "sticker", "stickernames", "stickertypes",
        "listplaylists", "listplaylist", "listplaylistinfo", "load", "save", "rm", "rename", "playlistadd", "playlistclear",
        "playlistdelete", "playlistmove", "searchaddpl", "findaddpl", "outputs", "enableoutput", "disableoutput", "toggleoutput",
        "command_list_begin", "command_list_ok_begin", "command_list_end",
    ]

    func count(_ name: String, _ a: [String], _ range: ClosedRange<Int>) throws(MPDAck) {
        guard range.contains(a.count) else { throw .wrongArgumentCount(name) }
    }

    // MARK: Status

    /// The queue and transport as last published, with the playlist version of exactly those entries.
    func synced() -> (PlayerQueueView, UInt32) {
        let state = player.state
        tracker.sync(state.snapshot)
        return (PlayerQueueView(state), tracker.version)
    }

    func status(_ r: inout Reply) {
        // One read of the published state: each read copies it under its lock.
        let state = player.state
        let snapshot = state.snapshot
        tracker.sync(snapshot)
        let version = tracker.version
        let error = tracker.error
        let scanning = librarySource?.isScanning == true
        r.line("volume", Int((snapshot.volume * 100).rounded()))
        r.line("repeat", snapshot.loop == .none ? 0 : 1)
        r.line("random", snapshot.shuffle ? 1 : 0)
        r.line("single", snapshot.loop == .track ? 1 : 0)
        r.line("consume", 0)
        r.line("continue", snapshot.continueMode.text)
        r.line("partition", "default")
        r.line("playlist", version)
        r.line("playlistlength", snapshot.tracks.count)
        r.decimalLine("mixrampdb", snapshot.silenceThreshold, places: 6)
        if snapshot.crossfade > 0 { r.line("xfade", Int(snapshot.crossfade.rounded())) }
        r.line("state", snapshot.status == .playing ? "play" : snapshot.status == .paused ? "pause" : "stop")
        if let current = snapshot.current?.id, let index = Self.index(of: current, at: snapshot.currentIndex, in: snapshot.tracks) {
            r.line("song", index)
            r.line("songid", current.serial ?? 0)
            if snapshot.status != .stopped {
                let elapsed = Double(state.position.now) / 1e6
                let duration = snapshot.tracks[index].metadata.length.map { Double($0) / 1e6 }
                r.time(elapsed: elapsed, duration: duration ?? 0)
                r.decimalLine("elapsed", elapsed, places: 3)
                if let duration { r.decimalLine("duration", duration, places: 3) }
            }
        }
        if let next = snapshot.nextID, let index = Self.index(of: next, at: snapshot.nextIndex, in: snapshot.tracks) {
            r.line("nextsong", index)
            r.line("nextsongid", next.serial ?? 0)
        }
        if scanning { r.line("updating_db", updateJobs.current) }
        if let error { r.line("error", error) }
    }

    /// Where `id` is in `tracks`: at `hint` (the published state's own index) when it is there, else found by a scan.
    static func index(of id: TrackID, at hint: Int?, in tracks: [Track]) -> Int? {
        if let hint, tracks.indices.contains(hint), tracks[hint].id == id { return hint }
        return tracks.firstIndex { $0.id == id }
    }

    func currentSong(_ r: inout Reply) async throws(MPDAck) {
        let view = player.inspect { $0 }
        guard let current = view.currentID, let index = view.tracks.firstIndex(where: { $0.id == current }) else { return }
        let database = try await library.current()
        write(view.tracks[index], position: index, database, &r)
    }

    func stats(_ r: inout Reply) async throws(MPDAck) {
        let database = try await library.current()
        r.line("artists", Set(database.songs.flatMap { $0.values("Artist") }).count)
        r.line("albums", Set(database.songs.flatMap { $0.values("Album") }).count)
        r.line("songs", database.songs.count)
        r.line("uptime", Int(Date().timeIntervalSince(started)))
        r.line("db_playtime", Int(database.songs.reduce(0) { $0 + ($1.duration ?? 0) }))
        r.line("db_update", Int(await library.updated.timeIntervalSince1970))
        r.line("playtime", 0)
    }

    // MARK: Songs

    /// A queue entry as an mpd song: the library's record when it is indexed, else its own metadata.
    func song(_ track: Track, _ database: MusicDatabase) -> MPDSong {
        if let indexed = database.song(uri: track.uri) { return indexed }
        let m = track.metadata
        var tags: [(name: String, value: String)] = []
        for artist in m.artists { tags.append(("Artist", artist)) }
        for artist in m.albumArtists { tags.append(("AlbumArtist", artist)) }
        if let title = m.title { tags.append(("Title", title)) }
        if let album = m.album { tags.append(("Album", album)) }
        if let n = m.trackNumber { tags.append(("Track", String(n))) }
        if let d = m.discNumber { tags.append(("Disc", String(d))) }
        for genre in m.genres { tags.append(("Genre", genre)) }
        let file = database.file(forURI: track.uri) ?? (track.uri.hasPrefix("file://") ? (URL(string: track.uri)?.path ?? track.uri) : track.uri)
        return MPDSong(file: file, uri: track.uri, tags: tags, duration: m.length.map { Double($0) / 1e6 }, artURL: m.artUrl)
    }

    func write(_ track: Track, position: Int, _ database: MusicDatabase, _ r: inout Reply) {
        r.song(song(track, database))
        r.line("Pos", position)
        r.line("Id", track.id.serial ?? 0)
    }
}

/// Numbers for `update` jobs, as mpd hands them out.
final class UpdateJobs: Sendable {
    private let counter = Mutex(0)
    var current: Int { counter.withLock { max(1, $0) } }
    func next() -> Int { counter.withLock { $0 += 1; return $0 } }
}
