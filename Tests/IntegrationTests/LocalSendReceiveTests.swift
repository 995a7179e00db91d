import DBus
import DaemonHarness
import Foundation
import TestSupport
import Testing

/// LocalSend senders nobody here wrote (localsend-cli, localsendd from PyPI, pinned) and hand-made requests against
/// the real daemon, each in a network namespace with only loopback.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LocalSendReceiveTests {
    static let api = "/api/localsend/v2"

    @Test func oneSongFromLocalsendCliLandsInReceivedAndPlays() async throws {
        let rig = try await LocalSendRig("accept = \"open\"")
        let song = try rig.song("Morning.wav", seed: 1, seconds: 1.5)
        let changes = try await SignalRecorder(rig.d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let sent = try await rig.inside(rig.bin + "/localsend-cli", ["send", "127.0.0.1", song, "--json"])
        #expect(sent.status == 0, "\(sent.out)\n\(sent.err)")
        #expect(sent.out.contains("\"event\": \"sent\""), "\(sent.out)")
        let stored = rig.received.appendingPathComponent("Morning.wav")
        try await rig.d.waitFor("the song in Received") { rig.fromDevice.count == 1 }
        #expect(FileManager.default.contentsEqual(atPath: stored.path, andPath: song))
        let from = try #require(rig.fromDevice.first)
        #expect(from.sender.hasPrefix("localsend-cli@") && from.name == "Morning.wav" && from.reason.isEmpty)
        #expect(from.uri == URL(fileURLWithPath: stored.path).absoluteString)
        // FromDevice answers the sender once the file is stored; Received follows once the library has it.
        try await rig.d.waitFor("Received") { !rig.recorder.named("Received").isEmpty }
        #expect(rig.recorder.named("Received").first?.arguments.first?.stringValue == from.uri)
        // on-receive = play (the default): it plays now, to its end.
        try await rig.d.waitFor("the received song playing") { try await rig.d.metadata()["xesam:url"]?.stringValue == from.uri }
        try await rig.d.waitForTheEnd("the song played to its end", after: changes)
        // SIGTERM takes the graceful path through the LocalSend server too.
        #expect(await rig.d.terminate() == 0)
        #expect(rig.d.log.contains("LocalSend server") == false, "\(rig.d.log.suffix(1500))")
        let rendered = try rig.d.rendering(rig.out).mono
        let audible = try #require(AudioCheck.trimmedRange(rendered))
        let seconds = Double(audible.count) / 11025
        #expect(abs(seconds - 1.5) < 0.2, "rendered \(seconds) s of the 1.5 s song")
        #expect(rig.files(rig.staging).isEmpty)
    }

    @Test func severalSongsLeaveOutNonAudioAndStoreDuplicatesOnce() async throws {
        let rig = try await LocalSendRig("accept = \"open\"", sink: false)
        let songs = try (1...3).map { try rig.song("Track \($0).wav", seed: $0) }
        let copy = rig.d.media.file("Copy of 1.wav")
        try FileManager.default.copyItem(atPath: songs[0], toPath: copy.path)
        let notes = rig.d.media.file("notes.txt")
        try Data("not a song".utf8).write(to: notes)
        let sent = try await rig.inside(rig.bin + "/localsend-cli", ["send", "127.0.0.1"] + songs + [copy.path, notes.path, "--json"])
        #expect(sent.status == 0, "\(sent.out)\n\(sent.err)")
        try await rig.d.waitFor("five answers") { rig.fromDevice.count == 5 }
        // The sender uploads in the order of its tokens: whichever of the two identical files came first is stored.
        let stored = rig.files(rig.received)
        #expect(stored.count == 3 && stored.contains("Track 2.wav") && stored.contains("Track 3.wav"), "\(stored)")
        #expect(stored.contains("Track 1.wav") != stored.contains("Copy of 1.wav"), "\(stored)")
        let byName = Dictionary(rig.fromDevice.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byName["notes.txt"]?.reason == "not an audio file (.txt)")
        #expect(byName["notes.txt"]?.uri == "")
        #expect(byName["Copy of 1.wav"]?.uri == byName["Track 1.wav"]?.uri, "the duplicate points at the stored song")
        #expect(byName["Track 2.wav"]?.reason == "" && byName["Track 3.wav"]?.uri.hasSuffix("Track%203.wav") == true)
        // Playing the first, the others queued after it, in the order they were taken.
        try await rig.d.waitFor("all three in the queue") { try await rig.d.tracks().count >= 3 }

        // Offered again (by its SHA-256), a stored song is not sent: 204, and FromDevice points at the stored file.
        let list = rig.d.home.url.appendingPathComponent("data/tonearm/localsend/stored.txt")
        try await rig.d.waitFor("the stored songs remembered") {
            ((try? String(contentsOf: list, encoding: .utf8)) ?? "").split(separator: "\n").count == 3
        }
        let again = try await rig.inside(rig.bin + "/localsend-cli", ["send", "127.0.0.1", songs[1], "--json"])
        #expect(again.out.contains("nothing to transfer (204)"), "\(again.out)\n\(again.err)")
        try await rig.d.waitFor("the sixth answer") { rig.fromDevice.count == 6 }
        #expect(rig.fromDevice.last?.uri == byName["Track 2.wav"]?.uri && rig.fromDevice.last?.reason == "")
        #expect(rig.files(rig.received).count == 3)
    }

    @Test func discoveryRegisterAndPinWithLocalsendd() async throws {
        let rig = try await LocalSendRig("accept = \"pin\"\npin = \"4321\"", sink: false)
        let sender = try rig.spawn(rig.bin + "/localsendd", ["--port", "53318", "--alias", "Sender", "--download-dir",
                                                             rig.d.home.file("sender-dl").path, "--log-level", "debug"], log: "localsendd.log")
        defer { sender.kill() }
        // localsendd announces on the group; Tonearm registers with it over HTTPS (and the other way round).
        var devices = ""
        let found = try await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            devices = (try await rig.inside(rig.bin + "/localsendctl", ["devices", "--json"])).out
            return devices.contains("Tonearm test")
        }
        #expect(found, "localsendd never saw Tonearm: \(devices)\n\(rig.d.log.suffix(2000))")
        try #require(found)
        // Tonearm heard localsendd's announcement and registered with it over HTTPS (in a namespace with only
        // loopback the datagram's source address is 0.0.0.0, which reaches the local host too).
        try await rig.d.waitFor("Tonearm registered with localsendd") { rig.d.log.contains(":53318: HTTP 200") && rig.d.log.contains("registered with Sender at ") }
        let status = try await rig.inside(rig.bin + "/localsendctl", ["status", "--json"])
        let me = (try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any])?["self"] as? [String: Any]
        let senderFingerprint = try #require(me?["fingerprint"] as? String)

        let song = try rig.song("Pinned.wav", seed: 4)
        func send(_ pin: String) async throws -> String {
            let r = try await rig.inside(rig.bin + "/localsendctl", ["send", "--to", "Tonearm test", "--pin", pin, "--wait", "--quiet", song])
            return r.out + r.err
        }
        let good = try await send("4321")
        #expect(good.contains("Last result: sent"), "\(good)")
        try await rig.d.waitFor("the song in Received") { rig.fromDevice.count == 1 }
        // The sender's identity is its certificate's, not a JSON claim.
        #expect(rig.fromDevice.first?.fingerprint == senderFingerprint)
        #expect(rig.files(rig.received) == ["Pinned.wav"])
        for _ in 0..<3 {
            let wrong = try await send("0000")
            #expect(wrong.contains("pin_required"), "\(wrong)")
        }
        let locked = try await send("4321")
        #expect(locked.contains("rate_limited"), "three wrong PINs lock the address out: \(locked)")
        #expect(rig.files(rig.received) == ["Pinned.wav"])
    }

    @Test func itsDeviceInfoGoesOutOnTheMulticastGroup() async throws {
        let rig = try await LocalSendRig("accept = \"ask\"", sink: false)
        let info = try await rig.probe(["GET", "\(Self.api)/info"])
        let fingerprint = try #require(info.body["fingerprint"] as? String)
        // A device announces itself with a port nothing listens on, so registering with it over HTTP fails and
        // Tonearm answers on the group: the datagram a phone's LocalSend app reads.
        let script = rig.d.home.file("listener.py")
        try Self.groupListener.write(to: script, atomically: true, encoding: .utf8)
        let heard = try await rig.inside(rig.bin + "/python", [script.path, String(try freeLoopbackPort())])
        try #require(heard.status == 0, "no answer on the group: \(heard)\n\(rig.d.log.suffix(3000))")
        let message = try #require(try JSONSerialization.jsonObject(with: Data(heard.out.utf8)) as? [String: Any], "\(heard)")
        #expect(message["alias"] as? String == "Tonearm test")
        #expect(message["fingerprint"] as? String == fingerprint, "the certificate's fingerprint, as /info gives it")
        #expect(message["version"] as? String == "2.1" && message["deviceModel"] as? String == "Tonearm")
        #expect(message["deviceType"] as? String == "desktop" && message["protocol"] as? String == "https")
        #expect(message["port"] as? Int == 53317 && message["download"] as? Bool == false)
        #expect(rig.d.log.contains("answering on the multicast group"))
        // A device that cannot be reached is no harm: the player goes on (this once crashed a debug build).
        #expect(try await rig.d.status() == "Stopped")
    }

    /// Joins the LocalSend group on loopback, announces a device whose port (argv[1]) is closed, and prints the first
    /// answer (a datagram of another device with announce false; Tonearm's own announcements at start are let by).
    static let groupListener = #"""
        import json, socket, struct, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("0.0.0.0", 53317))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("4s4s", socket.inet_aton("224.0.0.167"), socket.inet_aton("127.0.0.1")))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        s.settimeout(1)
        me = {"alias": "Listener", "version": "2.1", "deviceModel": "test", "deviceType": "headless", "fingerprint": "listener",
              "port": int(sys.argv[1]), "protocol": "http", "download": False, "announce": True, "announcement": True}
        deadline, next_announcement = time.time() + 90, 0
        while time.time() < deadline:
            if time.time() >= next_announcement:  # once a second (our own datagrams come back to us too)
                s.sendto(json.dumps(me).encode(), ("224.0.0.167", 53317))
                next_announcement = time.time() + 1
            try:
                data, _ = s.recvfrom(65536)
                message = json.loads(data)
                if message.get("fingerprint") != "listener" and not message.get("announce"):
                    print(json.dumps(message)); sys.exit(0)
            except (socket.timeout, ValueError):
                pass
        sys.exit(1)
        """#

    @Test func askModeWaitsForTheCommandLine() async throws {
        let rig = try await LocalSendRig("accept = \"ask\"", sink: false)
        let sender = try rig.spawn(rig.bin + "/localsendd", ["--port", "53318", "--alias", "Asker", "--download-dir",
                                                             rig.d.home.file("sender-dl").path], log: "localsendd.log")
        defer { sender.kill() }
        let found = try await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            (try await rig.inside(rig.bin + "/localsendctl", ["devices", "--json"])).out.contains("Tonearm test")
        }
        try #require(found)
        let none = try await rig.d.tonearm("shares", "accept")
        #expect(none.status != 0)
        let song = try rig.song("Asked.wav", seed: 5)

        let first = Task { try await rig.inside(rig.bin + "/localsendctl", ["send", "--to", "Tonearm test", "--wait", "--quiet", song]) }
        try await rig.d.waitFor("the offer") { !rig.recorder.named("Offered").isEmpty }
        let offered = rig.recorder.named("Offered")[0].arguments
        #expect(offered[1].stringValue == "Asker")
        let pending = try await rig.d.tonearm("shares", "pending", "--json")
        #expect(pending.out.contains("\"sender\":\"Asker\"") && pending.out.contains("Asked.wav"), "\(pending.out)")
        let text = try await rig.d.tonearm("shares", "pending")
        #expect(text.out.contains("Asker (127.0.0.1): 1 file"), "\(text.out)")
        #expect(rig.files(rig.received).isEmpty, "nothing is taken before the user answers")
        let accepted = try await rig.d.tonearm("shares", "accept", offered[0].stringValue ?? "")
        #expect(accepted.status == 0, "\(accepted.out)")
        let result = try await first.value
        #expect((result.out + result.err).contains("Last result: sent"), "\(result)")
        try await rig.d.waitFor("the song in Received") { rig.files(rig.received) == ["Asked.wav"] }
        // Accepting a sender that showed a certificate pairs it.
        let paired = try String(contentsOf: rig.d.home.url.appendingPathComponent("data/tonearm/localsend/paired.txt"), encoding: .utf8)
        #expect(paired.count >= 64)

        let other = try rig.song("Declined.wav", seed: 6)
        let second = Task { try await rig.inside(rig.bin + "/localsendctl", ["send", "--to", "Tonearm test", "--wait", "--quiet", other]) }
        try await rig.d.waitFor("the second offer") { rig.recorder.named("Offered").count == 2 }
        let declined = try await rig.d.tonearm("shares", "decline")
        #expect(declined.status == 0, "\(declined.out)")
        let refused = try await second.value
        #expect((refused.out + refused.err).contains("declined"), "\(refused)")
        #expect(rig.recorder.named("OfferClosed").count == 2)
        #expect(rig.files(rig.received) == ["Asked.wav"])
    }

    @Test func anOfferEndsWhenItsSenderLeaves() async throws {
        // Long enough that only the sender's leaving can end the offer within the test.
        let rig = try await LocalSendRig("accept = \"ask\"\nask-seconds = 3600", sink: false)
        let song = try rig.song("Left.wav", seed: 8)
        let sender = try rig.spawnProbe(["POST", "\(Self.api)/prepare-upload", "--json", try Self.prepareBody(name: "Left.wav", path: song)],
                                        log: "left-sender.log")
        defer { sender.kill() }
        try await rig.d.waitFor("the offer") { rig.recorder.named("Offered").count == 1 }
        sender.kill()  // the sender gives up waiting: its connection closes
        try await rig.d.waitFor("the offer closed when its sender left") { rig.recorder.named("OfferClosed").count == 1 }
        let pending = try await rig.d.tonearm("shares", "pending", "--json")
        #expect(!pending.out.contains("Left.wav"), "\(pending.out)")
        // The next sender is asked, not turned away as a second session (409).
        let next = Task { try await Self.prepare(rig, name: "Next.wav", path: song) }
        try await rig.d.waitFor("the next offer") { rig.recorder.named("Offered").count == 2 }
        #expect(try await rig.d.tonearm("shares", "decline").status == 0)
        #expect(try await next.value.status == 403)
        #expect(rig.files(rig.received).isEmpty && rig.files(rig.staging).isEmpty)
    }

    @Test func pairedModeTakesOnlyCertificatesAcceptedBefore() async throws {
        // localsendd's certificate made beforehand (where it looks for it), and its fingerprint listed as paired, as
        // accepting it once in ask mode would have done.
        var fingerprint = ""
        let rig = try await LocalSendRig("accept = \"paired\"", sink: false) { d in
            let state = d.home.url.appendingPathComponent("state/localsendd")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let made = try await runProcess("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=LocalSend",
                                                                 "-keyout", state.appendingPathComponent("key.pem").path,
                                                                 "-out", state.appendingPathComponent("cert.pem").path])
            try #require(made.status == 0, "\(made.err)")
            let print = try await runProcess("/usr/bin/openssl", ["x509", "-in", state.appendingPathComponent("cert.pem").path, "-noout",
                                                                  "-fingerprint", "-sha256"])
            fingerprint = String(print.out.split(separator: "=").last ?? "").replacingOccurrences(of: ":", with: "")
            let storage = d.home.url.appendingPathComponent("data/tonearm/localsend")
            try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
            try (fingerprint + "\n").write(to: storage.appendingPathComponent("paired.txt"), atomically: true, encoding: .utf8)
        }
        #expect(fingerprint.count == 64)
        let sender = try rig.spawn(rig.bin + "/localsendd", ["--port", "53318", "--alias", "Known", "--download-dir",
                                                             rig.d.home.file("sender-dl").path], log: "localsendd.log")
        defer { sender.kill() }
        let found = try await eventually(timeout: .seconds(60), interval: .milliseconds(500)) {
            (try await rig.inside(rig.bin + "/localsendctl", ["devices", "--json"])).out.contains("Tonearm test")
        }
        try #require(found)
        let song = try rig.song("Known.wav", seed: 8)
        let sent = try await rig.inside(rig.bin + "/localsendctl", ["send", "--to", "Tonearm test", "--wait", "--quiet", song])
        #expect((sent.out + sent.err).contains("Last result: sent"), "\(sent)")
        // The file lands before its FromDevice signal is sent: wait for both.
        try await rig.d.waitFor("the song in Received, and said") { rig.files(rig.received) == ["Known.wav"] && rig.fromDevice.count == 1 }
        #expect(rig.fromDevice.first?.fingerprint == fingerprint)
        // Another device's certificate, and a JSON claim of the paired fingerprint with no certificate, are refused.
        let other = try rig.song("Other.wav", seed: 9)
        let stranger = try await rig.inside(rig.bin + "/localsend-cli", ["send", "127.0.0.1", other, "--json"])
        #expect(stranger.out.contains("rejected by receiver"), "\(stranger.out)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: other))
        let claim = #"{"info":{"alias":"Liar","fingerprint":"\#(fingerprint)","version":"2.1"},"files":{"f1":{"id":"f1","fileName":"Other.wav","size":\#(bytes.count),"fileType":"audio/wav"}}}"#
        let claimed = try await rig.probe(["POST", "\(Self.api)/prepare-upload", "--json", claim])
        #expect(claimed.status == 403 && (claimed.body["message"] as? String)?.contains("certificate") == true, "\(claimed)")
        #expect(rig.files(rig.received) == ["Known.wav"])
    }

    /// Prepares one file; returns the session and the file's token.
    static func prepare(_ rig: LocalSendRig, name: String, path: String, type: String = "audio/wav", sha256: String? = nil,
                        size: Int? = nil, http: Bool = false) async throws -> (status: Int, session: String, token: String, message: String) {
        let json = try prepareBody(name: name, path: path, type: type, sha256: sha256, size: size)
        let r = try await rig.probe(["POST", "\(api)/prepare-upload", "--json", json] + (http ? ["--http"] : []))
        return (r.status, r.body["sessionId"] as? String ?? "", (r.body["files"] as? [String: String])?["f1"] ?? "", r.body["message"] as? String ?? "")
    }

    /// A prepare-upload body offering the file at `path` as `name` (id f1), from a sender called Probe.
    static func prepareBody(name: String, path: String, type: String = "audio/wav", sha256: String? = nil, size: Int? = nil) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var file: [String: Any] = ["id": "f1", "fileName": name, "size": size ?? bytes.count, "fileType": type]
        if let sha256 { file["sha256"] = sha256 }
        let body: [String: Any] = ["info": ["alias": "Probe", "version": "2.1", "deviceModel": "test", "deviceType": "headless",
                                            "fingerprint": "probe", "port": 53317, "protocol": "https", "download": false],
                                   "files": ["f1": file]]
        return String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
    }

    static func upload(_ rig: LocalSendRig, _ session: String, _ token: String, _ path: String, _ more: [String] = []) async throws -> (Int, String) {
        let r = try await rig.probe(["POST", "\(api)/upload?sessionId=\(session)&fileId=f1&token=\(token)", "--file", path] + more)
        return (r.status, r.body["message"] as? String ?? "")
    }

    @Test func protocolEdges() async throws {
        let rig = try await LocalSendRig("accept = \"open\"\nmax-file-mb = 1", sink: false)
        let info = try await rig.probe(["GET", "\(Self.api)/info"])
        #expect(info.status == 200 && info.body["alias"] as? String == "Tonearm test")
        let fingerprint = info.body["fingerprint"] as? String ?? ""
        #expect(fingerprint.count == 64 && fingerprint == fingerprint.uppercased())
        #expect(try await rig.probe(["GET", "/api/localsend/v1/info"]).status == 200)
        let registered = try await rig.probe(["POST", "\(Self.api)/register", "--json", #"{"alias":"Probe","version":"2.1","fingerprint":"x","port":1,"protocol":"https"}"#])
        #expect(registered.status == 200 && registered.body["fingerprint"] as? String == fingerprint)
        let bad = try await rig.probe(["POST", "\(Self.api)/prepare-upload", "--json", "{not json"])
        #expect(bad.status == 400 && (bad.body["message"] as? String)?.isEmpty == false)
        #expect(try await Self.upload(rig, "nosuch", "t", rig.song("x.wav", seed: 1)).0 == 409)
        #expect(try await rig.probe(["POST", "\(Self.api)/upload"]).status == 400)

        // A name that climbs out of the folder is stored under its base name; the wrong token, the wrong address
        // and a second session are refused while the first session lives.
        let song = try rig.song("climb.wav", seed: 2)
        let p = try await Self.prepare(rig, name: "../../x.wav", path: song)
        #expect(p.status == 200)
        #expect(try await Self.prepare(rig, name: "other.wav", path: song).status == 409)
        #expect(try await Self.upload(rig, p.session, "wrong", song).0 == 403)
        #expect(try await Self.upload(rig, p.session, p.token, song, ["--source", "127.0.0.2"]).0 == 403)
        #expect(try await Self.upload(rig, p.session, p.token, song).0 == 200)
        try await rig.d.waitFor("x.wav in Received") { rig.files(rig.received) == ["x.wav"] }
        let strays = FileManager.default.enumerator(atPath: rig.d.home.url.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix("x.wav") } ?? []
        #expect(strays == ["Music/Received/x.wav"], "nothing written outside staging and Received: \(strays)")

        // Bigger than announced, shorter than announced (chunked, no Content-Length), a wrong SHA-256.
        let big = try rig.song("big.wav", seed: 3)
        var q = try await Self.prepare(rig, name: "big.wav", path: big)
        #expect(try await Self.upload(rig, q.session, q.token, big, ["--extra", "5000"]).0 == 400)
        q = try await Self.prepare(rig, name: "short.wav", path: big)
        #expect(try await Self.upload(rig, q.session, q.token, big, ["--short", "100", "--chunked"]).0 == 400)
        q = try await Self.prepare(rig, name: "sum.wav", path: big, sha256: String(repeating: "ab", count: 32))
        let sum = try await Self.upload(rig, q.session, q.token, big)
        #expect(sum.0 == 422 && sum.1.contains("SHA-256"))
        // Chunked with the right SHA-256 is taken.
        let good = try rig.song("chunked.wav", seed: 4)
        let digest = try await runProcess("/usr/bin/sha256sum", [good]).out.split(separator: " ")[0]
        q = try await Self.prepare(rig, name: "chunked.wav", path: good, sha256: String(digest))
        #expect(try await Self.upload(rig, q.session, q.token, good, ["--chunked"]).0 == 200)
        try await rig.d.waitFor("chunked.wav in Received") { rig.files(rig.received).contains("chunked.wav") }
        #expect(rig.files(rig.received) == ["chunked.wav", "x.wav"])

        // Audio by name, noise by content: received, then rejected by the shares pipeline with the reason.
        let noise = try rig.d.garbage("noise.mp3", bytes: 30_000)
        q = try await Self.prepare(rig, name: "noise.mp3", path: noise, type: "audio/mpeg")
        #expect(try await Self.upload(rig, q.session, q.token, noise).0 == 200)
        try await rig.d.waitFor("noise.mp3 rejected") { rig.fromDevice.contains { $0.name == "noise.mp3" } }
        #expect(rig.files(rig.rejected).contains("noise.mp3") && rig.files(rig.rejected).contains("noise.mp3.reason.txt"))
        #expect(rig.fromDevice.first { $0.name == "noise.mp3" }?.reason.isEmpty == false)

        // Refused whole: not audio, over max-file-mb.
        let text = rig.d.media.file("read me.txt")
        try Data("hello".utf8).write(to: text)
        let notAudio = try await Self.prepare(rig, name: "read me.txt", path: text.path, type: "text/plain")
        #expect(notAudio.status == 403 && notAudio.message.contains("not an audio file"))
        let huge = try await Self.prepare(rig, name: "huge.wav", path: song, size: 3 << 20)
        #expect(huge.status == 403 && huge.message.contains("over the limit"))

        // Cancel frees the receiver for the next session.
        q = try await Self.prepare(rig, name: "later.wav", path: song)
        #expect(try await rig.probe(["POST", "\(Self.api)/cancel?sessionId=\(q.session)"]).status == 200)
        #expect(try await Self.prepare(rig, name: "later.wav", path: song).status == 200)
        #expect(rig.files(rig.staging).allSatisfy { !$0.hasPrefix("ready-") })
        let refusedNames = rig.fromDevice.filter { !$0.reason.isEmpty }.map(\.name)
        #expect(Set(refusedNames).isSuperset(of: ["big.wav", "short.wav", "sum.wav", "read me.txt", "huge.wav"]), "\(refusedNames)")
    }

    @Test func stalledSenderIsDropped() async throws {
        // Plain HTTP, as configured (and only then).
        let rig = try await LocalSendRig("accept = \"open\"\nstall-seconds = 2\nprotocol = \"http\"", sink: false)
        let info = try await rig.probe(["GET", "\(Self.api)/info", "--http"])
        #expect(info.status == 200 && info.body["protocol"] as? String == "http")
        #expect(try await rig.probe(["GET", "\(Self.api)/info"]).status == 0, "no TLS on a plain HTTP server")
        let song = try rig.song("slow.wav", seed: 7, seconds: 3)
        let p = try await Self.prepare(rig, name: "slow.wav", path: song, http: true)
        let stalled = try await rig.probe(["POST", "\(Self.api)/upload?sessionId=\(p.session)&fileId=f1&token=\(p.token)", "--file", song, "--stall", "--http"])
        #expect(stalled.status == 0, "the server closes a stalled upload: \(stalled)")
        try await rig.d.waitFor("the stall reported") { rig.fromDevice.first?.reason == "the sender stalled" }
        try await rig.d.waitFor("the staging folder emptied") { rig.files(rig.staging).isEmpty }
        #expect(rig.files(rig.received).isEmpty)
        #expect(try await Self.prepare(rig, name: "next.wav", path: song, http: true).status == 200, "the stalled session no longer blocks")
    }
}
