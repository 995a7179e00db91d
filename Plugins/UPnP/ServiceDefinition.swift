import XMLTree

/// One UPnP service as its SCPD describes it: the actions with their arguments and the state variables they relate
/// to. The SCPD served, the checks on a call's arguments and the error for an unknown action all read this table.
public struct ServiceDefinition: Sendable {
    /// A state variable: its UPnP data type, whether it is evented on its own (LastChange carries the others), and the
    /// values or range it takes.
    public struct Variable: Sendable {
        public var name: String
        public var type: String
        public var sendsEvents = false
        public var allowed: [String] = []
        public var range: ClosedRange<Int>? = nil
    }

    /// An action's in and out arguments, each as (argument, related state variable).
    public struct Action: Sendable {
        public var name: String
        public var inputs: [(String, String)]
        public var outputs: [(String, String)]
    }

    /// "AVTransport".
    public var name: String
    public var actions: [Action]
    public var variables: [Variable]

    /// urn:schemas-upnp-org:service:NAME:1
    public var type: String { "urn:schemas-upnp-org:service:\(name):1" }
    public var id: String { "urn:upnp-org:serviceId:\(name)" }
    public var scpdPath: String { "/upnp/\(name).xml" }
    public var controlPath: String { "/upnp/control/\(name)" }
    public var eventPath: String { "/upnp/event/\(name)" }

    public func action(_ name: String) -> Action? { actions.first { $0.name == name } }

    /// The service description document.
    public var scpd: String {
        var out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<scpd xmlns=\"urn:schemas-upnp-org:service-1-0\">"
            + "<specVersion><major>1</major><minor>0</minor></specVersion><actionList>"
        for action in actions {
            out += "<action><name>\(action.name)</name><argumentList>"
            for (argument, variable) in action.inputs {
                out += "<argument><name>\(argument)</name><direction>in</direction><relatedStateVariable>\(variable)</relatedStateVariable></argument>"
            }
            for (argument, variable) in action.outputs {
                out += "<argument><name>\(argument)</name><direction>out</direction><relatedStateVariable>\(variable)</relatedStateVariable></argument>"
            }
            out += "</argumentList></action>"
        }
        out += "</actionList><serviceStateTable>"
        for v in variables {
            out += "<stateVariable sendEvents=\"\(v.sendsEvents ? "yes" : "no")\"><name>\(v.name)</name><dataType>\(v.type)</dataType>"
            if !v.allowed.isEmpty {
                out += "<allowedValueList>" + v.allowed.map { "<allowedValue>\(xmlEscaped($0))</allowedValue>" }.joined() + "</allowedValueList>"
            }
            if let r = v.range {
                out += "<allowedValueRange><minimum>\(r.lowerBound)</minimum><maximum>\(r.upperBound)</maximum><step>1</step></allowedValueRange>"
            }
            out += "</stateVariable>"
        }
        return out + "</serviceStateTable></scpd>"
    }
}

extension ServiceDefinition {
    private static func v(_ name: String, _ type: String = "string", events: Bool = false, range: ClosedRange<Int>? = nil) -> Variable {
        Variable(name: name, type: type, sendsEvents: events, range: range)
    }

    /// A string variable of a fixed set of values.
    private static func v(_ name: String, _ allowed: [String]) -> Variable {
        Variable(name: name, type: "string", allowed: allowed)
    }

    private static func a(_ name: String, in inputs: [(String, String)] = [], out outputs: [(String, String)] = []) -> Action {
        Action(name: name, inputs: [("InstanceID", "A_ARG_TYPE_InstanceID")] + inputs, outputs: outputs)
    }

    /// The transport states this renderer reports.
    public static let transportStates = ["STOPPED", "PLAYING", "PAUSED_PLAYBACK", "TRANSITIONING", "NO_MEDIA_PRESENT"]
    /// The play modes it takes.
    public static let playModes = ["NORMAL", "SHUFFLE", "REPEAT_ONE", "REPEAT_ALL"]

