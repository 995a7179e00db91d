import DBus
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite struct PrivateBusTests {
    @Test func startsAndStopsWithoutLeftovers() throws {
        let bus = try PrivateBus.start()
        #expect(bus.address.hasPrefix("unix:"))
        #expect(processExists(bus.pid))
        let conn = try DBusConnection.connect(address: bus.address)
        #expect(conn.uniqueName.hasPrefix(":"))
        conn.close()
        bus.stop()
        #expect(!processExists(bus.pid))
        bus.stop()  // idempotent
    }

    @Test func deinitStops() throws {
        var pid: Int32 = 0
        do {
            let bus = try PrivateBus.start()
            pid = bus.pid
        }
        #expect(pid > 0)
        #expect(!processExists(pid))
    }

    @Test func unreachableAddressThrows() {
        #expect(throws: DBusError.self) { try DBusConnection.connect(address: "unix:path=/nonexistent/bus") }
        #expect(throws: DBusError.self) { try DBusConnection.connect(address: "not an address") }
    }
}

@Suite struct RoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0), .byte(255), .bool(true), .bool(false), .int16(-32768), .uint16(65535),
        .int32(.min), .uint32(.max), .int64(.min), .uint64(.max), .double(-1.5), .double(.infinity),
        .string(""), .string("héllo ✓ 🎵"), .objectPath("/"), .objectPath("/org/tonearm/x_1"), .signature("a{sv}"),
        .signature(""),
        .stringArray(["a", "", "c"]), .objectPathArray(["/a", "/b/c"]), .array(element: "s", []),
        .array(element: "x", [.int64(1), .int64(-2)]), .array(element: "y", [.byte(1), .byte(2), .byte(255)]),
        .array(element: "y", []),
        .vardict(["a": .string("x"), "b": .int64(2), "c": .stringArray(["1"])]),
        .array(element: "a{sv}", [.vardict(["t": .string("one")]), .vardict([:])]),
        .dictionary(key: "i", value: "as", [DBusDictEntry(key: .int32(1), value: .stringArray(["x"]))]),
        .dictionary(key: "o", value: "a{sv}", []),
        .structure([.int32(1), .string("two"), .structure([.double(3)])]),
        .array(element: "(sv)", [.structure([.string("k"), .variant(.bool(true))])]),
        // v containing a{sv} containing as
        .variant(.vardict(["tags": .stringArray(["rock", "pop"]), "inner": .variant(.variant(.uint16(3)))])),
        .variant(.variant(.variant(.string("deep")))),
    ]

    @Test func everyTypeThroughAVariant() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            for value in Self.samples {
                let reply = try await f.call("EchoVariant", [.variant(value)])
                #expect(reply == [.variant(value)], "\(value)")
            }
        }
    }

    @Test func typedArguments() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let args: [DBusValue] = [
                .vardict(["title": .string("Song"), "length": .int64(123), "art": .variant(.stringArray(["x"]))]),
                .stringArray(["a", "b"]), .objectPathArray(["/org/mpris/MediaPlayer2/Track/1"]),
                .int64(-9_000_000_000), .double(0.25), .bool(true), .uint32(7),
                .array(element: "a{sv}", [.vardict(["xesam:title": .string("x")]), .vardict(["n": .int32(1)])]),
            ]
            #expect(try await f.call("EchoMany", args) == args)
            #expect(try await f.call("Add", [.int32(2), .int32(40)]) == [.int32(42)])
        }
    }

    @Test func concurrentCallersAndEmitters() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            // 8 tasks × 100 calls on one client connection, while 4 threads emit signals.
            let stream = f.client.signals(matching: DBusMatchRule(path: "/org/tonearm/Flood", member: "F"))
            let server = f.server
            let threads = (0..<4).map { t in
                Thread {
                    for i in 0..<250 {
                        server.emitSignal(path: "/org/tonearm/Flood", interface: "org.tonearm.Test1", member: "F",
                                          arguments: [.int32(Int32(t)), .int32(Int32(i))])
                    }
                }
            }
            _ = try await f.call("Add", [.int32(0), .int32(0)])  // the match is in place
            threads.forEach { $0.start() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for t in 0..<8 {
                    group.addTask {
                        for i in 0..<100 {
                            let r = try await f.call("Add", [.int32(Int32(t * 1000)), .int32(Int32(i))])
                            #expect(r == [.int32(Int32(t * 1000 + i))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Each thread's signals arrive complete and in its order.
            var next = [Int32](repeating: 0, count: 4)
            var total = 0
            for await s in stream {
                guard case .int32(let t) = s.arguments[0], case .int32(let i) = s.arguments[1] else { break }
                #expect(i == next[Int(t)])
                next[Int(t)] = i + 1
                total += 1
                if total == 1000 { break }
            }
            #expect(next == [250, 250, 250, 250])
        }
    }

    /// A signal sent again is a copy of the one built before (`SignalTemplates`): each still arrives whole, in order,
    /// and a copy is never taken for a signal that differs in its path, member or any value.
    @Test func repeatedSignalsArriveWhole() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let stream = try await f.client.subscribe(DBusMatchRule(interface: "org.tonearm.Repeat1"))
            func status(_ s: String) -> [DBusValue] {
                [.string("org.mpris.MediaPlayer2.Player"), .vardict(["PlaybackStatus": .string(s)]), .stringArray([])]
            }
            let many = [DBusValue.array(element: "i", (0..<40).map { .int32($0) })]  // too many values to be kept
            var sent: [(path: String, member: String, arguments: [DBusValue])] = [
                ("/a", "Changed", status("Paused")), ("/a", "Changed", status("Playing")),
                ("/a", "Changed", status("Paused")), ("/a", "Changed", status("Paused")),
                ("/b", "Changed", status("Paused")), ("/a", "Other", status("Paused")),
                ("/a", "Changed", status("Stopped")), ("/a", "Changed", many), ("/a", "Changed", many),
                ("/a", "Tick", [.objectPath("/t/1"), .int64(1), .int64(9)]),
                ("/a", "Tick", [.objectPath("/t/1"), .int64(2), .int64(9)]),
                ("/a", "Tick", [.objectPath("/t/2"), .int64(2), .int64(9)]),
            ]
            // More distinct signals of one kind than are kept (4), twice over: the oldest are built afresh the second time.
            for round in 0..<2 {
                for i in 0..<20 { sent.append(("/a", "Cycle", [.int32(Int32(i)), .bool(round == 0)])) }
                for i in 0..<20 { sent.append(("/a", "Cycle", [.int32(Int32(i)), .bool(round == 0)])) }
            }
            for s in sent {
                try f.server.trySendSignal(path: s.path, interface: "org.tonearm.Repeat1", member: s.member, arguments: s.arguments)
            }
            var received: [(path: String, member: String, arguments: [DBusValue])] = []
            for await s in stream {
                received.append((s.path, s.member, s.arguments))
                if received.count == sent.count { break }
            }
            #expect(received.map(\.path) == sent.map(\.path))
            #expect(received.map(\.member) == sent.map(\.member))
            #expect(received.map(\.arguments) == sent.map(\.arguments))
        }
    }

    @Test func largeArray() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let big = DBusValue.array(element: "s", (0..<20_000).map { .string("item \($0)") })
            let bytes = DBusValue.array(element: "y", (0..<1_000_000).map { .byte(UInt8($0 & 0xff)) })
            #expect(try await f.call("EchoVariant", [.variant(big)]) == [.variant(big)])
            #expect(try await f.call("EchoVariant", [.variant(bytes)]) == [.variant(bytes)])
        }
    }

    @Test func deepNesting() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            var deep = DBusValue.int32(1)
            for _ in 0..<40 { deep = .variant(deep) }
            #expect(try await f.call("EchoVariant", [.variant(deep)]) == [.variant(deep)])
            // Too deep is refused locally, without crashing.
            var tooDeep = DBusValue.int32(1)
            for _ in 0..<200 { tooDeep = .variant(tooDeep) }
            let e = await dbusError { _ = try await f.call("EchoVariant", [.variant(tooDeep)]) }
            #expect(e?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            var arrays = DBusValue.array(element: "i", [])
            for _ in 0..<40 { arrays = .array(element: arrays.signature, [arrays]) }
            let e2 = await dbusError { _ = try await f.call("EchoVariant", [.variant(arrays)]) }
            #expect(e2?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            // Still working.
            #expect(try await f.call("Add", [.int32(1), .int32(1)]) == [.int32(2)])
        }
    }

    @Test func invalidValuesAreRefusedLocally() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let bad: [DBusValue] = [
                .objectPath("not/a/path"), .objectPath("/trailing/"), .signature("a"), .string("nul\0inside"),
                .array(element: "s", [.int32(1)]), .array(element: "zz", []),
                .dictionary(key: "as", value: "s", []), .structure([]),
                .dictionary(key: "s", value: "v", [DBusDictEntry(key: .string("k"), value: .string("not a variant"))]),
            ]
            for v in bad {
                let e = await dbusError { _ = try await f.call("EchoVariant", [.variant(v)]) }
                #expect(e?.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(v)")
            }
            let e = await dbusError {
                _ = try await f.client.call(destination: "not a name", path: "/", interface: "a.b", member: "M")
            }
            #expect(e?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(try await f.call("Add", [.int32(1), .int32(2)]) == [.int32(3)])
        }
    }
}

