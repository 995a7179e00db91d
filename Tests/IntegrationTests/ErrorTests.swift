import DBus
import Foundation
import DaemonHarness
import TestSupport
import Testing

/// Wrong calls get the right D-Bus errors and never hurt the daemon.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ErrorTests {
    @Test func wrongTypesAndUnknownNames() async throws {
        let d = try Daemon()
        let a = try d.sine("a.wav", seconds: 60)
        try await d.start([a])

        func expectError(_ name: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("expected \(name)")
            } catch let e as DBusError {
                #expect(e.name == name, "\(e)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        let invalid = "org.freedesktop.DBus.Error.InvalidArgs"
        await expectError(invalid) { _ = try await d.call(Daemon.player, "Seek", [.string("ten")]) }
        await expectError(invalid) { _ = try await d.call(Daemon.player, "Seek", []) }
        await expectError(invalid) { _ = try await d.call(Daemon.player, "Seek", [.int64(1), .int64(2)]) }
        await expectError(invalid) { _ = try await d.call(Daemon.player, "SetPosition", [.string("/x"), .int64(0)]) }
        await expectError(invalid) { _ = try await d.call(Daemon.player, "OpenUri", [.int32(3)]) }
        await expectError(invalid) { _ = try await d.call(Daemon.trackList, "GetTracksMetadata", [.stringArray(["/a"])]) }
        await expectError(invalid) { try await d.set(Daemon.player, "Volume", .string("loud")) }
        await expectError(invalid) { try await d.set(Daemon.player, "Shuffle", .int32(1)) }
        await expectError("org.freedesktop.DBus.Error.PropertyReadOnly") { try await d.set(Daemon.player, "PlaybackStatus", .string("Playing")) }
        await expectError("org.freedesktop.DBus.Error.UnknownMethod") { _ = try await d.call(Daemon.player, "Explode") }
        await expectError("org.freedesktop.DBus.Error.UnknownInterface") { _ = try await d.call("org.example.Nope", "Ping") }
        await expectError("org.freedesktop.DBus.Error.UnknownProperty") { _ = try await d.get(Daemon.player, "Loudness") }
        await expectError(invalid) { try await d.set(Daemon.tonearm, "TickInterval", .int64(5)) }

        // The same through busctl, a client we did not write.
        let busctl = try await d.run("busctl", ["--user", "call", Daemon.busName, Daemon.path, Daemon.player, "Seek", "s", "x"])
        #expect(busctl.status != 0)
        let ok = try await d.run("busctl", ["--user", "get-property", Daemon.busName, Daemon.path, Daemon.player, "PlaybackStatus"])
        #expect(ok.out == "s \"Playing\"")

        // Still alive and playing after all that.
        #expect(try await d.status() == "Playing")
        #expect(d.process?.isRunning == true)
    }

    @Test func introspectEqualsTheContractInDbusFolder() async throws {
        let d = try Daemon()
        try await d.start()
        let xml = try await d.call("org.freedesktop.DBus.Introspectable", "Introspect").first?.stringValue ?? ""
        let exported = try DBusInterfaceDescription.parse(xml: xml)
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".xml") }
        #expect(files.count >= 4)
        for file in files {
            let contract = try DBusInterfaceDescription.parse(xml: String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8))
            for interface in contract {
                #expect(exported.first { $0.name == interface.name } == interface, "\(interface.name) differs from dbus/\(file)")
            }
        }
        let standard = ["org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"]
        #expect(Set(exported.map(\.name)) == Set(files.map { String($0.dropLast(4)) } + standard))
    }
}
