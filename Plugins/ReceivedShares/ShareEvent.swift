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
    /// A device offers files and waits for the user to accept or decline.
    case offered(ShareOffer)
    /// An offer is no longer waiting (answered, cancelled by the sender, or timed out).
    case offerClosed(id: String)
    /// A device sent a file: its name, and where it now is in the library (`uri`) or why it was refused (`reason`).
    case fromDevice(sender: ShareSender, fileName: String, uri: String?, reason: String?)
}

/// A device that sends files over the network: its name, address, and certificate fingerprint.
public struct ShareSender: Sendable, Equatable {
    public var name: String
    public var address: String
    /// The SHA-256 of its certificate when it showed one, else the fingerprint it claims.
    public var fingerprint: String

    public init(name: String, address: String, fingerprint: String) {
        self.name = name
        self.address = address
        self.fingerprint = fingerprint
    }
}

/// Files a device offers, waiting for the user.
public struct ShareOffer: Sendable, Equatable {
    public var id: String
    public var sender: ShareSender
    public var files: [(name: String, size: Int64)]

    public init(id: String, sender: ShareSender, files: [(name: String, size: Int64)]) {
        self.id = id
        self.sender = sender
        self.files = files
    }

    public static func == (a: ShareOffer, b: ShareOffer) -> Bool {
        a.id == b.id && a.sender == b.sender && a.files.map(\.name) == b.files.map(\.name) && a.files.map(\.size) == b.files.map(\.size)
    }
}

/// A receiver that asks the user before it takes files (LocalSend in ask mode).
public protocol ShareOfferSource: Sendable {
    /// Offers waiting now.
    func pendingOffers() async -> [ShareOffer]
    /// Answers an offer; false when none with that id waits.
    func answerOffer(_ id: String, accept: Bool) async -> Bool
}