@Suite struct PropertyTests {
    @Test func getGetAllSet() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let get = { (name: String) in
                try await f.client.getProperty(destination: serviceName, path: objectPath, interface: testInterface, name: name)
            }
            #expect(try await get("Name") == .string("tonearm"))
            #expect(try await get("Count") == .int64(42))
            #expect(try await get("Tags") == .stringArray(["a", "b"]))
            #expect(try await get("Metadata").vardictValue?["xesam:title"] == .string("Song"))

            let all = try await f.client.getAllProperties(destination: serviceName, path: objectPath, interface: testInterface)
            #expect(Set(all.keys) == ["Name", "Volume", "Count", "Clock", "Label", "Tags", "Metadata", "Anything"])  // not the write-only one
            #expect(all["Volume"] == .double(0.5))

            try await f.client.setProperty(destination: serviceName, path: objectPath, interface: testInterface,
                                           name: "Volume", value: .double(0.8))
            #expect(try await get("Volume") == .double(0.8))
            try await f.client.setProperty(destination: serviceName, path: objectPath, interface: testInterface,
                                           name: "Tags", value: .stringArray(["x"]))
            #expect(try await get("Tags") == .stringArray(["x"]))
            try await f.client.setProperty(destination: serviceName, path: objectPath, interface: testInterface,
                                           name: "Secret", value: .string("s3"))
            #expect(f.handler.state.withLock { $0.secret } == "s3")
            // A property of type v.
            try await f.client.setProperty(destination: serviceName, path: objectPath, interface: testInterface,
                                           name: "Anything", value: .variant(.string("now a string")))
            #expect(try await get("Anything") == .string("now a string"))
        }
    }

    @Test func refusals() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            func set(_ name: String, _ value: DBusValue, interface: String = testInterface) async -> DBusError? {
                await dbusError {
                    try await f.client.setProperty(destination: serviceName, path: objectPath, interface: interface,
                                                   name: name, value: value)
                }
            }
            #expect(await set("Count", .int64(1))?.name == "org.freedesktop.DBus.Error.PropertyReadOnly")
            #expect(await set("Volume", .string("loud"))?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(await set("Tags", .array(element: "o", []))?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(await set("Nope", .int32(1))?.name == "org.freedesktop.DBus.Error.UnknownProperty")
            #expect(await set("Name", .string("x"), interface: "org.tonearm.Nope")?.name
                == "org.freedesktop.DBus.Error.UnknownInterface")
            #expect(await set("Volume", .double(-1))?.name == "org.tonearm.Error.BadVolume")
            let e = await dbusError {
                _ = try await f.client.getProperty(destination: serviceName, path: objectPath, interface: testInterface, name: "Nope")
            }
            #expect(e?.name == "org.freedesktop.DBus.Error.UnknownProperty")
            // Set with the wrong argument signature.
            let e2 = await dbusError {
                _ = try await f.call("Set", [.string(testInterface), .string("Volume"), .double(1)],
                                     interface: "org.freedesktop.DBus.Properties")
            }
            #expect(e2?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(f.handler.state.withLock { $0.volume } == 0.5)
        }
    }

    @Test func propertiesChangedReachesASubscriber() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let stream = try await f.client.subscribe(DBusMatchRule(
                sender: serviceName, path: objectPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            f.server.emitPropertiesChanged(path: objectPath, interface: testInterface,
                                           changed: ["Volume": .double(0.9), "Tags": .stringArray(["z"])], invalidated: ["Name"])
            var it = stream.makeAsyncIterator()
            let signal = try #require(await it.next())
            #expect(signal.sender == f.server.uniqueName)
            #expect(signal.arguments.map(\.signature) == ["s", "a{sv}", "as"])
            #expect(signal.arguments[0] == .string(testInterface))
            #expect(signal.arguments[1].vardictValue == ["Volume": .double(0.9), "Tags": .stringArray(["z"])])
            #expect(signal.arguments[2] == .stringArray(["Name"]))
        }
    }
}

