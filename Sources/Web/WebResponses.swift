import Foundation
import Hummingbird

/// The few kinds of answer the face gives.
enum WebResponses {
    /// The headers of every JSON answer (the router's and `QuickReads`').
    static let jsonHeaders: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
    /// The `Server` header's value.
    static let serverName = "Tonearm"

    static func json(_ value: JSON, status: Int = 200) -> Response {
        Response(status: .init(code: status), headers: jsonHeaders,
                 body: .init(byteBuffer: ByteBuffer(bytes: value.bytes)))
    }

    static func problem(_ problem: WebProblem) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json", .cacheControl: "no-store"]
        if problem.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"tonearm\"" }
        return Response(status: .init(code: problem.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: problem.json.bytes)))
    }

    static func empty(_ status: Int = 204) -> Response { Response(status: .init(code: status)) }

    static func bytes(_ bytes: [UInt8], type: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
