/// One row of the report.
enum Metric: CaseIterable, Hashable, Sendable {
    case startup, startupAnswer, coldStartup, spawnToMetadata, coldSpawnToMetadata, brokenAnswer, brokenToMetadata
    case startSlowestCall, startSlowestCallBusy
    case floorP50, floorP99, p50, p99
    case floorConcurrentP50, concurrentP50, concurrentP99, concurrentShare
    case playerctlStatus
    case playPauseReply, playPauseMedian, playPauseP90, seekPlaying, seekPaused, setPositionPlaying, setPositionPaused
    case rssIdle, rssPlaying, cpuPerMinute, rssPlayingOgg, cpuPerMinuteOgg, rssPlayingMP3, cpuPerMinuteMP3
    case gaplessGap, openToAudio
    /// The library scan (see `ScanBench`), compared with mpd only.
    case scanCold, scanWarm, scanMemory

    /// The main table's rows, in order.
    static let playback: [Metric] = [
        .startup, .startupAnswer, .coldStartup, .spawnToMetadata, .coldSpawnToMetadata, .brokenAnswer, .brokenToMetadata,
        .startSlowestCall, .startSlowestCallBusy, .floorP50, .p50, .floorP99, .p99, .floorConcurrentP50, .concurrentP50, .concurrentP99,
        .concurrentShare, .playerctlStatus, .playPauseReply, .playPauseMedian, .playPauseP90, .seekPlaying, .seekPaused,
        .setPositionPlaying, .setPositionPaused,
        .rssIdle, .rssPlaying, .cpuPerMinute, .rssPlayingOgg, .cpuPerMinuteOgg, .rssPlayingMP3, .cpuPerMinuteMP3,
        .gaplessGap, .openToAudio,
    ]
    static let scan: [Metric] = [.scanCold, .scanWarm, .scanMemory]

    /// Files per second and the share of the bus's throughput: more is better. Everything else is a time, a size or
    /// a count of samples: less is better (for the gapless gap, nearer zero).
    var higherIsBetter: Bool { self == .scanCold || self == .scanWarm || self == .concurrentShare }

    /// The bus's own figure (GetId answered by dbus-daemon), measured in each player's session through the same
    /// client: a floor to read the player's figures against, not a player's figure, so it has no ratio.
    var isFloor: Bool { self == .floorP50 || self == .floorP99 || self == .floorConcurrentP50 }

    /// Counts (samples) print as integers with a sign.
    var isCount: Bool { self == .gaplessGap }

    func label(clients: Int) -> String {
        switch self {
        case .startup: "start-up to bus name (ms)"
        case .startupAnswer: "start-up to first answer, Get(PlaybackStatus) (ms)"
        case .coldStartup: "start-up to bus name, cold GStreamer registry (ms)"
        case .spawnToMetadata: "spawn with a FILE → Metadata shows the track (ms)"
        case .coldSpawnToMetadata: "spawn with a FILE → Metadata shows the track, cold GStreamer registry (ms)"
        case .brokenAnswer: "start with two broken files before a good one → first answer, Get(PlaybackStatus) (ms)"
        case .brokenToMetadata: "start with two broken files before a good one → Metadata shows the good one (ms)"
        case .startSlowestCall: "slowest MPRIS call in the first \(StartCalls.seconds) s of a start with a FILE (ms)"
        case .startSlowestCallBusy: "slowest MPRIS call in the first \(StartCalls.seconds) s of a start with a FILE, every CPU busy (ms)"
        case .floorP50: "bus floor: GetId p50, 1 client (µs)"
        case .floorP99: "bus floor: GetId p99, 1 client (µs)"
        case .p50: "Get(Position) p50, 1 client (µs)"
        case .p99: "Get(Position) p99, 1 client (µs)"
        case .floorConcurrentP50: "bus floor: GetId p50, \(clients) clients (µs)"
        case .concurrentP50: "Get(Position) p50, \(clients) clients (µs)"
        case .concurrentP99: "Get(Position) p99, \(clients) clients (µs)"
        case .concurrentShare: "Get(Position) calls/s, \(clients) clients, % of bus GetId calls/s (higher is better)"
        case .playerctlStatus: "playerctl status wall time (ms)"
        case .playPauseReply: "PlayPause → its reply, median (ms)"
        case .playPauseMedian: "PlayPause → PropertiesChanged, median (ms)"
        case .playPauseP90: "PlayPause → PropertiesChanged, p90 (ms)"
        case .seekPlaying: "Seek → Seeked, playing (ms)"
        case .seekPaused: "Seek → Seeked, paused (ms)"
        case .setPositionPlaying: "SetPosition → Seeked, playing (ms)"
        case .setPositionPaused: "SetPosition → Seeked, paused (ms)"
        case .rssIdle: "RSS idle (MiB)"
        case .rssPlaying: "RSS playing a WAV (MiB)"
        case .cpuPerMinute: "CPU per minute of playback, WAV (s)"
        case .rssPlayingOgg: "RSS playing an Ogg Vorbis (MiB)"
        case .cpuPerMinuteOgg: "CPU per minute of playback, Ogg Vorbis (s)"
        case .rssPlayingMP3: "RSS playing an MP3 (MiB)"
        case .cpuPerMinuteMP3: "CPU per minute of playback, MP3 (s)"
        case .gaplessGap: "gapless join: samples missing (-) or extra (+)"
        case .openToAudio: "open FILE → first audio (ms)"
        case .scanCold: "library scan, cold (files/s)"
        case .scanWarm: "library scan, warm (files/s)"
        case .scanMemory: "peak memory during scan (MB)"
        }
    }
}

/// Per player: every run's figure for each metric, why a figure cannot be had, or why the player could not be
/// measured at all.
struct Results: Sendable {
    var samples: [String: [Metric: [Double]]] = [:]
    /// A player that could not be measured at all, with why.
    var failures: [String: String] = [:]
    /// A figure a player cannot give ("n/a: …", "no signal"), by player and metric; shown instead of a number.
    var notes: [String: [Metric: String]] = [:]

    /// The median over runs, or nil.
    func median(_ player: String, _ metric: Metric) -> Double? {
        guard let values = samples[player]?[metric], !values.isEmpty else { return nil }
        return Stats.median(values)
    }

    mutating func add(_ player: String, _ figures: [Metric: Double]) {
        for (metric, value) in figures { samples[player, default: [:]][metric, default: []].append(value) }
    }

    mutating func note(_ player: String, _ metric: Metric, _ text: String) {
        notes[player, default: [:]][metric] = text
    }
}