@Suite struct ErrorTests {
    @Test func validation() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            func name(_ body: () async throws -> Void) async -> String? { await dbusError(body)?.name }
            let wrongType = await dbusError { _ = try await f.call("Add", [.string("1"), .int32(2)]) }
            #expect(wrongType?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(wrongType?.message.contains("'ii'") == true)
            #expect(wrongType?.message.contains("'si'") == true)
            #expect(await name { _ = try await f.call("Add", [.int32(2)]) } == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(await name { _ = try await f.call("Add", []) } == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(await name { _ = try await f.call("Add", [.int32(1), .int32(2), .int32(3)]) }
                == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(await name { _ = try await f.call("Nope") } == "org.freedesktop.DBus.Error.UnknownMethod")
            #expect(await name { _ = try await f.call("Add", interface: "org.tonearm.Nope") }
                == "org.freedesktop.DBus.Error.UnknownInterface")
            #expect(await name { _ = try await f.call("Add", path: "/no/such/path") } == "org.freedesktop.DBus.Error.UnknownObject")
            #expect(await name { _ = try await f.call("Add", path: "/org/tonearm/Test/child") }
                == "org.freedesktop.DBus.Error.UnknownObject")
            let named = await dbusError { _ = try await f.call("Fail", [.string("because")]) }
            #expect(named == DBusError(name: "org.tonearm.Error.X", message: "because"))
            let crash = await dbusError { _ = try await f.call("Crash") }
            #expect(crash?.name == "org.freedesktop.DBus.Error.Failed")
            #expect(crash?.message.contains("something broke") == true)
            #expect(await name { _ = try await f.call("BadReturn") } == "org.freedesktop.DBus.Error.Failed")
            #expect(await name {
                _ = try await f.client.call(destination: "org.tonearm.Nobody", path: "/", interface: "a.b", member: "M")
            } == "org.freedesktop.DBus.Error.ServiceUnknown")
            // No interface field: the method is found by name.
            #expect(try await f.client.call(destination: serviceName, path: objectPath, interface: nil, member: "Add",
                                            arguments: [.int32(5), .int32(6)]) == [.int32(11)])
            #expect(await name {
                _ = try await f.client.call(destination: serviceName, path: objectPath, interface: nil, member: "Nope")
            } == "org.freedesktop.DBus.Error.UnknownMethod")
            let noIface = try await f.client.call(destination: serviceName, path: objectPath, interface: nil, member: "Introspect")
            #expect(noIface.first?.stringValue?.contains("org.tonearm.Test1") == true)
            // Still serving after all that.
            #expect(try await f.call("Add", [.int32(1), .int32(2)]) == [.int32(3)])
            #expect(try await f.call("Hello", interface: "org.tonearm.Other1") == [.string("hello \(f.client.uniqueName)")])
        }
    }

    @Test func timeout() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let e = await dbusError { _ = try await f.call("Sleep", [.uint32(2000)], timeout: .milliseconds(100)) }
            #expect(e?.name == "org.freedesktop.DBus.Error.NoReply")
        }
    }

    @Test func closedConnection() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let c = try DBusConnection.connect(address: f.bus.address)
            c.close()
            let e = await dbusError { _ = try await c.call(destination: serviceName, path: objectPath, interface: testInterface, member: "Crash") }
            #expect(e?.name == "org.freedesktop.DBus.Error.Disconnected")
            c.emitSignal(path: "/", interface: "a.b", member: "C", arguments: [])  // dropped quietly
        }
    }

    @Test func commandLineClients() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let busctl = "/usr/bin/busctl", dbusSend = "/usr/bin/dbus-send"
            let address = "--address=" + f.bus.address
            var r = try await run(busctl, [address, "call", serviceName, objectPath, testInterface, "Add", "ii", "40", "2"])
            #expect(r.0 == 0)
            #expect(r.1.trimmingCharacters(in: .whitespacesAndNewlines) == "i 42")
            r = try await run(busctl, [address, "call", serviceName, objectPath, testInterface, "Add", "s", "x"])
            #expect(r.0 != 0)
            #expect(r.2.contains("expects arguments 'ii', got 's'"), "\(r.2)")
            r = try await run(dbusSend, ["--bus=" + f.bus.address, "--print-reply", "--dest=" + serviceName, objectPath,
                                   testInterface + ".Add", "int32:1"])
            #expect(r.0 != 0)
            #expect(r.2.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(r.2)")
            r = try await run(dbusSend, ["--bus=" + f.bus.address, "--print-reply", "--dest=" + serviceName, objectPath,
                                   testInterface + ".Fail", "string:boom"])
            #expect(r.2.contains("org.tonearm.Error.X: boom"), "\(r.2)")
            // NO_REPLY_EXPECTED: handled, no reply sent.
            r = try await run(dbusSend, ["--bus=" + f.bus.address, "--type=method_call", "--dest=" + serviceName, objectPath,
                                   testInterface + ".Record", "string:quiet"])
            #expect(r.0 == 0)
            // Another sender's message may be routed after ours: wait for it.
            try await waitUntil("the call without a reply handled", timeout: .seconds(30)) {
                !f.handler.state.withLock { $0.notes.isEmpty }
            }
            #expect(f.handler.state.withLock { $0.notes } == ["quiet"])
            // Properties and the tree.
            r = try await run(busctl, [address, "get-property", serviceName, objectPath, testInterface, "Volume"])
            #expect(r.1.trimmingCharacters(in: .whitespacesAndNewlines) == "d 0.5")
            r = try await run(busctl, [address, "set-property", serviceName, objectPath, testInterface, "Count", "x", "3"])
            #expect(r.0 != 0)
            r = try await run(busctl, [address, "tree", serviceName])
            #expect(r.0 == 0)
            #expect(r.1.contains("/org/tonearm/Test"), "\(r.1)")
            r = try await run(busctl, [address, "introspect", serviceName, objectPath])
            #expect(r.0 == 0)
            #expect(r.1.contains(".EchoMany"), "\(r.1)")
            r = try await run(busctl, [address, "call", serviceName, objectPath, "org.freedesktop.DBus.Peer", "Ping"])
            #expect(r.0 == 0)
        }
    }
}

