import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// The web face's server: what Hummingbird's `Application.run` does (a request context per request, a 500 for an
/// error the responder did not turn into a response, the `Server` and `Date` headers), with the `Date` header written
/// by `HTTPDate` from the C library's calendar. `Application` builds a `DateCache`, whose Gregorian `Calendar` loads
/// ICU's time-zone data and code: about 1.3 MiB of a playing daemon's memory (329 resident pages).
struct WebServer<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let server: HTTPServerBuilder
    let address: BindAddress
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let onServerRunning: @Sendable (any Channel) async -> Void

    func run() async throws {
        let (responder, logger) = (responder, logger)
        let service = try server.buildServer(
            configuration: ServerConfiguration(address: address, serverName: WebResponses.serverName),
            eventLoopGroup: eventLoopGroup, logger: logger
        ) { (request, responseWriter: consuming ResponseWriter, channel) in
            let context = Responder.Context(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("web face: unanswered error: \(error)")
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = HTTPDate.now
            response.headers[.server] = WebResponses.serverName
            try await responseWriter.write(response: response.head, body: response.body)
        } onServerRunning: { [onServerRunning] channel in
            await onServerRunning(channel)
        }
        try await service.run()
    }
}
