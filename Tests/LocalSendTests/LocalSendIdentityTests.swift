import Foundation
import LocalSend
import TestSupport
import Testing

@Suite struct LocalSendIdentityTests {
    @Test func madeOnceKeptPrivateAndStable() async throws {
        let dir = TemporaryDirectory("localsend-identity")
        let folder = dir.url.appendingPathComponent("identity")
        let first = try LocalSendIdentity.loadOrCreate(in: folder, alias: "Tonearm test")
        let again = try LocalSendIdentity.loadOrCreate(in: folder, alias: "another alias")
        #expect(first.fingerprint == again.fingerprint)
        #expect(first.fingerprint.count == 64 && first.fingerprint.allSatisfy { "0123456789ABCDEF".contains($0) })
        let key = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("key.pem").path)
        #expect((key[.posixPermissions] as? Int) == 0o600)
        // The fingerprint is the SHA-256 of the certificate's DER, as openssl computes it.
        let (out, _, status) = try await runProcess("/usr/bin/openssl", ["x509", "-in", folder.appendingPathComponent("cert.pem").path,
                                                                       "-noout", "-fingerprint", "-sha256", "-startdate"])
        #expect(status == 0)
        #expect(out.contains("=" + stride(from: 0, to: 64, by: 2).map { i in
            String(first.fingerprint[first.fingerprint.index(first.fingerprint.startIndex, offsetBy: i)...].prefix(2)) }.joined(separator: ":")))
        // Valid from the past, for clocks that are behind.
        let start = out.split(separator: "\n").first { $0.hasPrefix("notBefore=") }.map { String($0.dropFirst(10)) } ?? ""
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy zzz"
        let notBefore = try #require(formatter.date(from: start.replacingOccurrences(of: "  ", with: " ")), "\(start)")
        #expect(notBefore < Date().addingTimeInterval(-3600))
    }

    @Test func aBrokenStoreIsReplaced() throws {
        let dir = TemporaryDirectory("localsend-identity")
        let folder = dir.url.appendingPathComponent("identity")
        let first = try LocalSendIdentity.loadOrCreate(in: folder, alias: "x")
        try "garbage".write(to: folder.appendingPathComponent("cert.pem"), atomically: true, encoding: .utf8)
        let second = try LocalSendIdentity.loadOrCreate(in: folder, alias: "x")
        #expect(second.fingerprint != first.fingerprint)
    }
}