@Suite struct HostileInputTests {
    @Test func oddMessagesFromAnotherClient() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let gdbus = "/usr/bin/gdbus"
            guard FileManager.default.isExecutableFile(atPath: gdbus) else { return }
            func call(_ method: String, _ args: [String]) async throws -> (Int32, String, String) {
                try await run(gdbus, ["call", "--address", f.bus.address, "--dest", serviceName, "--object-path", objectPath,
                                "--method", method] + args)
            }
            let deep = String(repeating: "<", count: 60) + "1" + String(repeating: ">", count: 60)
            var r = try await call("org.tonearm.Test1.EchoVariant", [deep])
            #expect(r.0 == 0 || r.2.contains("Error"), "\(r.2)")
            let tooDeep = String(repeating: "<", count: 300) + "1" + String(repeating: ">", count: 300)
            r = try await call("org.tonearm.Test1.EchoVariant", [tooDeep])
            #expect(r.0 != 0)
            let wide = "<[" + (0..<15_000).map { "\($0)" }.joined(separator: ",") + "]>"
            r = try await call("org.tonearm.Test1.EchoVariant", [wide])
            #expect(r.0 == 0, "\(r.2)")
            r = try await call("org.tonearm.Test1.EchoVariant", ["<@a{sv} {'a': <@aa{sv} [{'b': <@ao ['/x']>}]>}>"])
            #expect(r.0 == 0, "\(r.2)")
            #expect(r.1.contains("objectpath '/x'"), "\(r.1)")
            r = try await call("org.tonearm.Test1.Add", ["1"])  // gdbus checks introspection: our XML is used
            #expect(r.0 != 0)
            r = try await call("org.freedesktop.DBus.Properties.Get", ["org.tonearm.Test1", "Count"])
            #expect(r.1.contains("<int64 42>"), "\(r.1)")
            // Still serving.
            #expect(try await f.call("Add", [.int32(1), .int32(2)]) == [.int32(3)])
        }
    }
}

