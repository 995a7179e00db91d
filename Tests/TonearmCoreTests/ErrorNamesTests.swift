import Foundation
import Testing
import TonearmCore

/// The error reasons are one enum, and `dbus/*.xml` documents exactly those: every reason is named there, and every
/// `org.tonearm.Error.*` name written there is a reason.
@Suite struct ErrorNamesTests {
    static let dbus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dbus")

    static func documented() throws -> Set<String> {
        var names: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: dbus.path) where file.hasSuffix(".xml") {
            let text = try String(contentsOf: dbus.appendingPathComponent(file), encoding: .utf8)
            var rest = Substring(text)
            while let range = rest.range(of: "org.tonearm.Error.") {
                let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber }
                if !name.isEmpty { names.insert(String(name)) }
                rest = rest[range.upperBound...]
            }
        }
        return names
    }

    @Test func everyReasonIsDocumentedAndEveryDocumentedNameIsAReason() throws {
        let reasons = Set(TonearmError.Reason.allCases.map(\.rawValue))
        let documented = try Self.documented()
        #expect(reasons.subtracting(documented).sorted() == [], "reasons dbus/*.xml does not document")
        #expect(documented.subtracting(reasons).sorted() == [], "names in dbus/*.xml that are no reason")
    }

    @Test func namesAreTheBusNames() {
        #expect(TonearmError(.noSuchTrack, "x").name == "org.tonearm.Error.NoSuchTrack")
        #expect(TonearmError.noSuchFile("/a").name == "org.tonearm.Error.NoSuchFile")
        #expect(Set(TonearmError.Reason.allCases.map(\.rawValue)).count == TonearmError.Reason.allCases.count)
    }
}
