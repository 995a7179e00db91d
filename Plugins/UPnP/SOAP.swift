import Foundation
import XMLTree

/// A UPnP control error: the code a controller acts on and a description a person can read.
public struct UPnPError: Error, Sendable, Equatable {
    public var code: Int
    public var description: String

    public init(_ code: Int, _ description: String) {
        self.code = code
        self.description = description
    }

    public static func invalidAction(_ name: String) -> UPnPError { UPnPError(401, "Invalid Action: \(name)") }
    public static func invalidArgs(_ why: String) -> UPnPError { UPnPError(402, "Invalid Args: \(why)") }
    public static func actionFailed(_ why: String) -> UPnPError { UPnPError(501, "Action Failed: \(why)") }
    public static let transitionNotAvailable = UPnPError(701, "Transition not available")
    public static let invalidInstanceID = UPnPError(718, "Invalid InstanceID")
}

/// SOAP as UPnP control uses it: one action with string arguments in, its out-arguments or a UPnPError fault back.
public enum SOAP {
    /// A call: the action's name, the service type it names, and its arguments by name.
    public struct Call: Sendable, Equatable {
        public var action: String
        public var serviceType: String
        public var arguments: [String: String]
    }

    /// Reads a control request's body; `soapAction` is the SOAPACTION header, if any, which must agree with it.
    public static func call(_ body: String, soapAction: String?) throws(UPnPError) -> Call {
        let root: XMLElement
        do { root = try XMLElement.parse(body, maximumDepth: 8, maximumElements: 200) } catch {
            throw UPnPError(402, "Invalid Args: the request is not well-formed XML (\(error))")
        }
        guard root.name == "Envelope", let soapBody = root.child("Body"), let element = soapBody.children.first else {
            throw UPnPError(401, "Invalid Action: the request is not a SOAP envelope with an action in its body")
        }
        var arguments: [String: String] = [:]
        for argument in element.children where arguments[argument.name] == nil { arguments[argument.name] = argument.text }
        var serviceType = ""
        if let header = soapAction {
            let trimmed = header.trimmingCharacters(in: ["\"", " "])
            guard let hash = trimmed.lastIndex(of: "#"), String(trimmed[trimmed.index(after: hash)...]) == element.name else {
                throw UPnPError(401, "Invalid Action: SOAPACTION \(header) does not name the body's action \(element.name)")
            }
            serviceType = String(trimmed[..<hash])
        }
        return Call(action: element.name, serviceType: serviceType, arguments: arguments)
    }

    /// The response envelope of `action` with its out-arguments in order.
    public static func response(_ action: String, serviceType: String, _ outputs: [(String, String)]) -> String {
        var body = "<u:\(action)Response xmlns:u=\"\(serviceType)\">"
        for (name, value) in outputs { body += "<\(name)>\(xmlEscaped(value))</\(name)>" }
        body += "</u:\(action)Response>"
        return envelope(body)
    }

    /// The fault envelope of an error (sent with HTTP 500).
    public static func fault(_ error: UPnPError) -> String {
        envelope("<s:Fault><faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail>"
                 + "<UPnPError xmlns=\"urn:schemas-upnp-org:control-1-0\"><errorCode>\(error.code)</errorCode>"
                 + "<errorDescription>\(xmlEscaped(error.description))</errorDescription></UPnPError></detail></s:Fault>")
    }

    static func envelope(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\" "
            + "s:encodingStyle=\"http://schemas.xmlsoap.org/soap/encoding/\"><s:Body>\(body)</s:Body></s:Envelope>"
    }
}