@Suite struct SignalTests {
    @Test func thousandSignalsInOrder() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let stream = f.client.signals(matching: DBusMatchRule(sender: serviceName, interface: testInterface, member: "Tick"))
            _ = try await f.call("Emit", [.uint32(1000)])
            var received: [UInt32] = []
            for await s in stream {
                guard case .uint32(let n) = s.arguments.first else { break }
                received.append(n)
                if received.count == 1000 { break }
            }
            #expect(received == Array(0..<1000))
        }
    }

    @Test func signalFromAnotherThreadArrivesPromptly() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let stream = try await f.client.subscribe(DBusMatchRule(path: "/org/tonearm/Thread", member: "Now"))
            let server = f.server
            let sent = Mutex<ContinuousClock.Instant?>(nil)
            let thread = Thread {
                sent.withLock { $0 = .now }
                server.emitSignal(path: "/org/tonearm/Thread", interface: "org.tonearm.Test1", member: "Now",
                                  arguments: [.string("from a thread")])
            }
            thread.start()
            var it = stream.makeAsyncIterator()
            let signal = try #require(await it.next())
            let latency = ContinuousClock.now - sent.withLock { $0! }
            #expect(signal.arguments == [.string("from a thread")])
            #expect(signal.sender == f.server.uniqueName)
            print("signal latency from another thread: \(latency)")
        }
    }

    @Test func closeAfterRepliesAnswersTheCallBeingHandledFirst() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let call = Task { try await f.call("Sleep", [.uint32(300)]) }
            try await waitUntil("the call being handled", timeout: .seconds(30)) { f.handler.state.withLock { $0.sleeping } > 0 }
            f.server.closeAfterReplies()
            await f.server.waitUntilClosed()
            #expect(try await call.value == [], "the reply left before the connection closed")
            #expect(f.server.isClosed)
        }
    }

    @Test func streamEndsOnClose() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let c = try DBusConnection.connect(address: f.bus.address)
            let stream = c.signals(matching: DBusMatchRule(member: "Never"))
            c.close()
            for await _ in stream {}
        }
    }

    @Test func wellKnownSenderFollowsOwner() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close() }
        let stream = try await client.subscribe(DBusMatchRule(sender: "org.tonearm.Later", member: "Hi"))
        let a = try DBusConnection.connect(address: bus.address)
        a.emitSignal(path: "/", interface: "org.tonearm.T", member: "Hi", arguments: [.string("before")])  // not the owner
        #expect(try a.requestName("org.tonearm.Later") == .primaryOwner)
        #expect(try a.requestName("org.tonearm.Later") == .alreadyOwner)
        let b = try DBusConnection.connect(address: bus.address)
        #expect(try b.requestName("org.tonearm.Later") == .exists)
        #expect(try await b.nameHasOwner("org.tonearm.Later"))
        a.emitSignal(path: "/", interface: "org.tonearm.T", member: "Hi", arguments: [.string("owner a")])
        a.close()
        // Wait until the name is gone, then b takes it.
        try await waitUntil("the name released", timeout: .seconds(30)) { try await !b.nameHasOwner("org.tonearm.Later") }
        #expect(try b.requestName("org.tonearm.Later") == .primaryOwner)
        // The NameOwnerChanged signal is processed before anything b sends afterwards.
        _ = try await client.nameHasOwner("org.tonearm.Later")
        b.emitSignal(path: "/", interface: "org.tonearm.T", member: "Hi", arguments: [.string("owner b")])
        var it = stream.makeAsyncIterator()
        #expect(await it.next()?.arguments == [.string("owner a")])
        #expect(await it.next()?.arguments == [.string("owner b")])
        b.close()
    }
}

