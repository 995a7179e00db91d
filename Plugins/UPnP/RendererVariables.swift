import TonearmCore
import XMLTree

/// What the renderer itself remembers of the casts it queued: each entry's URI and the controller's own metadata,
/// and which entry was set as "next"; and the mute (Tonearm has a volume, not a mute).
public struct CastMemory: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var uri: String
        public var metadata: String
        /// Queued by SetNextAVTransportURI.
        public var isNext: Bool
    }

    public var entries: [TrackID: Entry] = [:]
    /// The volume before SetMute(1), while muted.
    public var volumeBeforeMute: Double?

    public init() {}

    /// Forgets entries no longer in the queue.
    public mutating func keep(only ids: [TrackID]) {
        let present = Set(ids)
        entries = entries.filter { present.contains($0.key) }
    }
}

/// The renderer's state variables, made from the published player state alone: the renderer shows the whole player
/// (a pause from MPRIS is PAUSED_PLAYBACK here too), and its LastChange events are the differences between two of
/// these.
public struct RendererVariables: Sendable, Equatable {
    /// AVTransport's evented variables, by name.
    public var transport: [String: String]
    /// RenderingControl's, by name.
    public var rendering: [String: String]
    /// Microseconds into the current track, and its length (for GetPositionInfo, never evented).
    public var position: Int64
    public var length: Int64?

    public init(_ state: PlayerState, memory: CastMemory, now: ContinuousClock.Instant = .now) {
        let s = state.snapshot
        let current = s.current
        let index = current.flatMap { c in s.tracks.firstIndex { $0.id == c.id } }
        let cast = current.flatMap { memory.entries[$0.id] }
        let next = s.nextID.flatMap { memory.entries[$0]?.isNext == true ? memory.entries[$0] : nil }
        var t: [String: String] = [:]
        if s.tracks.isEmpty {
            t["TransportState"] = "NO_MEDIA_PRESENT"
        } else {
            switch s.status {
            case .playing: t["TransportState"] = s.buffering < 100 ? "TRANSITIONING" : "PLAYING"
            case .paused: t["TransportState"] = "PAUSED_PLAYBACK"
            case .stopped: t["TransportState"] = "STOPPED"
            }
        }
        t["TransportStatus"] = "OK"
        t["PlaybackStorageMedium"] = s.tracks.isEmpty ? "NONE" : "NETWORK"
        t["PossiblePlaybackStorageMedia"] = "NETWORK"
        t["PossibleRecordStorageMedia"] = "NOT_IMPLEMENTED"
        t["RecordStorageMedium"] = "NOT_IMPLEMENTED"
        t["RecordMediumWriteStatus"] = "NOT_IMPLEMENTED"
        t["CurrentRecordQualityMode"] = "NOT_IMPLEMENTED"
        t["PossibleRecordQualityModes"] = "NOT_IMPLEMENTED"
        t["CurrentPlayMode"] = Self.playMode(loop: s.loop, shuffle: s.shuffle)
        t["TransportPlaySpeed"] = "1"
        t["NumberOfTracks"] = String(s.tracks.count)
        t["CurrentTrack"] = index.map { String($0 + 1) } ?? "0"
        let length = current?.metadata.isLive == true ? nil : current?.metadata.length
        t["CurrentTrackDuration"] = UPnPTime.text(length)
        t["CurrentMediaDuration"] = UPnPTime.text(length)
        let trackURI = current.map { DIDLLite.isWebURL($0.uri) ? $0.uri : "" } ?? ""
        let trackMetadata = current.map { DIDLLite.document($0.metadata, id: $0.id.path, mimeType: nil) } ?? ""
        t["CurrentTrackURI"] = trackURI
        t["CurrentTrackMetaData"] = trackMetadata
        t["AVTransportURI"] = cast?.uri ?? trackURI
        t["AVTransportURIMetaData"] = cast.map { $0.metadata.isEmpty ? trackMetadata : $0.metadata } ?? trackMetadata
        t["NextAVTransportURI"] = next?.uri ?? ""
        t["NextAVTransportURIMetaData"] = next?.metadata ?? ""
        var actions: [String] = []
        if current != nil {
            actions += s.status == .playing ? ["Pause", "Stop"] : ["Play", "Stop"]
            if s.canSeek { actions.append("Seek") }
        }
        if s.canGoNext { actions.append("Next") }
        if s.canGoPrevious { actions.append("Previous") }
        t["CurrentTransportActions"] = actions.joined(separator: ",")
        transport = t
        let volume = Int((s.volume * 100).rounded())
        rendering = ["Volume": String(volume), "Mute": memory.volumeBeforeMute != nil && volume == 0 ? "1" : "0",
                     "PresetNameList": "FactoryDefaults"]
        position = current == nil || s.status == .stopped ? 0 : state.position.position(at: now)
        self.length = length
    }

    static func playMode(loop: LoopStatus, shuffle: Bool) -> String {
        switch loop {
        case .track: return "REPEAT_ONE"
        case .playlist: return "REPEAT_ALL"
        case .none: return shuffle ? "SHUFFLE" : "NORMAL"
        }
    }

    /// The variables of a service's LastChange (nil for ConnectionManager, which has none).
    public func lastChangeVariables(_ service: String) -> [String: String]? {
        switch service {
        case "AVTransport": return transport.filter { !Self.notEvented.contains($0.key) }
        case "RenderingControl": return rendering
        default: return nil
        }
    }

    /// Changing every second or standing for a controller's own request: never in LastChange (UPnP AVTransport 2.2.x).
    static let notEvented: Set<String> = ["RelativeTimePosition", "AbsoluteTimePosition"]

    /// A LastChange document with `variables` of the service's instance 0.
    public static func lastChange(_ service: String, _ variables: [String: String]) -> String {
        let namespace = service == "RenderingControl" ? "urn:schemas-upnp-org:metadata-1-0/RCS/" : "urn:schemas-upnp-org:metadata-1-0/AVT/"
        var out = "<Event xmlns=\"\(namespace)\"><InstanceID val=\"0\">"
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) {
            let channel = name == "Volume" || name == "Mute" ? " channel=\"Master\"" : ""
            out += "<\(name)\(channel) val=\"\(xmlEscaped(value))\"/>"
        }
        return out + "</InstanceID></Event>"
    }

    /// The variables of `service` whose values differ from `old`'s.
    public func changes(_ service: String, since old: RendererVariables) -> [String: String] {
        guard let mine = lastChangeVariables(service), let theirs = old.lastChangeVariables(service) else { return [:] }
        return mine.filter { theirs[$0.key] != $0.value }
    }
}
