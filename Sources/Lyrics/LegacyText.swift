/// Text from files of unknown encoding: UTF-8 when the bytes are valid UTF-8, else Windows-1252 (which older lyrics
/// files and karaoke MIDI files use; it is Latin-1 with printable characters in 0x80–0x9F).
public enum LegacyText {
    /// The bytes as text (a UTF-8 byte order mark is dropped).
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var bytes = Array(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return windows1252(bytes)
    }

    /// Whether the bytes are valid UTF-8.
    public static func isUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        String(validating: Array(bytes), as: UTF8.self) != nil
    }

    /// The bytes read as Windows-1252; its five undefined bytes are read as Latin-1 control characters.
    public static func windows1252<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if (0x80...0x9F).contains(byte), let mapped = Unicode.Scalar(high[Int(byte - 0x80)]), mapped.value != 0 {
                scalars.append(mapped)
            } else {
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }

    private static let high: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
    ]
}
