import LocalSend
import Testing

typealias M = LocalSendMachine

/// Ids from a counter, so replies can be compared whole.
final class Counter: @unchecked Sendable {
    private var n = 0
    func next() -> String {
        n += 1
        return "id\(n)"
    }
}

let phone = M.Peer(address: "127.0.0.2", alias: "Phone", fingerprint: "AB", verified: true)
let stranger = M.Peer(address: "127.0.0.3", alias: "Other", fingerprint: "CD", verified: true)

func song(_ id: String = "f1", _ name: String = "song.mp3", size: Int64 = 1000, type: String = "audio/mpeg") -> M.OfferedFile {
    M.OfferedFile(id: id, fileName: name, size: size, fileType: type)
}

func machine(_ policy: M.Policy = M.Policy(mode: .open), paired: Set<String> = []) -> M {
    let counter = Counter()
    return M(policy: policy, paired: paired, makeID: { counter.next() })
}

func statuses(_ actions: [M.Action]) -> [Int] {
    actions.compactMap { if case .reply(let r) = $0 { r.status } else if case .answerHeld(_, let r) = $0 { r.status } else { nil } }
}

func reply(_ actions: [M.Action]) -> M.Reply? {
    actions.lazy.compactMap { if case .reply(let r) = $0 { r } else if case .answerHeld(_, let r) = $0 { r } else { nil } }.first
}

func refusals(_ actions: [M.Action]) -> [String] {
    actions.compactMap { if case .refused(_, let name, let why) = $0 { "\(name): \(why)" } else { nil } }
}

@Suite struct LocalSendMachineTests {
    @Test func openModeGivesASessionAndATokenPerFile() {
        var m = machine()
        let actions = m.handle(.prepare(peer: phone, files: [song("a"), song("b", "two.flac", type: "audio/flac")], pin: nil, now: 0))
        // ids: tokens first (id1, id2), then the session (id3).
        #expect(reply(actions) == M.Reply(status: 200, message: nil, session: "id3", tokens: ["a": "id1", "b": "id2"]))
        #expect(m.activeSession == "id3")
    }

    /// One row per prepare-upload that must be refused whole, with the status the spec gives.
    @Test(arguments: [
        (M.Policy(mode: .open), [M.OfferedFile](), nil as String?, 400),
        (M.Policy(mode: .open), [song("a", "photo.jpg", type: "image/jpeg")], nil, 403),
        (M.Policy(mode: .open), [song("a", "notes.txt", type: "text/plain")], nil, 403),
        (M.Policy(mode: .open), [song("a", "fake.mp3", type: "image/png")], nil, 403),
        (M.Policy(mode: .open, maxFileBytes: 999), [song()], nil, 403),
        (M.Policy(mode: .open), [song(size: 0)], nil, 403),
        (M.Policy(mode: .pin, pin: "1234"), [song()], nil, 401),
        (M.Policy(mode: .pin, pin: "1234"), [song()], "", 401),
        (M.Policy(mode: .pin, pin: "1234"), [song()], "9999", 401),
        (M.Policy(mode: .paired), [song()], nil, 403),
    ])
    func refusedWhole(policy: M.Policy, files: [M.OfferedFile], pin: String?, status: Int) {
        var m = machine(policy)
        let actions = m.handle(.prepare(peer: phone, files: files, pin: pin, now: 0))
        #expect(statuses(actions) == [status])
        #expect(reply(actions)?.message?.isEmpty == false)
        #expect(m.activeSession == nil)
    }

