/// The JSON bodies of the LocalSend protocol (v2.1, with v2.2's fields).
public enum LocalSendMessages {
    /// A device as register, info, announcements and prepare-upload describe it.
    public struct DeviceInfo: Codable, Sendable, Equatable {
        public var alias: String
        public var version: String?
        public var deviceModel: String?
        public var deviceType: String?
        public var fingerprint: String?
        public var port: Int?
        public var `protocol`: String?
        public var download: Bool?
        public var announce: Bool?
        /// Older (v1) announcements say `announcement`.
        public var announcement: Bool?

        public init(alias: String, version: String?, deviceModel: String?, deviceType: String?, fingerprint: String?, port: Int?,
                    protocol: String?, download: Bool?, announce: Bool? = nil) {
            self.alias = alias
            self.version = version
            self.deviceModel = deviceModel
            self.deviceType = deviceType
            self.fingerprint = fingerprint
            self.port = port
            self.protocol = `protocol`
            self.download = download
            self.announce = announce
        }
    }

    public struct FileMetadata: Codable, Sendable, Equatable {
        public var id: String
        public var fileName: String
        public var size: Int64
        public var fileType: String?
        public var sha256: String?
    }

    public struct PrepareUpload: Codable, Sendable {
        public var info: DeviceInfo
        public var files: [String: FileMetadata]
    }

    /// The keys of the top-level "files" object of a prepare-upload body, in the order the sender wrote them
    /// (decoding into a dictionary loses it). Empty when the body is not such JSON.
    public static func fileOrder(_ body: some Collection<UInt8>) -> [String] {
        var scanner = JSONKeyScanner(Array(body))
        return scanner.keysOfTopLevelObject(named: "files")
    }

    public struct PrepareUploadResponse: Codable, Sendable {
        public var sessionId: String
        public var files: [String: String]
    }

    public struct ErrorBody: Codable, Sendable {
        public var message: String
    }
}
