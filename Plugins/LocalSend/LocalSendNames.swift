/// What a sender's file name and type may be: the base name only (no folders, no `..`), and audio by name and type.
public enum LocalSendNames {
    /// Extensions of the audio (and MIDI) files the player takes.
    public static let audioExtensions: Set<String> = [
        "mp3", "m4a", "m4b", "aac", "flac", "ogg", "oga", "opus", "wav", "wave", "aif", "aiff", "aifc", "wma", "alac", "ape",
        "wv", "mka", "mpc", "spx", "mid", "midi", "kar", "caf", "ac3", "dsf", "dff", "tta", "mp2", "amr", "3ga",
    ]

    /// Types that say nothing against an audio file (senders often send no type or a generic one).
    static let neutralTypes: Set<String> = ["", "application/octet-stream", "binary/octet-stream", "application/ogg", "application/x-ogg",
                                            "application/x-flac", "application/flac", "video/ogg", "video/webm", "video/x-matroska"]

    /// The last path component with control characters replaced and leading dots removed; never empty, never `.`
    /// or `..`, never holding a slash or a backslash.
    public static func safeBaseName(_ name: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var clean = String(String.UnicodeScalarView(last.unicodeScalars.map {
            $0.properties.generalCategory == .control || $0 == ":" ? "_" : $0
        }))
        while clean.hasPrefix(".") { clean.removeFirst() }
        clean = clean.trimmingSpaces()
        if clean.isEmpty { clean = "received" }
        return clean
    }

    /// Why a file is not audio by its name and announced type, or nil when it may be.
    public static func notAudio(name: String, type: String) -> String? {
        let ext = name.split(separator: ".", omittingEmptySubsequences: false).count > 1
            ? String(name.split(separator: ".", omittingEmptySubsequences: false).last!).lowercased() : ""
        guard audioExtensions.contains(ext) else {
            return ext.isEmpty ? "not an audio file (no extension)" : "not an audio file (.\(ext))"
        }
        let kind = type.lowercased().split(separator: ";").first.map { String($0).trimmingSpaces() } ?? ""
        if kind.hasPrefix("audio/") || neutralTypes.contains(kind) { return nil }
        return "not an audio file (type \(kind))"
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