@Suite struct HeldCallsTests {
    @Test func callsWaitForTheServiceAndAreAnsweredInOrder() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let server = try DBusConnection.connect(address: bus.address)
        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close(); server.close() }
        // The name comes first; the object is exported only later, as a daemon that is still starting would.
        server.holdIncomingCalls()
        #expect(try server.requestName(serviceName) == .primaryOwner)
        final class Answered: Sendable { let count = Mutex(0) }
        let answered = Answered()
        // Sent in this order: an immediate task runs on this thread up to its first suspension, which comes only
        // after `call` has queued its message.
        let calls = (0..<5).map { i in
            Task.immediate {
                _ = try await client.call(destination: serviceName, path: objectPath, interface: testInterface,
                                          member: "Record", arguments: [.string("call \(i)")], timeout: .seconds(10))
                answered.count.withLock { $0 += 1 }
            }
        }
        // The five calls have reached the service, and any answer to them would have come first.
        try await Self.reachedService(client)
        #expect(answered.count.withLock { $0 } == 0, "nothing is answered while held, not even UnknownObject")
        let handler = TestHandler()
        server.export(path: objectPath, handlers: [handler])
        server.releaseIncomingCalls()
        for call in calls { try await call.value }
        #expect(handler.state.withLock { $0.notes } == (0..<5).map { "call \($0)" }, "handled in arrival order")
        // Once released, calls are answered at once.
        #expect(try await client.call(destination: serviceName, path: objectPath, interface: testInterface, member: "Add",
                                      arguments: [.int32(2), .int32(3)], timeout: .seconds(10)) == [.int32(5)])
    }
}

extension HeldCallsTests {
    /// What a test's held calls did, in the order they were answered.
    final class Done: Sendable { let names = Mutex<[String]>([]) }

