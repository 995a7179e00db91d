import Testing
@testable import UPnP

@Suite struct SubscriptionsTests {
    let t0 = ContinuousClock.now

    @Test func subscribesRenewsAndExpires() throws {
        var s = Subscriptions(maximum: 4)
        let (sid, seconds) = try s.subscribe(service: "AVTransport", callback: "<http://10.0.0.5:8080/cb>", nt: "upnp:event",
                                             timeout: "Second-60", remote: "10.0.0.5", now: t0, makeID: { "uuid:1" })
        #expect(sid == "uuid:1")
        #expect(seconds == 60)
        #expect(s.takeSequence(sid) == 0)
        #expect(s.takeSequence(sid) == 1)
        #expect(try s.renew(sid: sid, service: "AVTransport", timeout: "Second-infinite", now: t0 + .seconds(59)) == Subscriptions.longest)
        #expect(s.expire(now: t0 + .seconds(60)).isEmpty)
        #expect(s.expire(now: t0 + .seconds(59 + Subscriptions.longest)) == [sid])
        #expect(throws: GENAError(412, "no subscription uuid:1")) { try s.renew(sid: sid, service: "AVTransport", timeout: nil, now: t0) }
    }

    @Test(arguments: [
        // (callback, NT, remote, status)
        ("<http://10.0.0.9:8080/cb>", "upnp:event", "10.0.0.5", 412),  // another machine
        ("<https://10.0.0.5/cb>", "upnp:event", "10.0.0.5", 412),  // not plain http
        ("http://10.0.0.5/cb", "upnp:event", "10.0.0.5", 412),  // no <>
        ("", "upnp:event", "10.0.0.5", 412),
        ("<http://10.0.0.5/cb>", "upnp:propchange", "10.0.0.5", 412),
        ("<http://10.0.0.5/a><http://10.0.0.5/b><http://10.0.0.5/c><http://10.0.0.5/d><http://10.0.0.5/e>", "upnp:event", "10.0.0.5", 412),
    ])
    func refuses(_ callback: String, _ nt: String, _ remote: String, _ status: Int) {
        var s = Subscriptions(maximum: 4)
        #expect(throws: GENAError.self) {
            try s.subscribe(service: "AVTransport", callback: callback, nt: nt, timeout: nil, remote: remote, now: t0)
        }
        do { _ = try s.subscribe(service: "AVTransport", callback: callback, nt: nt, timeout: nil, remote: remote, now: t0) } catch {
            #expect(error.status == status)
        }
    }

    @Test func capsAndFreesWhenExpired() throws {
        var s = Subscriptions(maximum: 2)
        for _ in 0..<2 {
            _ = try s.subscribe(service: "RenderingControl", callback: "<http://127.0.0.1:1/cb>", nt: "upnp:event", timeout: "Second-5",
                                remote: "127.0.0.1", now: t0)
        }
        #expect(throws: GENAError.self) {
            try s.subscribe(service: "RenderingControl", callback: "<http://127.0.0.1:1/cb>", nt: "upnp:event", timeout: nil, remote: "127.0.0.1", now: t0)
        }
        // Their time up, the places are free again.
        _ = try s.subscribe(service: "RenderingControl", callback: "<http://127.0.0.1:1/cb>", nt: "upnp:event", timeout: nil,
                            remote: "127.0.0.1", now: t0 + .seconds(5))
        #expect(s.all.count == 1)
    }

    @Test func unsubscribesOnlyItsOwnService() throws {
        var s = Subscriptions(maximum: 2)
        let (sid, _) = try s.subscribe(service: "AVTransport", callback: "<http://127.0.0.1:1/cb>", nt: "upnp:event", timeout: nil,
                                       remote: "127.0.0.1", now: t0)
        #expect(throws: GENAError.self) { try s.unsubscribe(sid: sid, service: "RenderingControl") }
        try s.unsubscribe(sid: sid, service: "AVTransport")
        #expect(s.all.isEmpty)
        #expect(s.takeSequence(sid) == nil)
    }

    @Test func sequenceWrapsToOne() throws {
        var s = Subscriptions(maximum: 1)
        let (sid, _) = try s.subscribe(service: "AVTransport", callback: "<http://127.0.0.1:1/cb>", nt: "upnp:event", timeout: nil,
                                       remote: "127.0.0.1", now: t0)
        _ = s.takeSequence(sid)
        s.all[sid]?.sequence = UInt32.max
        #expect(s.takeSequence(sid) == UInt32.max)
        #expect(s.takeSequence(sid) == 1)
    }
}

