import AsyncHTTPClient
import DBus
import DaemonHarness
import Foundation
import NIOCore
import TestSupport
import Testing

/// The page in Debian's headless Chromium (browser/page_check.py, through Selenium from scripts/web-venv), checked
/// against what the daemon says over MPRIS.
@Suite(.serialized, .timeLimit(.minutes(5))) struct BrowserTests {
    static let root: URL = {
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path), root.path != "/" {
            root = root.deletingLastPathComponent()
        }
        return root
    }()

    /// The venv's bin folder (scripts/web-venv makes it once).
    static let venv = SetupScript(root.appendingPathComponent("scripts/web-venv"))

    /// Where the screenshots go (the README shows them).
    static let screenshots = root.appendingPathComponent(".build/screenshots")

    /// Runs one scenario of page_check.py against `rig`; records its output when it fails.
    func page(_ rig: WebRig, _ scenario: String, _ arguments: [String] = []) async throws {
        let python = await Self.venv.output + "/python"
        try #require(FileManager.default.isExecutableFile(atPath: python), "scripts/web-venv did not make the venv")
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let script = Self.root.appendingPathComponent("Tests/WebTests/browser/page_check.py").path
        let (out, err, status) = try await runProcess(python, [script, scenario, "--url", rig.base + "/", "--screenshot", Self.screenshots.path] + arguments,
                                                      environment: rig.daemon.environment)
        #expect(status == 0, "\(scenario): \(out)\n\(err)\ndaemon log:\n\(rig.daemon.log.suffix(2000))")
        #expect(out.contains("ok:"), "\(scenario): \(out)")
    }

    @Test func thePageShowsWhatOpenUriStartedAndFollowsPlayerctl() async throws {
        let d = try Daemon()
        let a = try d.sine("alpha.wav", seconds: 120)
        let web = try await WebRig.start(daemon: d)
        _ = try await d.call("org.mpris.MediaPlayer2.Player", "OpenUri", [.string(Daemon.uri(a))])
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        try await page(web, "shows-track", ["--expect-title", "alpha"])

        try await d.playerctl("pause")
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        try await page(web, "play-click")
        #expect(try await d.status() == "Playing")
        try await page(web, "follows-pause")
        try await d.waitFor("Paused by playerctl") { try await d.status() == "Paused" }
        try await page(web, "crossfade-pick")
        #expect(try await d.get(Daemon.tonearm, "Crossfade") == .double(3))
    }

    @Test func draggingOnTheWaveformSeeksAndReorderingChangesTheTrackList() async throws {
        let d = try Daemon()
        let files = try (0..<3).map { try d.sine("t\($0).wav", seconds: 60, frequency: 300 + 100 * Double($0)) }
        let web = try await WebRig.start(files, daemon: d)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        try await page(web, "seek-drag")
        let before = try await d.tracks()
        try await page(web, "reorder")
        let after = try await d.tracks()
        #expect(after.first == before.last)
        try await page(web, "reorder", ["--by", "keys"])
    }

    @Test func narrowScreensAndAQuietConsole() async throws {
        let d = try Daemon()
        let a = try d.sine("Morning Light.wav", seconds: 90)
        let b = try d.sine(String(repeating: "A very long title that must wrap ", count: 4) + ".wav", seconds: 30)
        let web = try await WebRig.start([a, b], daemon: d)
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        try await page(web, "narrow")
        #expect(FileManager.default.fileExists(atPath: Self.screenshots.appendingPathComponent("web-phone.png").path))
        try await page(web, "console-clean")
    }

    @Test func acceptingAnOfferInThePageLandsTheFileInReceived() async throws {
        let d = try Daemon()
        let music = d.home.url.appendingPathComponent("Music")
        let received = music.appendingPathComponent("Received")
        try d.writeConfig("""
            [plugins.shares]
            inboxes = ["\(music.appendingPathComponent("Inbox").path)"]
            [plugins.localsend]
            enabled = true
            alias = "Tonearm test"
            accept = "ask"
            discovery = false
            protocol = "http"
            port = 0
            address = "127.0.0.1"
            """)
        let web = try await WebRig.start(daemon: d)
        try await d.waitFor("the LocalSend server") { d.log.contains("LocalSend: \"Tonearm test\" on port") }
        let portText = d.log.components(separatedBy: "LocalSend: \"Tonearm test\" on port ").last?.prefix { $0.isNumber } ?? ""
        let port = try #require(Int(portText))
        let song = try d.sine("Offered.wav", seconds: 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: song))
        let prepare = """
            {"info": {"alias": "Phone", "version": "2.1", "deviceModel": "test", "deviceType": "mobile", "fingerprint": "phone",
             "port": 53317, "protocol": "http", "download": false},
             "files": {"f1": {"id": "f1", "fileName": "Offered.wav", "size": \(bytes.count), "fileType": "audio/wav"}}}
            """
        // The sender waits for the user's answer: the page gives it.
        let sender = Task { () throws -> Data in
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/localsend/v2/prepare-upload")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: prepare))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
            let body = try await response.body.collect(upTo: 1 << 20)
            return Data(buffer: body)
        }
        try await d.waitFor("the offer in the web face") {
            ((try await web.get("/api/v1/shares").object["offers"] as? [Any]) ?? []).count == 1
        }
        // The page clicks Accept and waits for the file; the upload is sent once the sender hears the answer.
        let clicked = Task { try await page(web, "accept-offer", ["--received-dir", received.path, "--file", "Offered.wav"]) }
        let answer = (try JSONSerialization.jsonObject(with: try await sender.value) as? [String: Any]) ?? [:]
        let session = try #require(answer["sessionId"] as? String)
        let token = try #require((answer["files"] as? [String: String])?["f1"])
        var upload = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/localsend/v2/upload?sessionId=\(session)&fileId=f1&token=\(token)")
        upload.method = .POST
        upload.body = .bytes(ByteBuffer(data: bytes))
        let uploaded = try await HTTPClient.shared.execute(upload, timeout: .seconds(60))
        #expect(uploaded.status.code == 200)
        try await clicked.value
        #expect(FileManager.default.fileExists(atPath: received.appendingPathComponent("Offered.wav").path))
    }
}
