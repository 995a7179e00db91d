/// A reply being written: `key: value` lines, raw text and binary chunks, as bytes.
public struct Reply: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// An empty reply with room for `capacity` bytes (a `status` is about 300).
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    public mutating func line(_ key: String, _ value: String) {
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: ": ".utf8)
        bytes.append(contentsOf: value.utf8)
        bytes.append(0x0a)
    }

    public mutating func line<N: BinaryInteger>(_ key: String, _ value: N) {
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: ": ".utf8)
        appendDecimal(value)
        bytes.append(0x0a)
    }

    /// `key: value` with `places` decimals (see `decimal`), written without making a string.
    public mutating func decimalLine(_ key: String, _ value: Double, places: Int) {
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: ": ".utf8)
        appendFixed(value, places: places)
        bytes.append(0x0a)
    }

    /// `time: ELAPSED:DURATION` in whole seconds, the old form clients still read.
    public mutating func time(elapsed: Double, duration: Double) {
        bytes.append(contentsOf: "time: ".utf8)
        appendDecimal(Int(elapsed.rounded()))
        bytes.append(UInt8(ascii: ":"))
        appendDecimal(Int(duration.rounded()))
        bytes.append(0x0a)
    }

    /// The decimal digits of `value`, with a minus sign when negative.
    private mutating func appendDecimal<N: BinaryInteger>(_ value: N) {
        guard value != 0 else { return bytes.append(UInt8(ascii: "0")) }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        while magnitude > 0 {
            let (quotient, digit) = magnitude.quotientAndRemainder(dividingBy: 10)
            bytes.append(UInt8(ascii: "0") + UInt8(digit))
            magnitude = quotient
        }
        bytes[start...].reverse()
    }

    /// `value` with `places` decimals, as printf's `%.Nf` writes it (ties aside), without `String(format:)`, which
    /// took a third of a `status` round trip. For the magnitudes the protocol has (seconds, decibels).
    public static func decimal(_ value: Double, places: Int) -> String {
        var reply = Reply()
        reply.appendFixed(value, places: places)
        return String(decoding: reply.bytes, as: UTF8.self)
    }

    /// What `decimal` says of `value`, written into the reply.
    private mutating func appendFixed(_ value: Double, places: Int) {
        guard value.isFinite else { return append(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf") }
        var scale = 1
        for _ in 0..<places { scale *= 10 }
        let total = Int((abs(value) * Double(scale)).rounded(.toNearestOrEven))
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDecimal(total / scale)
        guard places > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        let fraction = total % scale
        var digits = 1, rest = fraction
        while rest >= 10 { rest /= 10; digits += 1 }
        for _ in digits..<places { bytes.append(UInt8(ascii: "0")) }
        appendDecimal(fraction)
    }

    public mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// `binary: N`, the bytes, and a newline.
    public mutating func binary(_ data: some Collection<UInt8>) {
        line("binary", data.count)
        bytes.append(contentsOf: data)
        bytes.append(0x0a)
    }

    public mutating func append(_ other: Reply) { bytes.append(contentsOf: other.bytes) }
}

extension Reply {
    /// A song's lines (without Pos/Id), written straight into the reply: a tag value's newlines become spaces.
    public mutating func song(_ song: MPDSong) {
        line("file", song.file)
        for (name, value) in song.tags {
            if value.utf8.contains(0x0a) {
                line(name, value.replacingOccurrences(of: "\n", with: " "))
            } else {
                line(name, value)
            }
        }
        if let duration = song.duration {
            line("Time", Int(duration.rounded()))
            line("duration", MPDSong.milliseconds(duration))
        }
    }
}