    /// Returns once everything `client` sent before has reached the service: libdbus answers Peer.Ping itself, held or
    /// not, in the order messages came, so any answer to those earlier calls would have been sent before this one.
    static func reachedService(_ client: DBusConnection) async throws {
        _ = try await client.call(destination: serviceName, path: objectPath, interface: "org.freedesktop.DBus.Peer", member: "Ping",
                                  timeout: .seconds(30))
    }
}

extension HeldCallsTests {
    @Test func readsOfNamedInterfacesAreAnsweredWhileCallsAreHeldButNeverOvertakeTheirSendersCalls() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let server = try DBusConnection.connect(address: bus.address)
        let reader = try DBusConnection.connect(address: bus.address)
        let writer = try DBusConnection.connect(address: bus.address)
        defer { reader.close(); writer.close(); server.close() }
        server.holdIncomingCalls()
        #expect(try server.requestName(serviceName) == .primaryOwner)
        let handler = TestHandler()
        server.export(path: objectPath, handlers: [handler])
        @Sendable func clock(_ c: DBusConnection) async throws -> [DBusValue] {
            try await c.call(destination: serviceName, path: objectPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                             arguments: [.string(testInterface), .string("Clock")], timeout: .seconds(30))
        }
        let done = Done()
        // Only the named interfaces: a read of another one is held like any call.
        server.answerReadsWhileHeld(["org.tonearm.Elsewhere1"])
        let early = Task.immediate {
            let value = try await clock(reader)
            done.names.withLock { $0.append("early read") }
            return value
        }
        try await Self.reachedService(reader)
        #expect(done.names.withLock { $0 }.isEmpty, "a read of an interface not named is held")
        server.answerReadsWhileHeld([testInterface])
        #expect(try await early.value == [.variant(.int64(2))], "a read held from before is answered once its interface is let through")
        // The writer's call is held; its read after it waits for it, while the reader's read is answered at once, by
        // the bus thread (`currentValue` says 2).
        let write = Task.immediate {
            _ = try await writer.call(destination: serviceName, path: objectPath, interface: testInterface, member: "Record",
                                      arguments: [.string("held")], timeout: .seconds(30))
            done.names.withLock { $0.append("write") }
        }
        let readAfterWrite = Task.immediate {
            let value = try await clock(writer)
            done.names.withLock { $0.append("read after write") }
            return value
        }
        try await Self.reachedService(writer)
        let third = try DBusConnection.connect(address: bus.address)
        defer { third.close() }
        #expect(try await clock(third) == [.variant(.int64(2))], "answered while held")
        #expect(done.names.withLock { $0 } == ["early read"], "the write and the read after it are still held")
        #expect(handler.state.withLock { $0.notes }.isEmpty)
        server.releaseIncomingCalls()
        try await write.value
        #expect(try await readAfterWrite.value == [.variant(.int64(1))], "handled in turn, after the write")
        #expect(handler.state.withLock { $0.notes } == ["held"])
    }
}

extension HeldCallsTests {
    @Test func introspectionIsAnsweredWhileCallsAreHeldButNeverOvertakesItsSendersCalls() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let server = try DBusConnection.connect(address: bus.address)
        let looker = try DBusConnection.connect(address: bus.address)
        let writer = try DBusConnection.connect(address: bus.address)
        defer { looker.close(); writer.close(); server.close() }
        server.holdIncomingCalls()
        #expect(try server.requestName(serviceName) == .primaryOwner)
        @Sendable func introspect(_ c: DBusConnection, _ path: String = objectPath) async throws -> String {
            try await c.call(destination: serviceName, path: path, interface: "org.freedesktop.DBus.Introspectable",
                             member: "Introspect", timeout: .seconds(30)).first?.stringValue ?? ""
        }
        let done = Done()
        // Before the object is exported there is nothing to describe: held like any call, answered once released.
        let early = Task.immediate {
            let xml = try await introspect(looker)
            done.names.withLock { $0.append("early introspection") }
            return xml
        }
        try await Self.reachedService(looker)
        #expect(done.names.withLock { $0 }.isEmpty, "no object yet: held")
        let handler = TestHandler()
        server.export(path: objectPath, handlers: [handler])
        let write = Task.immediate {
            _ = try await writer.call(destination: serviceName, path: objectPath, interface: testInterface, member: "Record",
                                      arguments: [.string("held")], timeout: .seconds(30))
            done.names.withLock { $0.append("write") }
        }
        let introspectionAfterWrite = Task.immediate {
            let xml = try await introspect(writer)
            done.names.withLock { $0.append("introspection after write") }
            return xml
        }
        try await Self.reachedService(writer)
        // A new client's Introspect, of the object and of its parent, is answered while every other call is held.
        let third = try DBusConnection.connect(address: bus.address)
        defer { third.close() }
        #expect(try await introspect(third).contains("<interface name=\"\(testInterface)\">"), "answered while held")
        #expect(try await introspect(third, "/org/tonearm").contains("<node name=\"Test\"/>"))
        #expect(done.names.withLock { $0 } == [], "the write and the introspection after it are still held")
        server.releaseIncomingCalls()
        try await write.value
        #expect(try await introspectionAfterWrite.value.contains(testInterface))
        #expect(try await early.value.contains(testInterface))
        #expect(done.names.withLock { $0 }.firstIndex(of: "write")! < done.names.withLock { $0 }.firstIndex(of: "introspection after write")!,
                "answered in turn, after its sender's write")
    }
}

