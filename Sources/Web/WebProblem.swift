import TonearmCore

/// An error answer as RFC 9457 problem+json, carrying the same `org.tonearm.Error.*` name as the bus.
public struct WebProblem: Error, Sendable, Equatable {
    public var status: Int
    /// The reason, as in `org.tonearm.Error.<reason>`.
    public var reason: String
    public var detail: String

    public init(status: Int, reason: String, detail: String) {
        self.status = status
        self.reason = reason
        self.detail = detail
    }

    static func badRequest(_ detail: String) -> WebProblem { .init(status: 400, reason: "InvalidArgument", detail: detail) }
    static func notFound(_ detail: String) -> WebProblem { .init(status: 404, reason: "NotFound", detail: detail) }
    static func forbidden(_ detail: String) -> WebProblem { .init(status: 403, reason: "Forbidden", detail: detail) }
    static func unauthorized(_ detail: String) -> WebProblem { .init(status: 401, reason: "Unauthorized", detail: detail) }
    static func tooLarge(_ limit: Int) -> WebProblem {
        .init(status: 413, reason: "TooLarge", detail: "the body is larger than \(limit / 1024) KiB")
    }

    /// The answer for a player or plugin error: its reason picks the status.
    init(_ error: TonearmError) {
        let status: Int
        switch error.reason {
        case _ where error.reason.hasPrefix("NoSuch"), "NotFound", "NothingPlaying", "NoTrack", "NoLyrics", "NoArt": status = 404
        case "InvalidValue", "InvalidArgument", "InvalidQuery", "InvalidConfig", "UnsupportedScheme", "InvalidName": status = 400
        case "NotReadable", "Forbidden": status = 403
        case "TimedOut": status = 504
        default: status = 422
        }
        self.init(status: status, reason: error.reason, detail: error.message)
    }

    /// Any error as an answer; what is not a `TonearmError` is the server's fault.
    static func from(_ error: any Error) -> WebProblem {
        if let problem = error as? WebProblem { return problem }
        if let error = error as? TonearmError { return WebProblem(error) }
        return .init(status: 500, reason: "Failed", detail: "\(error)")
    }

    var json: JSON {
        ["type": .string("urn:tonearm:error:\(reason)"), "title": .string(reason), "status": .int(Int64(status)),
         "detail": .string(detail), "error": .string("org.tonearm.Error.\(reason)")]
    }
}
