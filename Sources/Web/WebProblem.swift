import TonearmCore

/// An error answer as RFC 9457 problem+json, carrying the same `org.tonearm.Error.*` name as the bus.
public struct WebProblem: Error, Sendable, Equatable {
    public var status: Int
    /// The reason, as in `org.tonearm.Error.<reason>`.
    public var reason: TonearmError.Reason
    public var detail: String

    public init(status: Int, reason: TonearmError.Reason, detail: String) {
        self.status = status
        self.reason = reason
        self.detail = detail
    }

    static func badRequest(_ detail: String) -> WebProblem { .init(status: 400, reason: .invalidArgument, detail: detail) }
    static func notFound(_ detail: String) -> WebProblem { .init(status: 404, reason: .notFound, detail: detail) }
    static func forbidden(_ detail: String) -> WebProblem { .init(status: 403, reason: .forbidden, detail: detail) }
    static func unauthorized(_ detail: String) -> WebProblem { .init(status: 401, reason: .unauthorized, detail: detail) }
    static func tooLarge(_ limit: Int) -> WebProblem {
        .init(status: 413, reason: .tooLarge, detail: "the body is larger than \(limit / 1024) KiB")
    }

    /// The answer for a player or plugin error: its reason picks the status.
    init(_ error: TonearmError) {
        let status: Int
        switch error.reason {
        case _ where error.reason.rawValue.hasPrefix("NoSuch"), .notFound, .nothingPlaying, .noLyrics, .noArt: status = 404
        case .invalidValue, .invalidArgument, .invalidArgs, .invalidUri, .invalidConfig, .unsupportedScheme: status = 400
        case .notReadable, .forbidden: status = 403
        case .unauthorized: status = 401
        case .tooLarge: status = 413
        case .timedOut: status = 504
        default: status = 422
        }
        self.init(status: status, reason: error.reason, detail: error.message)
    }

    /// Any error as an answer; what is not a `TonearmError` is the server's fault.
    static func from(_ error: any Error) -> WebProblem {
        if let problem = error as? WebProblem { return problem }
        if let error = error as? TonearmError { return WebProblem(error) }
        return .init(status: 500, reason: .failed, detail: "\(error)")
    }

    var json: JSON {
        ["type": .string("urn:tonearm:error:\(reason.rawValue)"), "title": .string(reason.rawValue), "status": .int(Int64(status)),
         "detail": .string(detail), "error": .string("org.tonearm.Error.\(reason.rawValue)")]
    }
}
