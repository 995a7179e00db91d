import Testing
import XMLTree

@Suite struct XMLElementTests {
    @Test func readsElementsAttributesAndEntities() throws {
        let root = try XMLElement.parse("<?xml version=\"1.0\"?><!-- hi --><a:r xmlns:a=\"x\" k='v'><b>1 &lt; 2 &amp; &#65;&#x42;</b><c/><![CDATA[<raw>]]></a:r>")
        #expect(root.name == "r")
        #expect(root.attributes == ["k": "v"])
        #expect(root.child("b")?.text == "1 < 2 & AB")
        #expect(root.child("c") != nil)
        #expect(root.text == "<raw>")
    }

    @Test(arguments: [
        ("<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><x>&e;</x>", "document type"),
        ("<x>&e;</x>", "unknown entity"),
        ("<x><y></x>", "closed by"),
        ("<x>", "not closed"),
        ("<x></x><y/>", "after the root"),
        ("<x a=b/>", "not quoted"),
        ("", "no root"),
        ("<x><!ENTITY e \"boom\"></x>", "declaration inside"),
    ])
    func refuses(_ text: String, _ reason: String) {
        #expect(throws: XMLError.self) { try XMLElement.parse(text) }
        do { _ = try XMLElement.parse(text) } catch { #expect(error.description.contains(reason), "\(error)") }
    }

    @Test func boundsDepthAndCount() {
        let deep = String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40)
        #expect(throws: XMLError.self) { try XMLElement.parse(deep, maximumDepth: 32) }
        let wide = "<a>" + String(repeating: "<b/>", count: 300) + "</a>"
        #expect(throws: XMLError.self) { try XMLElement.parse(wide, maximumElements: 200) }
    }

    @Test func aSkippedDoctypeIsPassedOverUnread() throws {
        let introspection = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node><interface name="a.b"><method name="M"/></interface></node>
            """
        let root = try XMLElement.parse(introspection, doctype: .skipped)
        #expect(root.name == "node")
        #expect(root.child("interface")?.attributes["name"] == "a.b")
        // Brackets and a '>' inside quoted literals do not end it early.
        let quoted = try XMLElement.parse("<!DOCTYPE x SYSTEM \"a>]b.dtd\"><x>1</x>", doctype: .skipped)
        #expect(quoted.text == "1")
        // The default still refuses any.
        #expect(throws: XMLError.self) { try XMLElement.parse(introspection) }
    }

    @Test func anEntityASkippedDoctypeDeclaresStaysUnknown() {
        let text = "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><x>&e;</x>"
        do {
            _ = try XMLElement.parse(text, doctype: .skipped)
            Issue.record("an entity of the internal subset was taken")
        } catch {
            #expect(error.description.contains("unknown entity"), "\(error)")
        }
        #expect(throws: XMLError.self) { try XMLElement.parse("<!DOCTYPE x [<!ENTITY e \"boom\">", doctype: .skipped) }
        #expect(throws: XMLError.self) { try XMLElement.parse("<!ELEMENT x ANY><x/>", doctype: .skipped) }
    }
}
