import Foundation
import Logging
import Playback
import Testing
import TonearmCore
@testable import Web

/// The OpenAPI document is the contract: every route it lists is served, every route served is listed; and the
/// guard's rules for hosts and origins, as a table.
@Suite struct ContractTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web/openapi.json")

    static func face(_ settings: WebSettings = WebSettings()) -> WebFace {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tonearm-web-contract")
        let player = Player(engine: DeferredEngine(output: .sink("fakesink")), plugins: [], stateStore: nil, artCache: ArtCache(folder: folder))
        return WebFace(settings: settings, player: player, library: nil, shares: nil, playlists: nil, waveforms: nil,
                       artFolder: folder, logger: Logger(label: "test"))
    }

    @Test func theServerServesExactlyTheRoutesTheDocumentLists() throws {
        let data = try Data(contentsOf: Self.document)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let servers = try #require(document["servers"] as? [[String: Any]])
        let prefix = try #require(servers.first?["url"] as? String)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var documented: Set<String> = []
        for (path, operations) in paths {
            for method in operations.keys where methods.contains(method) {
                documented.insert("\(method.uppercased()) \(prefix)\(path)")
            }
        }
        let page = PageFiles.names.map { "GET \($0)" }
        let served = Set(Self.face().routes()).subtracting(page)
        #expect(served.subtracting(documented).sorted() == [], "served but not in web/openapi.json")
        #expect(documented.subtracting(served).sorted() == [], "in web/openapi.json but not served")
    }

    @Test func theDocumentServedIsTheOneInTheRepository() throws {
        #expect(PackageResources.openapi_json == Array(try Data(contentsOf: Self.document)))
    }

    @Test(arguments: [
        ("127.0.0.1:6680", true), ("localhost:6680", true), ("[::1]:6680", true), ("LOCALHOST", true),
        ("192.168.1.20:6680", true), ("tonearm.localhost:1", true),
        ("evil.example:6680", false), ("127.0.0.1.evil.example", false), ("", false), ("music.home.arpa:6680", false),
    ])
    func hosts(_ host: String, _ allowed: Bool) {
        #expect(WebAccess(settings: WebSettings()).isAllowed(host: host) == allowed)
    }

    @Test func allowedHostsAreTaken() {
        var settings = WebSettings()
        settings.allowedHosts = ["music.home.arpa"]
        #expect(WebAccess(settings: settings).isAllowed(host: "music.home.arpa:6680"))
        #expect(!WebAccess(settings: settings).isAllowed(host: "other.home.arpa:6680"))
    }

    @Test(arguments: [
        ("http://127.0.0.1:6680", "127.0.0.1:6680", true), ("http://localhost:6680", "localhost:6680", true),
        ("https://music.home.arpa", "music.home.arpa", true), ("http://[::1]:6680", "[::1]:6680", true),
        ("http://evil.example", "127.0.0.1:6680", false), ("http://127.0.0.1:9999", "127.0.0.1:6680", false),
        ("null", "127.0.0.1:6680", false), ("file://", "127.0.0.1:6680", false),
        ("ws://127.0.0.1", "127.0.0.1:6680", true), ("ws://evil.example", "127.0.0.1:6680", false),
    ])
    func origins(_ origin: String, _ host: String, _ own: Bool) {
        #expect(WebAccess(settings: WebSettings()).isOwn(origin: origin, host: host) == own)
    }

    @Test func passwordsCompareWithoutShortcuts() async {
        var settings = WebSettings()
        settings.password = "s3cret"
        let access = WebAccess(settings: settings)
        #expect(await access.login("s3cret") != nil)
        #expect(await access.login("s3cre") == nil)
        #expect(WebAccess.same("a", "a") && !WebAccess.same("a", "b"))
    }

    @Test func settingsRefuseANetworkAddressWithoutAPassword() throws {
        #expect(throws: TonearmError.self) { try WebSettings.parse(["address": .string("0.0.0.0")], origin: "test") }
        let s = try WebSettings.parse(["address": .string("0.0.0.0"), "password": .string("x"), "port": .int(0)], origin: "test")
        #expect(!s.isLoopback && s.port == 0)
        #expect(throws: TonearmError.self) { try WebSettings.parse(["certificate": .string("/a.pem")], origin: "test") }
        #expect(throws: TonearmError.self) { try WebSettings.parse(["colour": .string("red")], origin: "test") }
    }

    @Test func jsonIsWrittenAsTheContractSays() {
        let value: JSON = ["a": nil, "b": .double(1.5), "c": .double(2), "d": .string("q\"\n\u{1}"), "e": [true, 3]]
        #expect(value.text == #"{"a":null,"b":1.5,"c":2,"d":"q\"\n\u0001","e":[true,3]}"#)
    }
}
