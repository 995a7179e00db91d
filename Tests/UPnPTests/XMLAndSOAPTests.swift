import Testing
import XMLTree
@testable import UPnP

@Suite struct XMLAndSOAPTests {
    static let play = """
        <?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>\
        <u:Play xmlns:u="urn:schemas-upnp-org:service:AVTransport:1"><InstanceID>0</InstanceID><Speed>1</Speed></u:Play>\
        </s:Body></s:Envelope>
        """

    @Test func readsACall() throws {
        let call = try SOAP.call(Self.play, soapAction: "\"urn:schemas-upnp-org:service:AVTransport:1#Play\"")
        #expect(call.action == "Play")
        #expect(call.serviceType == "urn:schemas-upnp-org:service:AVTransport:1")
        #expect(call.arguments == ["InstanceID": "0", "Speed": "1"])
    }

    @Test func refusesAMismatchedSOAPAction() {
        #expect(throws: UPnPError.self) { try SOAP.call(Self.play, soapAction: "\"urn:schemas-upnp-org:service:AVTransport:1#Stop\"") }
        #expect(throws: UPnPError.self) { try SOAP.call("<x/>", soapAction: nil) }
    }

    @Test func writesResponsesAndFaults() throws {
        let response = SOAP.response("GetVolume", serviceType: "urn:t", [("CurrentVolume", "5 & <6>")])
        let body = try XMLElement.parse(response).find("GetVolumeResponse")
        #expect(body?.child("CurrentVolume")?.text == "5 & <6>")
        let fault = try XMLElement.parse(SOAP.fault(UPnPError(718, "Invalid InstanceID")))
        #expect(fault.find("errorCode")?.text == "718")
        #expect(fault.find("errorDescription")?.text == "Invalid InstanceID")
    }

    @Test func readsDIDLLite() {
        let didl = """
            <DIDL-Lite xmlns="urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/" xmlns:dc="http://purl.org/dc/elements/1.1/" \
            xmlns:upnp="urn:schemas-upnp-org:metadata-1-0/upnp/"><item id="64$1" parentID="64" restricted="1">\
            <dc:title>Song &amp; Dance</dc:title><dc:creator>Someone</dc:creator><upnp:artist>Band</upnp:artist>\
            <upnp:artist role="AlbumArtist">Various</upnp:artist><upnp:album>Record</upnp:album><upnp:genre>Jazz</upnp:genre>\
            <upnp:originalTrackNumber>3</upnp:originalTrackNumber><upnp:albumArtURI>http://10.0.0.2:8200/art/1.jpg</upnp:albumArtURI>\
            <res protocolInfo="http-get:*:audio/ogg:*" duration="0:03:07.500">http://10.0.0.2:8200/MediaItems/1.ogg</res></item></DIDL-Lite>
            """
        let item = DIDLLite.item(didl)
        #expect(item?.title == "Song & Dance")
        #expect(item?.artists == ["Band"])
        #expect(item?.albumArtists == ["Various"])
        #expect(item?.album == "Record")
        #expect(item?.genres == ["Jazz"])
        #expect(item?.trackNumber == 3)
        #expect(item?.artURL == "http://10.0.0.2:8200/art/1.jpg")
        #expect(item?.duration == 187_500_000)
        #expect(DIDLLite.item("") == nil)
        #expect(DIDLLite.item("NOT_IMPLEMENTED") == nil)
        #expect(DIDLLite.item("<not-didl/>") == nil)
        // A local cover path is no art URL a controller may hand over.
        #expect(DIDLLite.item(didl.replacingOccurrences(of: "http://10.0.0.2:8200/art/1.jpg", with: "file:///etc/passwd"))?.artURL == nil)
    }

    @Test func takesOnlyWebURLs() {
        #expect(DIDLLite.isWebURL("http://host/x.mp3"))
        #expect(DIDLLite.isWebURL("HTTPS://host/x.mp3"))
        for bad in ["file:///etc/passwd", "/home/me/song.ogg", "smb://nas/x", "http://", "ftp://h/x", "tonearm:x"] {
            #expect(!DIDLLite.isWebURL(bad), "\(bad)")
        }
    }
}
