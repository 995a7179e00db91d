import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import XMLTree

/// The renderer's HTTP side: the device and service descriptions, SOAP control and GENA subscriptions.
extension UPnPRenderer {
    static let subscribe = HTTPRequest.Method("SUBSCRIBE")!
    static let unsubscribe = HTTPRequest.Method("UNSUBSCRIBE")!
    static let soapAction = HTTPField.Name("SOAPACTION")!
    static let sid = HTTPField.Name("SID")!
    static let nt = HTTPField.Name("NT")!
    static let callback = HTTPField.Name("CALLBACK")!
    static let timeoutField = HTTPField.Name("TIMEOUT")!
    static let ext = HTTPField.Name("EXT")!

    func application(onRunning: @escaping @Sendable (Int) -> Void) throws -> some ApplicationProtocol {
        let router = Router(context: UPnPContext.self)
        router.get("/upnp/description.xml") { _, _ in self.xml(self.deviceDescription) }
        for service in ServiceDefinition.all {
            let scpd = service.scpd
            router.get(RouterPath(service.scpdPath)) { _, _ in self.xml(scpd) }
            router.post(RouterPath(service.controlPath)) { request, context in await self.control(request, context, service) }
            router.on(RouterPath(service.eventPath), method: Self.subscribe) { request, context in
                await self.subscribe(request, context, service)
            }
            router.on(RouterPath(service.eventPath), method: Self.unsubscribe) { request, _ in
                await self.unsubscribe(request, service)
            }
        }
        let settings = settings
        // A controller that opens a connection and sends nothing is dropped.
        return Application(router: router, server: .http1(configuration: .init(idleTimeout: .seconds(30))),
                           configuration: ApplicationConfiguration(address: .hostname(settings.address, port: settings.port),
                                                                   serverName: Self.serverHeader),
                           onServerRunning: { channel in onRunning(channel.localAddress?.port ?? settings.port) },
                           logger: logger)
    }

    /// The root device description (UPnP Device Architecture 1.0; DLNA's DMR class for phone apps that look for it).
    var deviceDescription: String {
        var services = ""
        for s in ServiceDefinition.all {
            services += "<service><serviceType>\(s.type)</serviceType><serviceId>\(s.id)</serviceId><SCPDURL>\(s.scpdPath)</SCPDURL>"
                + "<controlURL>\(s.controlPath)</controlURL><eventSubURL>\(s.eventPath)</eventSubURL></service>"
        }
        return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<root xmlns=\"urn:schemas-upnp-org:device-1-0\" xmlns:dlna=\"urn:schemas-dlna-org:device-1-0\">"
            + "<specVersion><major>1</major><minor>0</minor></specVersion><device>"
            + "<deviceType>\(Self.deviceType)</deviceType><friendlyName>\(xmlEscaped(settings.name))</friendlyName>"
            + "<manufacturer>Tonearm</manufacturer><manufacturerURL>https://github.com/tonearm</manufacturerURL>"
            + "<modelDescription>Tonearm music player daemon</modelDescription><modelName>Tonearm</modelName><modelNumber>1</modelNumber>"
            + "<UDN>\(descriptionUDN())</UDN><dlna:X_DLNADOC>DMR-1.50</dlna:X_DLNADOC><serviceList>\(services)</serviceList></device></root>"
    }

    private func control(_ request: Request, _ context: UPnPContext, _ service: ServiceDefinition) async -> Response {
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: Self.maximumBody) } catch {
            return Response(status: .contentTooLarge, headers: [.contentType: "text/plain"],
                            body: .init(byteBuffer: ByteBuffer(string: "a control request is at most \(Self.maximumBody) bytes\n")))
        }
        do throws(UPnPError) {
            let call = try SOAP.call(String(buffer: body), soapAction: request.headers[Self.soapAction])
            if !call.serviceType.isEmpty, call.serviceType != service.type {
                throw UPnPError.invalidAction("\(call.serviceType) is not served at \(service.controlPath)")
            }
            let outputs = try await perform(call, on: service)
            return xml(SOAP.response(call.action, serviceType: service.type, outputs))
        } catch {
            logger.info("UPnP: \(context.remote) \(service.name): error \(error.code) \(error.description)")
            return xml(SOAP.fault(error), status: .internalServerError)
        }
    }

    private func subscribe(_ request: Request, _ context: UPnPContext, _ service: ServiceDefinition) async -> Response {
        let h = request.headers
        do throws(GENAError) {
            if let sid = h[Self.sid] {
                guard h[Self.callback] == nil, h[Self.nt] == nil else { throw GENAError(400, "a renewal has SID and no CALLBACK or NT") }
                let seconds = try await events.renew(sid: sid, service: service.name, timeout: h[Self.timeoutField])
                return granted(sid, seconds)
            }
            let (sid, seconds) = try await events.subscribe(service: service.name, callback: h[Self.callback], nt: h[Self.nt],
                                                           timeout: h[Self.timeoutField], remote: context.remote)
            return granted(sid, seconds)
        } catch {
            logger.info("UPnP: \(context.remote) cannot subscribe to \(service.name): \(error.reason)")
            return Response(status: .init(code: error.status), headers: [.contentLength: "0"])
        }
    }

    private func unsubscribe(_ request: Request, _ service: ServiceDefinition) async -> Response {
        guard let sid = request.headers[Self.sid] else { return Response(status: .preconditionFailed) }
        do throws(GENAError) {
            try await events.unsubscribe(sid: sid, service: service.name)
            return Response(status: .ok, headers: [.contentLength: "0"])
        } catch {
            return Response(status: .init(code: error.status), headers: [.contentLength: "0"])
        }
    }

    private func granted(_ sid: String, _ seconds: Int) -> Response {
        Response(status: .ok, headers: [Self.sid: sid, Self.timeoutField: "Second-\(seconds)", .server: Self.serverHeader,
                                        .contentLength: "0"])
    }

    func xml(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/xml; charset=\"utf-8\"", Self.ext: "", .server: Self.serverHeader],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
