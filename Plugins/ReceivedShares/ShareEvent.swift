import TonearmCore

/// What the plugin tells the bus face.
public enum ShareEvent: Sendable, Equatable {
    /// A file was accepted (or was already there, byte for byte): where it now is, and what it holds.
    case received(uri: String, metadata: TrackMetadata)
    /// A file was refused: where it now is (in the Rejected folder, or still in the inbox when copying), and why.
    case rejected(path: String, reason: String)
    /// An export made progress (0…1).
    case exportProgress(id: String, fraction: Double)
    /// An export ended: where the file now is, or why there is none.
    case exportFinished(id: String, path: String?, error: TonearmError?)
}
