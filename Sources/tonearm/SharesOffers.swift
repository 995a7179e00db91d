import ArgumentParser
import DBus
import Foundation

/// One offer from a network sender, as `PendingOffers` lists it.
struct ShareOfferEntry {
    var id: String, sender: String, address: String, fingerprint: String
    var files: [(name: String, size: Int64)]

    init?(_ value: DBusValue) {
        guard case .structure(let f) = value.unwrapped, f.count == 5, let id = f[0].stringValue, let sender = f[1].stringValue,
              let address = f[2].stringValue, let fingerprint = f[3].stringValue else { return nil }
        self.id = id
        self.sender = sender
        self.address = address
        self.fingerprint = fingerprint
        files = (f[4].arrayValue ?? []).compactMap { item in
            guard case .structure(let p) = item.unwrapped, p.count == 2, let name = p[0].stringValue, let size = p[1].int64Value else { return nil }
            return (name, size)
        }
    }
}

extension SharesClient {
    func pendingOffers() async throws -> [ShareOfferEntry] {
        let reply = try await connection.call(destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
                                              member: "PendingOffers", arguments: [])
        return (reply.first?.arrayValue ?? []).compactMap(ShareOfferEntry.init)
    }

    func answerOffer(_ id: String, accept: Bool) async throws {
        _ = try await connection.call(destination: PlayerClient.busName, path: PlayerClient.objectPath, interface: Self.interface,
                                      member: "AnswerOffer", arguments: [.string(id), .bool(accept)])
    }
}

/// `tonearm shares pending|accept|decline`: answering devices that want to send songs (LocalSend in ask mode).
struct Shares: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shares",
        abstract: "Answer devices that want to send songs (LocalSend, accept = \"ask\").",
        discussion: """
            A phone that sends to Tonearm in ask mode waits until the offer is accepted or declined here \
            (or until [plugins.localsend] ask-seconds pass, which declines it). `pending` lists the \
            offers: id, sender, address, certificate fingerprint and files. Accepting a sender that \
            showed a certificate pairs it, for accept = "paired".
            """,
        subcommands: [SharesPending.self, SharesAccept.self, SharesDecline.self],
        defaultSubcommand: SharesPending.self
    )
}

struct SharesPending: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pending", abstract: "List offers waiting for an answer.")

    @OptionGroup var output: JSONOption

    func run() async throws {
        let offers = try await SharesClient(player: try await PlayerClient.connectToRunningDaemon()).pendingOffers()
        if output.json {
            Output.line(JSONValue.array(offers.map { o in
                .object([("id", .string(o.id)), ("sender", .string(o.sender)), ("address", .string(o.address)),
                         ("fingerprint", .string(o.fingerprint)),
                         ("files", .array(o.files.map { .object([("name", .string($0.name)), ("size", .integer($0.size))]) }))])
            }).serialized)
            return
        }
        if offers.isEmpty {
            Output.line("no offers waiting")
            return
        }
        for o in offers {
            let total = o.files.reduce(Int64(0)) { $0 + $1.size }
            Output.line("\(o.id)  \(o.sender) (\(o.address)): \(o.files.count) file\(o.files.count == 1 ? "" : "s"), \(ByteCountFormatter.string(fromByteCount: total, countStyle: .file))")
            for f in o.files { Output.line("    \(f.name)") }
            Output.line("    fingerprint \(o.fingerprint)")
        }
    }
}

/// Resolves "the one offer" when no id is given.
private func offerID(_ given: String?, _ shares: SharesClient) async throws -> String {
    if let given { return given }
    let offers = try await shares.pendingOffers()
    guard offers.count == 1 else {
        throw CLIFailure.refused(offers.isEmpty ? "no offers waiting" : "\(offers.count) offers wait: name one (tonearm shares pending)")
    }
    return offers[0].id
}

struct SharesAccept: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "accept", abstract: "Let a device send its files (the only offer when no id is given).")

    @Argument(help: "The offer's id, from `tonearm shares pending`.")
    var id: String?

    func run() async throws {
        let shares = SharesClient(player: try await PlayerClient.connectToRunningDaemon())
        try await shares.answerOffer(try await offerID(id, shares), accept: true)
    }
}

struct SharesDecline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decline", abstract: "Refuse a device's files (the only offer when no id is given).")

    @Argument(help: "The offer's id, from `tonearm shares pending`.")
    var id: String?

    func run() async throws {
        let shares = SharesClient(player: try await PlayerClient.connectToRunningDaemon())
        try await shares.answerOffer(try await offerID(id, shares), accept: false)
    }
}
