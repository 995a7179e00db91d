import DBus
import Foundation
import TonearmCore

/// org.tonearm.Browser1 over every source that has folders (`BrowsableSource`).
struct BrowserInterface: DBusInterfaceHandler {
    static let name = "org.tonearm.Browser1"
    private let declared = Contract(BrowserInterface.name)
    var interface: DBusInterfaceDescription { declared.description }
    let sources: [any BrowsableSource]
    let player: Player

    func call(_ method: String, _ a: [DBusValue], from sender: String) async throws -> [DBusValue] {
        try await bridged(otherwise: .browseFailed) {
            switch method {
            case "Roots":
                let roots = sources.flatMap(\.browseRoots)
                return [.array(element: "(ss)", roots.map { .structure([.string($0.id), .string($0.title)]) })]
            case "List":
                let (root, source) = try source(a)
                let entries = try await source.list(root: root, path: a[1].stringValue ?? "")
                return [.array(element: "a{sv}", entries.map(Self.encode))]
            case "Choose":
                let (root, source) = try source(a)
                try await source.choose(root: root, path: a[1].stringValue ?? "")
                return []
            case "Play":
                let (root, source) = try source(a)
                let path = a[1].stringValue ?? ""
                let entry = try await source.entry(root: root, path: path)
                guard let uri = entry.uri else {
                    let why = entry.extra["error"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "it cannot be played"
                    throw TonearmError(.unsupportedType, "cannot play \(path): \(why)")
                }
                try await player.replaceQueue([uri], play: true)
                try await source.choose(root: root, path: path)
                return []
            case "Resume":
                let (root, source) = try source(a)
                let place = try await source.resume(root: root)
                return [
                    .string(place.folder),
                    .array(element: "(ss)", place.trail.map { .structure([.string($0.name), .string($0.path)]) }),
                    .string(place.selected ?? ""),
                ]
            default:
                throw DBusError.unknownMethod(method)
            }
        }
    }

    /// The root named by the first argument and the source that offers it.
    private func source(_ a: [DBusValue]) throws -> (String, any BrowsableSource) {
        let root = a[0].stringValue ?? ""
        guard let source = sources.first(where: { $0.browseRoots.contains { $0.id == root } }) else {
            throw TonearmError.noSuchRoot(root, known: sources.flatMap(\.browseRoots).map(\.id))
        }
        return (root, source)
    }

    func get(_ property: String) async throws -> DBusValue {
        throw DBusError.unknownProperty(property)
    }

    func set(_ property: String, _ value: DBusValue) async throws {
        throw DBusError.unknownProperty(property)
    }

    static func encode(_ e: BrowseEntry) -> DBusValue {
        var d: [String: DBusValue] = [:]
        for (key, value) in e.extra { d[key] = encode(value) }
        d["name"] = .string(e.name)
        d["path"] = .string(e.path)
        d["folder"] = .bool(e.isFolder)
        if let uri = e.uri { d["uri"] = .string(uri) }
        if let title = e.title { d["title"] = .string(title) }
        if let artist = e.artist { d["artist"] = .string(artist) }
        if let album = e.album { d["album"] = .string(album) }
        if let duration = e.duration { d["duration"] = .double(duration) }
        return .vardict(d)
    }

    static func encode(_ value: BrowseValue) -> DBusValue {
        switch value {
        case .string(let s): .string(s)
        case .int(let n): .int32(Int32(clamping: n))
        case .double(let x): .double(x)
        case .bool(let b): .bool(b)
        case .strings(let list): .stringArray(list)
        }
    }
}
