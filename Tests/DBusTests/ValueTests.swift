import DBus
import Testing

@Suite struct ValueTests {
    @Test func signatures() {
        #expect(DBusValue.vardict([:]).signature == "a{sv}")
        #expect(DBusValue.stringArray([]).signature == "as")
        #expect(DBusValue.objectPathArray(["/a"]).signature == "ao")
        #expect(DBusValue.structure([.int32(1), .string("x"), .array(element: "a{sv}", [])]).signature == "(isaa{sv})")
        #expect(DBusValue.dictionary(key: "i", value: "as", []).signature == "a{ias}")
        #expect(DBusValue.variant(.int64(1)).signature == "v")
    }

    @Test func conveniences() {
        let v = DBusValue.variant(.vardict(["b": .bool(true), "a": .variant(.string("x"))]))
        #expect(v.vardictValue == ["a": .string("x"), "b": .bool(true)])
        // Keys sorted for determinism, values wrapped once.
        #expect(DBusValue.vardict(["b": .int32(1), "a": .int32(2)]) == .dictionary(key: "s", value: "v", [
            DBusDictEntry(key: .string("a"), value: .variant(.int32(2))),
            DBusDictEntry(key: .string("b"), value: .variant(.int32(1))),
        ]))
        #expect(DBusValue.variant(.variant(.objectPath("/x"))).stringValue == "/x")
        #expect(DBusValue.variant(.uint32(7)).int64Value == 7)
        #expect(DBusValue.byte(7).int64Value == 7)
        #expect(DBusValue.uint64(.max).int64Value == nil)
        #expect(DBusValue.variant(.double(0.5)).doubleValue == 0.5)
        #expect(DBusValue.variant(.bool(false)).boolValue == false)
        #expect(DBusValue.stringArray(["a"]).arrayValue == [.string("a")])
        #expect(DBusValue.variant(.variant(.int32(1))).unwrapped == .int32(1))
        #expect(DBusValue.string("x").int64Value == nil)
    }

    @Test func errors() {
        #expect(DBusError.invalidArgs("m").name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(DBusError.unknownMethod("m").name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(DBusError.unknownInterface("m").name == "org.freedesktop.DBus.Error.UnknownInterface")
        #expect(DBusError.unknownProperty("m").name == "org.freedesktop.DBus.Error.UnknownProperty")
        #expect(DBusError.unknownObject("m").name == "org.freedesktop.DBus.Error.UnknownObject")
        #expect(DBusError.propertyReadOnly("m").name == "org.freedesktop.DBus.Error.PropertyReadOnly")
        #expect(DBusError.failed("m").name == "org.freedesktop.DBus.Error.Failed")
        #expect(DBusError.serviceUnknown("m").name == "org.freedesktop.DBus.Error.ServiceUnknown")
        #expect(DBusError.noReply("m").name == "org.freedesktop.DBus.Error.NoReply")
        #expect(DBusError(name: "a.B", message: "c").description == "a.B: c")
    }

    @Test func matchRule() {
        #expect(DBusMatchRule().ruleString == "type='signal'")
        #expect(DBusMatchRule(sender: "org.x", path: "/p", interface: "org.x.I", member: "M").ruleString
            == "type='signal',sender='org.x',path='/p',interface='org.x.I',member='M'")
        #expect(DBusMatchRule(member: "it's").ruleString == "type='signal',member='it'\\''s'")
    }
}

@Suite struct IntrospectionXMLTests {
    @Test func parsesTheSample() throws {
        #expect(sampleInterfaces.map(\.name) == ["org.tonearm.Test1", "org.tonearm.Other1"])
        let t = sampleInterfaces[0]
        #expect(t.method(named: "EchoMany")?.inSignature == "a{sv}asaoxdbuaa{sv}")
        #expect(t.method(named: "EchoMany")?.outSignature == "a{sv}asaoxdbuaa{sv}")
        #expect(t.method(named: "Add")?.inSignature == "ii")  // no direction = in
        #expect(t.method(named: "Add")?.arguments[0].direction == nil)
        #expect(t.method(named: "Crash")?.arguments == [])
        #expect(t.method(named: "Emit")?.annotations == ["org.freedesktop.DBus.Method.NoReply": "false"])
        #expect(t.signal(named: "Tick")?.signature == "u")
        #expect(t.property(named: "Count")?.access == .read)
        #expect(t.property(named: "Secret")?.access == .write)
        #expect(t.property(named: "Volume")?.annotations["org.freedesktop.DBus.Property.EmitsChangedSignal"] == "true")
        #expect(t.annotations["org.tonearm.Comment"] == "quotes \" & <angles>")
    }

    @Test func roundTripIsStable() throws {
        for iface in sampleInterfaces {
            let xml = iface.introspectionXML()
            let again = try DBusInterfaceDescription.parse(xml: "<node>\n" + xml + "</node>")
            #expect(again == [iface])
            #expect(again[0].introspectionXML() == xml)
            // A bare <interface> parses too.
            #expect(try DBusInterfaceDescription.parse(xml: xml) == [iface])
        }
    }

    @Test func canonicalForm() {
        let i = DBusInterfaceDescription(
            name: "org.x.Y",
            methods: [.init(name: "M", arguments: [.init(name: "a", type: "s", direction: .in), .init(type: "v", direction: .out)])],
            signals: [.init(name: "S")],
            properties: [.init(name: "P", type: "b", access: .readwrite)],
            annotations: ["z": "1", "a": "2"])
        #expect(i.introspectionXML() == """
              <interface name="org.x.Y">
                <method name="M">
                  <arg name="a" type="s" direction="in"/>
                  <arg type="v" direction="out"/>
                </method>
                <signal name="S"/>
                <property name="P" type="b" access="readwrite"/>
                <annotation name="a" value="2"/>
                <annotation name="z" value="1"/>
              </interface>

            """)
    }

    @Test(arguments: [
        "",
        "<node>",
        "<node><interface></interface></node>",
        "<node><interface name=\"a.b\"><method name=\"M\"><arg type=\"zz\"/></method></interface></node>",
        "<node><interface name=\"a.b\"><property name=\"P\" type=\"s\" access=\"sometimes\"/></interface></node>",
        "<node><interface name=\"a.b\"></node>",
        "<doc/>",
        "<node><interface name=\"a.b\" x=\"&bogus;\"/></node>",
    ])
    func rejectsMalformed(_ xml: String) {
        #expect(throws: DBusError.self) { try DBusInterfaceDescription.parse(xml: xml) }
    }
}