    @Test func nonAudioAndOverLimitFilesAreLeftOutOfTheMap() {
        var m = machine(M.Policy(mode: .open, maxFileBytes: 5000, maxSessionBytes: 2500, maxFiles: 2))
        let actions = m.handle(.prepare(peer: phone, files: [
            song("a"), song("pic", "cover.png", type: "image/png"), song("big", "big.flac", size: 6000),
            song("b", "b.ogg", size: 1000, type: "application/ogg"), song("c", "c.mp3", size: 400), song("d", "d.mp3", size: 100),
        ], pin: nil, now: 0))
        #expect(reply(actions).map { Set($0.tokens.keys) } == ["a", "b"])
        #expect(refusals(actions) == [
            "cover.png: not an audio file (.png)", "big.flac: it is 6000 bytes, over the limit of 5000",
            "c.mp3: more than 2 files in one transfer", "d.mp3: more than 2 files in one transfer",
        ])
    }

    @Test func sessionByteLimit() {
        var m = machine(M.Policy(mode: .open, maxSessionBytes: 1500))
        let actions = m.handle(.prepare(peer: phone, files: [song("a"), song("b", "b.mp3")], pin: nil, now: 0))
        #expect(reply(actions).map { Array($0.tokens.keys) } == ["a"])
        #expect(refusals(actions) == ["b.mp3: the transfer would be over the limit of 1500 bytes"])
    }

    /// File names are reduced to a safe base name.
    @Test(arguments: [
        ("../../x.mp3", "x.mp3"), ("/etc/passwd.mp3", "passwd.mp3"), ("..\\..\\win.mp3", "win.mp3"), ("..", "received"),
        (".hidden.mp3", "hidden.mp3"), ("a/b/../c.flac", "c.flac"), ("tab\there.mp3", "tab_here.mp3"), ("", "received"), ("C:x.mp3", "C_x.mp3"),
    ])
    func safeBaseNames(name: String, expected: String) {
        #expect(LocalSendNames.safeBaseName(name) == expected)
    }

    @Test func traversalNameIsStoredUnderItsBaseName() {
        var m = machine()
        let prepared = reply(m.handle(.prepare(peer: phone, files: [song("a", "../../x.mp3")], pin: nil, now: 0)))!
        let actions = m.handle(.uploadBegins(session: prepared.session!, file: "a", token: prepared.tokens["a"]!, address: phone.address, now: 1))
        guard case .receive(_, let file) = actions.first else { Issue.record("\(actions)"); return }
        #expect(file.name == "x.mp3")
    }

    @Test func filesAlreadyStoredAreNotSentAgain() {
        var m = machine()
        m.stored = ["aa"]
        var known = song("a")
        known.sha256 = "aa"
        // Only stored files: 204, no session.
        let none = m.handle(.prepare(peer: phone, files: [known], pin: nil, now: 0))
        #expect(statuses(none) == [204] && none.contains(.alreadyStored(peer: phone, fileName: "song.mp3", sha256: "aa")))
        #expect(m.activeSession == nil)
        // With a new one: a session for the new one only.
        let some = m.handle(.prepare(peer: phone, files: [known, song("b", "new.mp3")], pin: nil, now: 1))
        #expect(reply(some).map { Array($0.tokens.keys) } == ["b"])
    }

    @Test func secondSessionIsBlocked() {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 0))
        #expect(statuses(m.handle(.prepare(peer: stranger, files: [song()], pin: nil, now: 1))) == [409])
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 1))) == [409])
    }

    /// Upload checks, in the order the spec names them.
    @Test(arguments: [
        ("", "a", "id1", "127.0.0.2", 400),
        ("id2", "a", "", "127.0.0.2", 400),
        ("other", "a", "id1", "127.0.0.2", 409),
        ("id2", "a", "id1", "127.0.0.3", 403),
        ("id2", "a", "wrong", "127.0.0.2", 403),
        ("id2", "zz", "id1", "127.0.0.2", 403),
        ("id2", "a", "id1", "127.0.0.2", 0),
    ])
    func uploadChecks(session: String, file: String, token: String, address: String, status: Int) {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song("a")], pin: nil, now: 0))
        let actions = m.handle(.uploadBegins(session: session, file: file, token: token, address: address, now: 1))
        if status == 0 {
            guard case .receive(let id, let f) = actions.first else { Issue.record("\(actions)"); return }
            #expect(id == "id2" && f.name == "song.mp3")
            #expect(statuses(m.handle(.uploadBegins(session: session, file: file, token: token, address: address, now: 2))) == [409])
        } else {
            #expect(statuses(actions) == [status])
        }
    }

    @Test func uploadWithoutSessionIs409() {
        var m = machine()
        #expect(statuses(m.handle(.uploadBegins(session: "x", file: "a", token: "t", address: "127.0.0.2", now: 0))) == [409])
    }

    /// How an upload ended → the answer, what happens to the staged file, and the session.
    @Test(arguments: [
        (M.UploadResult.complete, 200, true),
        (.tooLong, 400, false),
        (.tooShort(received: 10), 400, false),
        (.checksumMismatch, 422, false),
        (.failed("disk full"), 500, false),
    ])
    func uploadEnds(result: M.UploadResult, status: Int, handedOver: Bool) {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song("a"), song("b", "b.mp3")], pin: nil, now: 0))
        _ = m.handle(.uploadBegins(session: "id3", file: "a", token: "id1", address: phone.address, now: 1))
        let actions = m.handle(.uploadEnds(session: "id3", file: "a", result: result, now: 2))
        #expect(statuses(actions) == [status])
        #expect(actions.contains { if case .handOver(_, let f, let p) = $0 { f.offered.id == "a" && p == phone } else { false } } == handedOver)
        #expect(actions.contains(.discard(session: "id3", file: "a")) == !handedOver)
        #expect(refusals(actions).count == (handedOver ? 0 : 1))
        #expect(m.activeSession == "id3")  // b is still to come
        _ = m.handle(.uploadBegins(session: "id3", file: "b", token: "id2", address: phone.address, now: 3))
        let last = m.handle(.uploadEnds(session: "id3", file: "b", result: .complete, now: 4))
        #expect(last.contains(.endSession("id3", reason: "finished")))
        #expect(m.activeSession == nil)
    }

    @Test func wrongPinsLockTheAddressOut() {
        var m = machine(M.Policy(mode: .pin, pin: "1234", pinAttempts: 3, pinLockoutSeconds: 60))
        let tries: [(String?, Double, Int)] = [
            ("1", 0, 401), ("2", 1, 401), ("3", 2, 401),  // three wrong: locked until 62
            ("1234", 3, 429), ("1234", 61, 429),
        ]
        for (pin, now, status) in tries {
            #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: pin, now: now))) == [status], "pin \(pin ?? "-") at \(now)")
        }
        // Another address is not locked out.
        #expect(statuses(m.handle(.prepare(peer: stranger, files: [song()], pin: "1234", now: 5))) == [200])
        _ = m.handle(.cancel(session: m.activeSession!, address: stranger.address, now: 6))
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: "1234", now: 62))) == [200])
    }

    @Test func rightPinResetsTheCount() {
        var m = machine(M.Policy(mode: .pin, pin: "1234", pinAttempts: 2))
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: "0", now: 0))) == [401])
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: "1234", now: 1))) == [200])
        _ = m.handle(.cancel(session: m.activeSession!, address: phone.address, now: 2))
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: "0", now: 3))) == [401])
    }

    @Test func askModeHoldsTheOfferUntilTheUserAnswers() {
        var m = machine(M.Policy(mode: .ask))
        let asked = m.handle(.prepare(peer: phone, files: [song("a")], pin: nil, now: 0))
        guard case .ask(let offer) = asked.last else { Issue.record("\(asked)"); return }
        #expect(offer.id == "id2" && offer.peer == phone && offer.files.map(\.name) == ["song.mp3"])
        #expect(m.pendingOffers == [offer])
        #expect(statuses(m.handle(.uploadBegins(session: "id2", file: "a", token: "id1", address: phone.address, now: 1))) == [409])
        #expect(statuses(m.handle(.prepare(peer: stranger, files: [song()], pin: nil, now: 1))) == [409])
        let accepted = m.handle(.answer(offer: "id2", accept: true, now: 2))
        #expect(accepted == [.answerHeld(offer: "id2", M.Reply(status: 200, message: nil, session: "id2", tokens: ["a": "id1"])), .pair(phone)])
        #expect(m.pendingOffers.isEmpty && m.paired == ["AB"])
    }

    @Test func declinedAndUnansweredOffers() {
        var m = machine(M.Policy(mode: .ask, askSeconds: 30))
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 0))
        #expect(m.handle(.answer(offer: "id2", accept: false, now: 1))
            == [.answerHeld(offer: "id2", .error(403, "rejected: declined by the user")), .endSession("id2", reason: "declined")])
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 2))
        #expect(m.handle(.tick(now: 31)).isEmpty)
        #expect(statuses(m.handle(.tick(now: 32))) == [403])
        #expect(m.activeSession == nil)
    }

    @Test func anOfferEndsWhenItsSenderLeaves() {
        var m = machine(M.Policy(mode: .ask))
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 0))
        #expect(m.handle(.senderLeft(offer: "elsewhere")).isEmpty)
        #expect(m.handle(.senderLeft(offer: "id2"))
            == [.answerHeld(offer: "id2", .error(403, "rejected: the sender left")), .endSession("id2", reason: "the sender left")])
        #expect(m.activeSession == nil && m.pendingOffers.isEmpty)
        // Once accepted, the session belongs to its uploads (a late notice of the prepare's connection changes nothing).
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 1))
        _ = m.handle(.answer(offer: "id4", accept: true, now: 2))
        #expect(m.handle(.senderLeft(offer: "id4")).isEmpty)
        #expect(m.activeSession == "id4")
    }

    @Test func unverifiedSendersAreNotPaired() {
        var m = machine(M.Policy(mode: .ask))
        var claimed = phone
        claimed.verified = false
        _ = m.handle(.prepare(peer: claimed, files: [song()], pin: nil, now: 0))
        #expect(!m.handle(.answer(offer: "id2", accept: true, now: 1)).contains(.pair(claimed)))
        #expect(m.paired.isEmpty)
    }

    @Test func pairedModeTakesOnlyKnownCertificates() {
        var m = machine(M.Policy(mode: .paired), paired: ["AB"])
        #expect(statuses(m.handle(.prepare(peer: stranger, files: [song()], pin: nil, now: 0))) == [403])
        var claimed = phone
        claimed.verified = false  // claims the paired fingerprint in JSON but shows no certificate
        #expect(statuses(m.handle(.prepare(peer: claimed, files: [song()], pin: nil, now: 0))) == [403])
        #expect(statuses(m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 0))) == [200])
    }

    @Test func stalledSessionEnds() {
        var m = machine(M.Policy(mode: .open, stallSeconds: 10))
        _ = m.handle(.prepare(peer: phone, files: [song("a"), song("b", "b.mp3")], pin: nil, now: 0))
        _ = m.handle(.uploadBegins(session: "id3", file: "a", token: "id1", address: phone.address, now: 1))
        _ = m.handle(.progress(session: "id3", now: 8))
        #expect(m.handle(.tick(now: 17)).isEmpty)
        let ended = m.handle(.tick(now: 18))
        #expect(ended.last == .endSession("id3", reason: "stalled"))
        #expect(refusals(ended) == ["song.mp3: the sender stalled", "b.mp3: the sender stalled"])
        // The upload that was running ends after its session: its file is thrown away.
        #expect(m.handle(.uploadEnds(session: "id3", file: "a", result: .failed("closed"), now: 19)).first == .discard(session: "id3", file: "a"))
        #expect(statuses(m.handle(.prepare(peer: stranger, files: [song()], pin: nil, now: 20))) == [200])
    }

    @Test func filesReachTheLibraryInTheOrderOffered() {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song("a", "1.mp3"), song("b", "2.mp3"), song("c", "3.mp3")], pin: nil, now: 0))
        func handedOver(_ actions: [M.Action]) -> [String] {
            actions.compactMap { if case .handOver(_, let f, _) = $0 { f.offered.id } else { nil } }
        }
        for (file, token) in [("a", "id1"), ("b", "id2"), ("c", "id3")] {
            _ = m.handle(.uploadBegins(session: "id4", file: file, token: token, address: phone.address, now: 1))
        }
        // c, then a, then b complete: c waits for b.
        #expect(handedOver(m.handle(.uploadEnds(session: "id4", file: "c", result: .complete, now: 2))) == [])
        #expect(handedOver(m.handle(.uploadEnds(session: "id4", file: "a", result: .complete, now: 3))) == ["a"])
        let last = m.handle(.uploadEnds(session: "id4", file: "b", result: .complete, now: 4))
        #expect(handedOver(last) == ["b", "c"])
        #expect(last.last == .endSession("id4", reason: "finished"))
        // A refused file does not hold the ones after it.
        var n = machine()
        _ = n.handle(.prepare(peer: phone, files: [song("a", "1.mp3"), song("b", "2.mp3")], pin: nil, now: 0))
        for (file, token) in [("a", "id1"), ("b", "id2")] {
            _ = n.handle(.uploadBegins(session: "id3", file: file, token: token, address: phone.address, now: 1))
        }
        #expect(handedOver(n.handle(.uploadEnds(session: "id3", file: "b", result: .complete, now: 2))) == [])
        #expect(handedOver(n.handle(.uploadEnds(session: "id3", file: "a", result: .checksumMismatch, now: 3))) == ["b"])
    }

    @Test func aCancelKeepsWhatCameWhole() {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song("a", "1.mp3"), song("b", "2.mp3"), song("c", "3.mp3")], pin: nil, now: 0))
        _ = m.handle(.uploadBegins(session: "id4", file: "b", token: "id2", address: phone.address, now: 1))
        _ = m.handle(.uploadEnds(session: "id4", file: "b", result: .complete, now: 2))
        let cancelled = m.handle(.cancel(session: "id4", address: phone.address, now: 3))
        #expect(cancelled.first.map { if case .handOver(_, let f, _) = $0 { f.offered.id == "b" } else { false } } == true)
        #expect(cancelled.contains(.endSession("id4", reason: "cancelled by the sender")))
    }

    @Test(arguments: [
        (#"{"info":{"alias":"x"},"files":{"z":{"id":"z"},"a":{"id":"a","n":[1,{"k":"}"}]},"m":{}}}"#, ["z", "a", "m"]),
        (#"{ "files" : { "b\"q" : {}, "\u0041" : 1 } , "info": {} }"#, ["b\"q", "A"]),
        (#"{"info":{"files":{"x":1}},"files":{"y":true}}"#, ["y"]),
        (#"{"files":[]}"#, []),
        (#"not json"#, []),
        (#"{"files":{"a":1,"#, ["a"]),
    ])
    func fileOrderFollowsTheText(body: String, keys: [String]) {
        #expect(LocalSendMessages.fileOrder(Array(body.utf8)) == keys)
    }

    @Test func cancelOnlyFromTheSender() {
        var m = machine()
        _ = m.handle(.prepare(peer: phone, files: [song()], pin: nil, now: 0))
        #expect(statuses(m.handle(.cancel(session: "id2", address: stranger.address, now: 1))) == [403])
        #expect(m.handle(.cancel(session: "id2", address: phone.address, now: 1)) == [.endSession("id2", reason: "cancelled by the sender"), .reply(.init(status: 200, message: nil, session: nil, tokens: [:]))])
        #expect(m.activeSession == nil)
    }

    @Test(arguments: [
        ("a.mp3", "audio/mpeg", true), ("a.MP3", "", true), ("a.flac", "application/octet-stream", true), ("a.mid", "audio/midi", true),
        ("a.ogg", "application/ogg", true), ("a.txt", "audio/mpeg", false), ("a", "audio/mpeg", false), ("a.mp3", "text/plain", false),
        ("a.m4a", "audio/mp4; codecs=alac", true), ("a.exe", "application/octet-stream", false),
    ])
    func audioByNameAndType(name: String, type: String, audio: Bool) {
        #expect((LocalSendNames.notAudio(name: name, type: type) == nil) == audio)
    }
}