    /// AVTransport:1, with the optional actions a phone app uses (Pause, Seek, Next, Previous, SetNextAVTransportURI,
    /// SetPlayMode, GetCurrentTransportActions).
    public static let avTransport = ServiceDefinition(name: "AVTransport", actions: [
        a("SetAVTransportURI", in: [("CurrentURI", "AVTransportURI"), ("CurrentURIMetaData", "AVTransportURIMetaData")]),
        a("SetNextAVTransportURI", in: [("NextURI", "NextAVTransportURI"), ("NextURIMetaData", "NextAVTransportURIMetaData")]),
        a("GetMediaInfo", out: [("NrTracks", "NumberOfTracks"), ("MediaDuration", "CurrentMediaDuration"),
                                ("CurrentURI", "AVTransportURI"), ("CurrentURIMetaData", "AVTransportURIMetaData"),
                                ("NextURI", "NextAVTransportURI"), ("NextURIMetaData", "NextAVTransportURIMetaData"),
                                ("PlayMedium", "PlaybackStorageMedium"), ("RecordMedium", "RecordStorageMedium"),
                                ("WriteStatus", "RecordMediumWriteStatus")]),
        a("GetTransportInfo", out: [("CurrentTransportState", "TransportState"), ("CurrentTransportStatus", "TransportStatus"),
                                    ("CurrentSpeed", "TransportPlaySpeed")]),
        a("GetPositionInfo", out: [("Track", "CurrentTrack"), ("TrackDuration", "CurrentTrackDuration"),
                                   ("TrackMetaData", "CurrentTrackMetaData"), ("TrackURI", "CurrentTrackURI"),
                                   ("RelTime", "RelativeTimePosition"), ("AbsTime", "AbsoluteTimePosition"),
                                   ("RelCount", "RelativeCounterPosition"), ("AbsCount", "AbsoluteCounterPosition")]),
        a("GetDeviceCapabilities", out: [("PlayMedia", "PossiblePlaybackStorageMedia"), ("RecMedia", "PossibleRecordStorageMedia"),
                                         ("RecQualityModes", "PossibleRecordQualityModes")]),
        a("GetTransportSettings", out: [("PlayMode", "CurrentPlayMode"), ("RecQualityMode", "CurrentRecordQualityMode")]),
        a("Stop"),
        a("Play", in: [("Speed", "TransportPlaySpeed")]),
        a("Pause"),
        a("Seek", in: [("Unit", "A_ARG_TYPE_SeekMode"), ("Target", "A_ARG_TYPE_SeekTarget")]),
        a("Next"),
        a("Previous"),
        a("SetPlayMode", in: [("NewPlayMode", "CurrentPlayMode")]),
        a("GetCurrentTransportActions", out: [("Actions", "CurrentTransportActions")]),
    ], variables: [
        v("TransportState", transportStates),
        v("TransportStatus", ["OK", "ERROR_OCCURRED"]),
        v("PlaybackStorageMedium", ["NETWORK", "NONE"]),
        v("RecordStorageMedium", ["NOT_IMPLEMENTED"]),
        v("PossiblePlaybackStorageMedia"),
        v("PossibleRecordStorageMedia"),
        v("CurrentPlayMode", playModes),
        v("TransportPlaySpeed", ["1"]),
        v("RecordMediumWriteStatus", ["NOT_IMPLEMENTED"]),
        v("CurrentRecordQualityMode", ["NOT_IMPLEMENTED"]),
        v("PossibleRecordQualityModes"),
        v("NumberOfTracks", "ui4", range: 0...10_000),
        v("CurrentTrack", "ui4", range: 0...10_000),
        v("CurrentTrackDuration"),
        v("CurrentMediaDuration"),
        v("CurrentTrackMetaData"),
        v("CurrentTrackURI"),
        v("AVTransportURI"),
        v("AVTransportURIMetaData"),
        v("NextAVTransportURI"),
        v("NextAVTransportURIMetaData"),
        v("RelativeTimePosition"),
        v("AbsoluteTimePosition"),
        v("RelativeCounterPosition", "i4"),
        v("AbsoluteCounterPosition", "i4"),
        v("CurrentTransportActions"),
        v("LastChange", events: true),
        v("A_ARG_TYPE_SeekMode", ["TRACK_NR", "REL_TIME", "ABS_TIME"]),
        v("A_ARG_TYPE_SeekTarget"),
        v("A_ARG_TYPE_InstanceID", "ui4"),
    ])