@Suite struct ImmediateReadTests {
    static func get(_ f: Fixture, _ name: String) async throws -> [DBusValue] {
        try await f.call("Get", [.string(testInterface), .string(name)], interface: "org.freedesktop.DBus.Properties")
    }

    @Test func readsAreAnsweredAtOnceOnlyWhenNoEarlierCallIsPending() async throws {
        try await withFixture { f in
            #expect(try await Self.get(f, "Clock") == [.variant(.int64(2))], "idle: answered on the bus thread")
            #expect(try await Self.get(f, "Label") == [.variant(.string("through get"))], "a value of the wrong type is not sent")
            #expect(try await f.call("GetAll", [.string(testInterface)], interface: "org.freedesktop.DBus.Properties")
                .first?.vardictValue?["Clock"] == .int64(1), "GetAll goes through get unless every property can be read at once")
            // A read sent while an earlier call is still being handled waits its turn: its answer never overtakes.
            let slow = Task { try await f.call("Sleep", [.uint32(300)]) }
            try await waitUntil("the slow call being handled", timeout: .seconds(30)) { f.handler.state.withLock { $0.sleeping } > 0 }
            #expect(try await Self.get(f, "Clock") == [.variant(.int64(1))])
            #expect(f.handler.state.withLock { $0.slept } == 1, "answered after the call before it")
            _ = try await slow.value
            #expect(try await Self.get(f, "Clock") == [.variant(.int64(2))], "idle again")
            // Errors are the usual ones.
            let e = await dbusError { _ = try await Self.get(f, "Nope") }
            #expect(e?.name == "org.freedesktop.DBus.Error.UnknownProperty")
        }
    }
}

@Suite struct IntrospectionTests {
    @Test func introspectEqualsTheXML() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            let reply = try await f.call("Introspect", interface: "org.freedesktop.DBus.Introspectable")
            let xml = try #require(reply.first?.stringValue)
            let parsed = try DBusInterfaceDescription.parse(xml: xml)
            let names = parsed.map(\.name)
            #expect(names.contains("org.freedesktop.DBus.Properties"))
            #expect(names.contains("org.freedesktop.DBus.Introspectable"))
            #expect(names.contains("org.freedesktop.DBus.Peer"))
            let ours = parsed.filter { $0.name.hasPrefix("org.tonearm.") }
            #expect(ours == sampleInterfaces)
        }
    }

    @Test func parentNodesListChildren() async throws {
        let f = try Fixture()
        defer { f.shutdown() }
        do {
            f.server.export(path: "/org/tonearm/Test/Sub/Leaf", handlers: [OtherHandler()])
            for (path, child) in [("/", "org"), ("/org", "tonearm"), ("/org/tonearm", "Test"), ("/org/tonearm/Test", "Sub")] {
                let reply = try await f.call("Introspect", interface: "org.freedesktop.DBus.Introspectable", path: path)
                let xml = try #require(reply.first?.stringValue)
                #expect(xml.contains("<node name=\"\(child)\"/>"), "\(path)")
            }
            #expect(try await f.call("Hello", interface: "org.tonearm.Other1", path: "/org/tonearm/Test/Sub/Leaf").count == 1)
            f.server.unexport(path: "/org/tonearm/Test/Sub/Leaf")
            let e = await dbusError { _ = try await f.call("Introspect", interface: "org.freedesktop.DBus.Introspectable",
                                                          path: "/org/tonearm/Test/Sub") }
            #expect(e?.name == "org.freedesktop.DBus.Error.UnknownObject")
            let peer = try await f.call("GetMachineId", interface: "org.freedesktop.DBus.Peer")
            #expect(peer.first?.stringValue?.count == 32)
        }
    }
}
