import DBus
import NIOHTTP1
import DaemonHarness
import Foundation
import Glibc
import TestSupport
import Testing

/// The JSON API through a real HTTP client against the real daemon, checked against what MPRIS says.
@Suite(.serialized, .timeLimit(.minutes(4))) struct WebAPITests {
    @Test func commandsAndReadsAgreeWithMPRIS() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 120)
        let b = try d.sine("beta.wav", seconds: 60, frequency: 550)
        let web = try await WebRig.start([a, b], daemon: d)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        try await d.waitFor("alpha in the web face") { try await web.title() == "alpha" }

        // Read-your-writes: the answer and every face show the change as soon as the request returns.
        let paused = try await web.send(.POST, "/api/v1/player/pause")
        #expect(paused.status == 200)
        #expect(paused.object["status"] as? String == "Paused")
        #expect(try await d.status() == "Paused")

        let volume = try await web.send(.PUT, "/api/v1/player/volume", #"{"volume": 0.5}"#)
        #expect(volume.object["volume"] as? Double == 0.5)
        #expect(try await d.get("org.mpris.MediaPlayer2.Player", "Volume").doubleValue == 0.5)

        let sought = try await web.send(.POST, "/api/v1/player/seek", #"{"position": 30}"#)
        #expect(sought.status == 200)
        try await d.waitFor("position 30") { try await d.position() >= 29_900_000 }
        try await web.send(.POST, "/api/v1/player/seek", #"{"offset": -10}"#)
        try await d.waitFor("position 20") { (19_900_000..<29_000_000).contains(try await d.position()) }
        let position = try #require(try await web.state()["position"] as? Double)
        #expect(abs(position - Double(try await d.position()) / 1e6) < 0.5)

        for (body, loop) in [(#"{"loop": "Playlist"}"#, "Playlist"), (#"{"loop": "None"}"#, "None")] {
            try await web.send(.PUT, "/api/v1/player/loop", body)
            #expect(try await d.get("org.mpris.MediaPlayer2.Player", "LoopStatus").stringValue == loop)
        }
        try await web.send(.PUT, "/api/v1/player/shuffle", #"{"shuffle": true}"#)
        #expect(try await d.get("org.mpris.MediaPlayer2.Player", "Shuffle").boolValue == true)
        try await web.send(.PUT, "/api/v1/player/shuffle", #"{"shuffle": false}"#)
        try await web.send(.PUT, "/api/v1/player/replaygain", #"{"mode": "album"}"#)
        #expect(try await d.get("org.tonearm.Player1", "ReplayGainMode").stringValue == "album")

        // The equalizer: a preset, then bands and a preamp in one body; the state and the bus show it; bad values are 400.
        let eq = try await web.send(.PUT, "/api/v1/player/equalizer", #"{"equalizer": "voice"}"#)
        #expect((eq.object["equalizer"] as? [String: Any])?["equalizer"] as? String == "voice")
        #expect(try await d.get("org.tonearm.Player1", "Equalizer").stringValue == "voice")
        try await web.send(.PUT, "/api/v1/player/equalizer", #"{"equalizer": "bass", "bands": [0, 0, 0, 0, 0, 3, 0, 0, 0, 0], "preamp": -2}"#)
        let full = try await web.get("/api/v1/player/equalizer").object
        #expect(full["equalizer"] as? String == "custom" && full["preamp"] as? Double == -2)
        #expect((full["bands"] as? [Double])?[5] == 3 && (full["presets"] as? [String])?.first == "flat")
        #expect((full["frequencies"] as? [Double])?.count == 10)
        #expect(try await web.send(.PUT, "/api/v1/player/equalizer", #"{"bands": [1, 2]}"#).status == 400)
        #expect(try await web.send(.PUT, "/api/v1/player/equalizer", #"{"equalizer": "loud"}"#).status == 400)
        #expect(try await web.send(.PUT, "/api/v1/player/equalizer", #"{}"#).status == 400)
        try await web.send(.PUT, "/api/v1/player/equalizer", #"{"equalizer": "off"}"#)
        #expect(try await d.get("org.tonearm.Player1", "Equalizer").stringValue == "off")

        let toggled = try await web.send(.POST, "/api/v1/player/toggle")
        #expect(toggled.object["status"] as? String == "Playing")
        #expect(try await d.status() == "Playing")
        let next = try await web.send(.POST, "/api/v1/player/next")
        #expect((next.object["track"] as? [String: Any])?["title"] as? String == "beta")
        #expect(try await d.metadata()["xesam:title"]?.stringValue == "beta")
        try await web.send(.POST, "/api/v1/player/stop")
        #expect(try await d.status() == "Stopped")

        let outputs = try await web.get("/api/v1/outputs").object
        #expect(outputs["current"] as? String == "default")
        #expect(try await web.send(.PUT, "/api/v1/player/output", #"{"name": "nowhere"}"#).status == 404)
    }

    @Test func queueEditsShowInTheTrackList() async throws {
        let d = try Daemon()
        let files = try (0..<3).map { try d.sine("t\($0).wav", seconds: 30, frequency: 300 + 100 * Double($0)) }
        let web = try await WebRig.start([files[0], files[1]], daemon: d)
        try await d.waitFor("two entries") { try await d.tracks().count == 2 }

        let added = try await web.send(.POST, "/api/v1/queue", #"{"uris": ["\#(Daemon.uri(files[2]))", "file:///nowhere.ogg"], "at": "front"}"#)
        #expect(added.status == 201)
        let ids = try #require(added.object["ids"] as? [Int])
        #expect(ids.count == 1)
        let refused = try #require(added.object["refused"] as? [[String: Any]])
        #expect(refused.first?["uri"] as? String == "file:///nowhere.ogg")
        #expect((refused.first?["error"] as? [String: Any])?["error"] as? String == "org.tonearm.Error.NoSuchFile")
        let tracks = try await d.tracks()
        #expect(tracks.first?.hasSuffix("/\(ids[0])") == true)

        let queue = try await web.get("/api/v1/queue").object
        let entries = try #require(queue["tracks"] as? [[String: Any]])
        #expect(entries.map { $0["id"] as? Int } == tracks.map { Int($0.split(separator: "/").last!) })

        // The new front entry goes after the last one.
        let last = try #require(entries.last?["id"] as? Int)
        let moved = try await web.send(.POST, "/api/v1/queue/\(ids[0])/move", #"{"after": \#(last)}"#)
        #expect(moved.status == 200)
        #expect(try await d.tracks().last?.hasSuffix("/\(ids[0])") == true)

        let played = try await web.send(.POST, "/api/v1/queue/\(ids[0])/play")
        #expect((played.object["track"] as? [String: Any])?["id"] as? Int == ids[0])
        try await d.waitFor("the moved track plays") { try await d.trackID().hasSuffix("/\(ids[0])") }

        #expect(try await web.send(.DELETE, "/api/v1/queue/\(ids[0])").status == 204)
        #expect(try await d.tracks().count == 2)
        let missing = try await web.send(.DELETE, "/api/v1/queue/\(ids[0])")
        #expect(missing.status == 404)
        #expect(missing.contentType == "application/problem+json")
        #expect(missing.object["error"] as? String == "org.tonearm.Error.NoSuchTrack")

        #expect(try await web.send(.DELETE, "/api/v1/queue").status == 204)
        #expect(try await d.tracks() == [])
        #expect((try await web.get("/api/v1/queue").object["tracks"] as? [Any])?.isEmpty == true)
    }

    @Test func badInputGetsAProblemAndNothingBreaks() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 60)
        let web = try await WebRig.start([a], daemon: d)
        let cases: [(HTTPMethodName, String, String?, Int)] = [
            (.PUT, "/api/v1/player/volume", "{not json", 400),
            (.PUT, "/api/v1/player/volume", #"{"volume": "loud"}"#, 400),
            (.PUT, "/api/v1/player/volume", #"{"volume": 0.5, "extra": 1}"#, 400),
            (.PUT, "/api/v1/player/volume", "[1,2]", 400),
            (.PUT, "/api/v1/player/loop", #"{"loop": "Forever"}"#, 400),
            (.POST, "/api/v1/player/seek", #"{"position": -4}"#, 400),
            (.POST, "/api/v1/player/seek", #"{"position": 1, "offset": 1}"#, 400),
            (.POST, "/api/v1/queue", #"{"uris": []}"#, 400),
            (.POST, "/api/v1/queue", #"{"uris": ["file:///nowhere/at/all.ogg"]}"#, 404),
            (.POST, "/api/v1/queue", #"{"uris": ["ftp://example.invalid/a.ogg"]}"#, 400),
            (.POST, "/api/v1/queue/abc/play", nil, 400),
            (.POST, "/api/v1/queue/99999/play", nil, 404),
            (.GET, "/api/v1/art/cache/..%2F..%2F..%2Fetc%2Fpasswd", nil, 404),
            (.GET, "/api/v1/art/99999", nil, 404),
            (.GET, "/api/v1/library/search?limit=0", nil, 400),
            (.GET, "/api/v1/waveform/1?width=-3", nil, 400),
            (.POST, "/api/v1/shares/offers/none/accept", nil, 404),
        ]
        for (method, path, body, status) in cases {
            let answer = try await web.send(method.method, path, body)
            #expect(answer.status == status, "\(method) \(path) \(body ?? "")")
            #expect(answer.contentType == "application/problem+json", "\(path)")
            #expect((answer.object["error"] as? String)?.hasPrefix("org.tonearm.Error.") == true, "\(path): \(answer.body)")
        }
        let huge = String(repeating: " ", count: 100_000) + #"{"volume": 0.1}"#
        #expect(try await web.send(.PUT, "/api/v1/player/volume", huge).status == 413)

        // DNS rebinding and cross-site requests.
        #expect(try await web.get("/api/v1/state", headers: [("Host", "evil.example")]).status == 403)
        #expect(try await web.send(.POST, "/api/v1/player/pause", headers: [("Origin", "http://evil.example")]).status == 403)
        #expect(try await d.status() == "Playing")
        let own = web.base
        #expect(try await web.send(.POST, "/api/v1/player/pause", headers: [("Origin", own)]).status == 200)
        #expect(try await web.get("/api/v1/state", headers: [("Origin", "http://evil.example")]).status == 200)

        // Still up, and the file it was asked about untouched.
        #expect(try await d.status() == "Paused")
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
        #expect(try await web.get("/").status == 200)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderAndAReadSeesTheWriteBeforeIt() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 60)
        let web = try await WebRig.start([a], daemon: d)
        let port = try #require(Int(web.base.split(separator: ":").last ?? ""))
        let client = LoopbackSocket()
        defer { client.close() }
        try #require(client.connect(port: port))
        // The state reads are answered on the event loop, the volume by the router: in one write, the reads must
        // still wait for the write before them, and the last one's "Connection: close" must close the connection.
        let host = "Host: 127.0.0.1:\(port)\r\n"
        let volume = #"{"volume": 0.25}"#
        client.send("GET /api/v1/state HTTP/1.1\r\n\(host)\r\n"
            + "PUT /api/v1/player/volume HTTP/1.1\r\n\(host)Content-Type: application/json\r\nContent-Length: \(volume.utf8.count)\r\n\r\n\(volume)"
            + "GET /api/v1/state HTTP/1.1\r\n\(host)\r\n"
            + "GET /api/v1/state?fresh=1 HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
        let answers = try HTTPAnswers.parse(await client.received(seconds: 60))
        try #require(answers.count == 4, "answers: \(answers.map(\.status))")
        #expect(answers.map(\.status) == [200, 200, 200, 200])
        let volumes = answers.map { (($0.json["volume"] as? Double) ?? -1) }
        #expect(volumes[1] == 0.25 && volumes[2] == 0.25 && volumes[3] == 0.25, "volumes answered: \(volumes)")
        #expect(client.awaitEnd(seconds: 5) == 0, "the connection stayed open after Connection: close")
        #expect(answers[0].headers["content-type"] == "application/json" && answers[0].headers["date"] != nil)
        #expect(try await d.get("org.mpris.MediaPlayer2.Player", "Volume").doubleValue == 0.25)

        // A read alone, answered on the event loop, closes when asked to as well.
        let alone = LoopbackSocket()
        defer { alone.close() }
        try #require(alone.connect(port: port))
        alone.send("GET /api/v1/state HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")
        let answer = try HTTPAnswers.parse(await alone.received(seconds: 60))
        #expect(answer.map(\.status) == [200] && answer.first?.headers["connection"] == "close")
        #expect(alone.awaitEnd(seconds: 5) == 0, "the connection stayed open after Connection: close")
    }

    @Test func aClientThatNeverFinishesItsHeaderIsDropped() async throws {
        let web = try await WebRig.start()
        let port = try #require(Int(web.base.split(separator: ":").last ?? ""))
        let client = LoopbackSocket()
        defer { client.close() }
        try #require(client.connect(port: port))
        // Slowloris: a header begun and never finished.
        client.send("GET / HTTP/1.1\r\nHo")
        // Meanwhile everyone else is answered.
        #expect(try await web.get("/api/v1/state").status == 200)
        // The server closes it (after its 30 s header deadline): recv sees the end, not a timeout.
        let ended = await Task.detached { client.awaitEnd(seconds: 120) }.value
        #expect(ended == 0, "the connection was not closed by the server (recv: \(ended))")
        #expect(try await web.get("/api/v1/state").status == 200)
    }

    @Test func httpsWithTheConfiguredCertificate() async throws {
        let d = try Daemon()
        let key = d.home.file("web-key.pem").path, certificate = d.home.file("web-cert.pem").path
        let made = try await runProcess("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                                    "-days", "2", "-subj", "/CN=127.0.0.1"])
        try #require(made.status == 0, "\(made.err)")
        let web = try await WebRig.start(config: "[web]\ncertificate = \"\(certificate)\"\nkey = \"\(key)\"\n", daemon: d)
        #expect(web.base.hasPrefix("https://127.0.0.1:"))
        #expect(try await web.get("/api/v1/state").status == 200)
        #expect(try await web.get("/").body.contains("app.js"))
    }

    @Test func aPasswordGuardsEverythingButThePage() async throws {
        let web = try await WebRig.start(config: "[web]\npassword = \"s3cret\"\n")
        #expect(try await web.get("/").status == 200)
        #expect(try await web.get("/app.js").status == 200)
        #expect(try await web.get("/api/v1/state").status == 401)
        #expect(try await web.send(.POST, "/api/v1/player/play").status == 401)
        #expect(try await web.send(.POST, "/api/v1/login", #"{"password": "wrong"}"#).status == 401)
        let login = try await web.send(.POST, "/api/v1/login", #"{"password": "s3cret"}"#)
        #expect(login.status == 204)
        let cookie = try #require(login.headers["set-cookie"].first)
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let session = String(cookie.prefix { $0 != ";" })
        #expect(try await web.get("/api/v1/state", headers: [("Cookie", session)]).status == 200)
        #expect(try await web.get("/api/v1/state", headers: [("Cookie", "tonearm_session=forged")]).status == 401)
        #expect(try await web.get("/api/v1/state", headers: [("Authorization", "Bearer s3cret")]).status == 200)
        #expect(try await web.get("/api/v1/state", headers: [("Authorization", "Bearer s3cre")]).status == 401)
    }

    @Test func thePageAndTheContractAreServed() async throws {
        let web = try await WebRig.start()
        let page = try await web.get("/")
        #expect(page.status == 200)
        #expect(page.contentType.hasPrefix("text/html"))
        #expect(page.body.contains("app.js"))
        // Nothing is loaded from another host: the page works offline.
        for file in ["/", "/app.js", "/style.css"] {
            let text = try await web.get(file).body.replacingOccurrences(of: " ", with: "")
            for loads in ["src=\"http", "src='http", "href=\"http", "href='http", "url(http", "url(\"http", "@import", "fetch(\"http", "fetch('http"] {
                #expect(!text.contains(loads), "\(file) loads from another host: \(loads)")
            }
        }
        let tag = try #require(page.headers["etag"].first)
        #expect(try await web.get("/", headers: [("If-None-Match", tag)]).status == 304)
        #expect(try await web.send(.HEAD, "/").status == 200)
        #expect(try await web.send(.HEAD, "/api/v1/state").status == 200)
        let nowhere = try await web.get("/api/v1/nowhere")
        #expect(nowhere.status == 404 && nowhere.contentType == "application/problem+json")
        #expect(nowhere.object["error"] as? String == "org.tonearm.Error.NotFound")
        #expect(try await web.send(.OPTIONS, "/api/v1/state").status == 204)
        let contract = try await web.get("/api/v1/openapi.json")
        #expect(contract.object["openapi"] as? String == "3.1.0")
    }
}

/// HTTP methods by name, for the case tables.
enum HTTPMethodName: String {
    case GET, PUT, POST, DELETE
    var method: NIOHTTP1.HTTPMethod { NIOHTTP1.HTTPMethod(rawValue: rawValue) }
}

/// `tonearm web` and `tonearm doctor` about the web face.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WebCommandLineTests {
    /// A port nobody listens on now.
    static func freePort() -> Int {
        let socket = LoopbackSocket()
        defer { socket.close() }
        return socket.bindFreePort()
    }

    static func webCheck(_ d: Daemon) async throws -> [String: Any] {
        let out = try await d.tonearm("doctor", "--json").out
        let checks = (try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]]) ?? []
        return try #require(checks.first { $0["name"] as? String == "web" }, "\(out)")
    }

    @Test func webPrintsTheAddressAndDoctorFindsItServed() async throws {
        let d = try Daemon()
        let port = Self.freePort()
        d.webPort = nil
        let web = try await WebRig.start(config: "[web]\nport = \(port)\n", daemon: d)
        #expect(web.base == "http://127.0.0.1:\(port)")
        let printed = try await d.tonearm("web")
        #expect(printed.status == 0 && printed.out == "http://127.0.0.1:\(port)/", "\(printed)")
        let json = try await d.tonearm("web", "--json")
        #expect(json.out.contains("\"network\":false"), "\(json.out)")
        let check = try await Self.webCheck(d)
        #expect(check["verdict"] as? String == "ok" && (check["detail"] as? String)?.contains("served by the running tonearmd") == true, "\(check)")
    }

    @Test func doctorNamesAPortTakenByAnotherProgram() async throws {
        let d = try Daemon()
        // Another program holds the port the config names.
        let holder = LoopbackSocket()
        defer { holder.close() }
        let port = holder.bindFreePort(listening: true)
        try d.writeConfig("[web]\nport = \(port)\n")
        let check = try await Self.webCheck(d)
        #expect(check["verdict"] as? String == "failure", "\(check)")
        #expect((check["detail"] as? String)?.contains("taken by another program") == true, "\(check)")

        // The daemon starts all the same, says why there is no web face, and the rest works.
        d.webPort = nil
        try await d.start()
        try await d.waitFor("the web face's failure in the log") { d.log.contains("web face: cannot serve") }
        #expect(try await d.status() == "Stopped")
        #expect(try await d.tonearm("web").status != 0)
    }
}

/// HTTP/1.1 answers read off a raw socket, each with a Content-Length.
struct HTTPAnswers {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }

    static func parse(_ bytes: [UInt8]) throws -> [HTTPAnswers] {
        var answers: [HTTPAnswers] = []
        var rest = bytes[...]
        let separator: [UInt8] = [13, 10, 13, 10]
        while !rest.isEmpty {
            guard let end = rest.firstRange(of: separator) else { throw Failure("a header with no end: \(String(decoding: rest, as: UTF8.self))") }
            let head = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
            let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyEnd = min(rest.endIndex, end.upperBound + length)
            answers.append(HTTPAnswers(status: status, headers: headers, body: Array(rest[end.upperBound..<bodyEnd])))
            rest = rest[bodyEnd...]
        }
        return answers
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