    /// RenderingControl:1: volume and mute on the Master channel, and the required presets.
    public static let renderingControl = ServiceDefinition(name: "RenderingControl", actions: [
        a("ListPresets", out: [("CurrentPresetNameList", "PresetNameList")]),
        a("SelectPreset", in: [("PresetName", "A_ARG_TYPE_PresetName")]),
        a("GetMute", in: [("Channel", "A_ARG_TYPE_Channel")], out: [("CurrentMute", "Mute")]),
        a("SetMute", in: [("Channel", "A_ARG_TYPE_Channel"), ("DesiredMute", "Mute")]),
        a("GetVolume", in: [("Channel", "A_ARG_TYPE_Channel")], out: [("CurrentVolume", "Volume")]),
        a("SetVolume", in: [("Channel", "A_ARG_TYPE_Channel"), ("DesiredVolume", "Volume")]),
    ], variables: [
        v("PresetNameList"),
        v("Mute", "boolean"),
        v("Volume", "ui2", range: 0...100),
        v("LastChange", events: true),
        v("A_ARG_TYPE_Channel", ["Master"]),
        v("A_ARG_TYPE_InstanceID", "ui4"),
        v("A_ARG_TYPE_PresetName", ["FactoryDefaults"]),
    ])

    /// ConnectionManager:1: what this renderer plays, and its one connection.
    public static let connectionManager = ServiceDefinition(name: "ConnectionManager", actions: [
        Action(name: "GetProtocolInfo", inputs: [], outputs: [("Source", "SourceProtocolInfo"), ("Sink", "SinkProtocolInfo")]),
        Action(name: "GetCurrentConnectionIDs", inputs: [], outputs: [("ConnectionIDs", "CurrentConnectionIDs")]),
        Action(name: "GetCurrentConnectionInfo", inputs: [("ConnectionID", "A_ARG_TYPE_ConnectionID")], outputs: [
            ("RcsID", "A_ARG_TYPE_RcsID"), ("AVTransportID", "A_ARG_TYPE_AVTransportID"),
            ("ProtocolInfo", "A_ARG_TYPE_ProtocolInfo"), ("PeerConnectionManager", "A_ARG_TYPE_ConnectionManager"),
            ("PeerConnectionID", "A_ARG_TYPE_ConnectionID"), ("Direction", "A_ARG_TYPE_Direction"),
            ("Status", "A_ARG_TYPE_ConnectionStatus"),
        ]),
    ], variables: [
        v("SourceProtocolInfo", events: true),
        v("SinkProtocolInfo", events: true),
        v("CurrentConnectionIDs", events: true),
        v("A_ARG_TYPE_ConnectionStatus", ["OK", "ContentFormatMismatch", "InsufficientBandwidth", "UnreliableChannel", "Unknown"]),
        v("A_ARG_TYPE_ConnectionManager"),
        v("A_ARG_TYPE_Direction", ["Input", "Output"]),
        v("A_ARG_TYPE_ProtocolInfo"),
        v("A_ARG_TYPE_ConnectionID", "i4"),
        v("A_ARG_TYPE_AVTransportID", "i4"),
        v("A_ARG_TYPE_RcsID", "i4"),
    ])

    public static let all = [avTransport, renderingControl, connectionManager]
}
