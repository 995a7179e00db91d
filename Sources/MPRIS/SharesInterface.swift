import DBus
import Foundation
import TonearmCore

/// The name of org.tonearm.Shares1.
enum SharesInterfaceName {
    static let name = "org.tonearm.Shares1"
}

/// org.tonearm.Shares1 over a shares plugin's Swift API, and "Open with" over the player.
struct SharesInterface<Shares: SharesAPI>: DBusInterfaceHandler {
    static var name: String { SharesInterfaceName.name }
    private let declared = Contract(SharesInterfaceName.name)
    var interface: DBusInterfaceDescription { declared.description }
    let shares: Shares
    let player: Player

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged(otherwise: .sharesFailed) {
            switch method {
            case "Open":
                let uris = a[0].arrayValue?.compactMap(\.stringValue) ?? []
                try Player.checkBatch(uris)
                let (ids, refused) = await player.open(uris)
                return [.objectPathArray(ids.map(\.path)),
                        .array(element: "(ss)", refused.map { .structure([.string($0.uri), .string($0.error.message)]) })]
            case "Export":
                let what = a[0].stringValue ?? ""
                var uri = what
                if what.hasPrefix("/org/") {
                    let id = TrackID(path: what)
                    guard let track = player.state.snapshot.tracks.first(where: { $0.id == id }) else { throw TonearmError.noSuchTrack(what) }
                    uri = track.uri
                }
                let id = try await shares.export(uri: uri, folder: a[1].stringValue ?? "", mode: a[2].stringValue ?? "")
                return [.string(id)]
            case "PendingOffers":
                return [.array(element: "(ssssa(sx))", await shares.pendingShareOffers().map(Self.encode))]
            case "AnswerOffer":
                let id = a[0].stringValue ?? ""
                guard await shares.answerOffer(id, accept: a[1].boolValue ?? false) else {
                    throw TonearmError(.noSuchOffer, "no offer waits with id \"\(id)\" (answered, cancelled or timed out)")
                }
                return []
            case "CancelExport":
                let id = a[0].stringValue ?? ""
                guard shares.cancelExport(id) else { throw TonearmError(.noSuchExport, "no export running with id \"\(id)\"") }
                return []
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    static func encode(_ offer: PendingShareOffer) -> DBusValue {
        .structure([.string(offer.id), .string(offer.sender), .string(offer.address), .string(offer.fingerprint),
                    .array(element: "(sx)", zip(offer.files, offer.sizes).map { .structure([.string($0), .int64($1)]) })])
    }

    func get(_ property: String) async throws -> DBusValue {
        guard property == "Inboxes" else { throw DBusError.unknownProperty(property) }
        return .stringArray(shares.inboxes.map(\.path))
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.unknownProperty(property)
    }

    /// Turns the plugin's events into Shares1 signals.
    static func forward(_ shares: Shares, on connection: DBusConnection, path: String) -> Task<Void, Never> {
        let subscription = shares.events.subscribe()
        return Task {
            defer { subscription.cancel() }
            for await item in subscription {
                let event = item.event
                let (member, arguments): (String, [DBusValue])
                switch event.shareSignal {
                case .received(let uri, let metadata):
                    var encoded = MetadataEncoding.encode(Track(id: .noTrack, metadata: metadata)).vardictValue ?? [:]
                    encoded["mpris:trackid"] = nil
                    (member, arguments) = ("Received", [.string(uri), .vardict(encoded)])
                case .rejected(let file, let reason):
                    (member, arguments) = ("Rejected", [.string(file), .string(reason)])
                case .exportProgress(let id, let fraction):
                    (member, arguments) = ("ExportProgress", [.string(id), .double(fraction)])
                case .exportFinished(let id, let file, let error):
                    (member, arguments) = ("ExportFinished", [.string(id), .string(file ?? ""), .string(error?.name ?? ""),
                                                              .string(error?.message ?? "")])
                case .offered(let offer):
                    guard case .structure(let fields) = encode(offer) else { continue }
                    (member, arguments) = ("Offered", fields)
                case .offerClosed(let id):
                    (member, arguments) = ("OfferClosed", [.string(id)])
                case .fromDevice(let sender, let address, let fingerprint, let fileName, let uri, let reason):
                    (member, arguments) = ("FromDevice", [.string(sender), .string(address), .string(fingerprint), .string(fileName),
                                                          .string(uri ?? ""), .string(reason ?? "")])
                }
                connection.emitSignal(path: path, interface: name, member: member, arguments: arguments)
            }
        }
    }

    /// Listens for senders that announce a finished transfer on the session bus: KDE Connect's share plugin
    /// (`shareReceived(url)`) and BlueZ obexd (`org.bluez.obex.Transfer1` Status "complete", then its Filename).
    static func listenToSenders(_ shares: Shares, on connection: DBusConnection) async -> Task<Void, Never>? {
        guard let kde = try? await connection.subscribe(DBusMatchRule(interface: "org.kde.kdeconnect.device.share", member: "shareReceived")),
              let obex = try? await connection.subscribe(DBusMatchRule(interface: "org.freedesktop.DBus.Properties",
                                                                       member: "PropertiesChanged", arg0: "org.bluez.obex.Transfer1"))
        else { return nil }
        return Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await signal in kde {
                        guard let text = signal.arguments.first?.stringValue else { continue }
                        let path = text.hasPrefix("/") ? text : (URL(string: text)?.isFileURL == true ? URL(string: text)!.path : nil)
                        if let path { shares.senderFinished(path) }
                    }
                }
                group.addTask {
                    for await signal in obex {
                        guard signal.arguments.count >= 2, signal.arguments[1].vardictValue?["Status"]?.stringValue == "complete" else { continue }
                        let filename = try? await connection.getProperty(destination: signal.sender, path: signal.path,
                                                                          interface: "org.bluez.obex.Transfer1", name: "Filename")
                        if let path = filename?.stringValue { shares.senderFinished(path) }
                    }
                }
            }
        }
    }
}
