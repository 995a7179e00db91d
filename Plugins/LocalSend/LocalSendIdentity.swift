import Crypto
import Foundation
import Glibc
import SwiftASN1
import X509

/// The receiver's TLS identity: a self-signed certificate made at first start and kept (its key readable by the
/// owner only), so the fingerprint phones remember stays the same across restarts.
public struct LocalSendIdentity: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String
    /// SHA-256 of the certificate's DER, upper-case hex: what LocalSend calls the fingerprint.
    public let fingerprint: String

    public enum Failure: Error, CustomStringConvertible {
        case io(String)
        case certificate(String)
        public var description: String {
            switch self {
            case .io(let s), .certificate(let s): s
            }
        }
    }

    /// Loads the identity from `folder`, or makes and stores a new one (validity from a day ago, for clocks that
    /// are behind, to 10 years ahead).
    public static func loadOrCreate(in folder: URL, alias: String, now: Date = Date()) throws -> LocalSendIdentity {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyURL = folder.appendingPathComponent("key.pem"), certURL = folder.appendingPathComponent("cert.pem")
        if let keyPEM = try? String(contentsOf: keyURL, encoding: .utf8), let certPEM = try? String(contentsOf: certURL, encoding: .utf8),
           let loaded = try? LocalSendIdentity(certificatePEM: certPEM, privateKeyPEM: keyPEM) {
            chmod(keyURL.path, 0o600)
            return loaded
        }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName(alias)
            OrganizationName("Tonearm")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(3650 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true, keyEncipherment: true)
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
            },
            issuerPrivateKey: .init(key))
        let certPEM = try certificate.serializeAsPEM().pemString
        try write(key.pemRepresentation, to: keyURL, mode: 0o600)
        try write(certPEM, to: certURL, mode: 0o644)
        return try LocalSendIdentity(certificatePEM: certPEM, privateKeyPEM: key.pemRepresentation)
    }

    init(certificatePEM: String, privateKeyPEM: String) throws {
        let certificate = try Certificate(pemEncoded: certificatePEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw Failure.certificate("the stored certificate is not for the stored key")
        }
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        fingerprint = Self.fingerprint(der: serializer.serializedBytes)
    }

    /// The LocalSend fingerprint of a certificate given as DER.
    public static func fingerprint(der: [UInt8]) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
    }

    /// Writes a new file with `mode` from the start (a key is never readable by others, not even for a moment),
    /// then renames it into place.
    private static func write(_ text: String, to url: URL, mode: mode_t) throws {
        let temp = url.path + ".new"
        unlink(temp)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure.io("cannot write \(temp): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
        fsync(fd)
        close(fd)
        guard written == bytes.count, rename(temp, url.path) == 0 else {
            unlink(temp)
            throw Failure.io("cannot write \(url.path): \(String(cString: strerror(errno)))")
        }
    }
}
