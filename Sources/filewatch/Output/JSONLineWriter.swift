import PlatformLibc
import FileSystemEvents

/// Appends JSON straight into bytes: the event lines of `--format json` are the CLI's hot
/// path (a 20,000-file burst is 20,000 lines), and building them from `String` pieces cost a
/// third of the CLI's CPU in a profile of such a burst. Paths go from the `FilePath`'s own
/// storage to the output with one pass that escapes them; nothing is allocated per event.
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    /// The `YYYY-MM-DDTHH:MM:SS` of the last timestamp written, and its second: events in a
    /// batch mostly share one, and `gmtime_r` is then called once.
    private var cachedSecond: Int64 = .min
    private var cachedPrefix: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    /// `"key":`
    mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string of text that is valid UTF-8.
    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { escaped($0) }
    }

    /// Valid UTF-8, quoted and escaped: `"` `\` and control characters (and DEL) as JSON
    /// escapes, everything else as is.
    mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
            if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
            start = index + 1
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            default:
                raw("\\u00")
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xF))
            }
        }
        if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"name":"<path>"`, and when the path's bytes are not valid UTF-8, `"name":"<display
    /// form with U+FFFD>","nameBytes":"<base64 of the exact bytes>"` (docs/cli-json.md).
    mutating func path(_ path: FilePath, key name: StaticString, bytesKey: StaticString) {
        path.withPlatformString { pointer in
            let count = strlen(pointer)
            pointer.withMemoryRebound(to: UInt8.self, capacity: count + 1) { start in
                let utf8 = UnsafeBufferPointer(start: start, count: count)
                key(name)
                if Self.isValidUTF8(utf8) {
                    escaped(utf8)
                } else {
                    string(String(decoding: utf8, as: UTF8.self))
                    byte(UInt8(ascii: ","))
                    key(bytesKey)
                    string(PathText.base64(Array(utf8)))
                }
            }
        }
    }

    mutating func unsigned(_ value: UInt64) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// RFC 3339 in UTC with nanoseconds, quoted: `"2026-11-22T08:30:00.123456789Z"`.
    mutating func timestamp(_ timestamp: FileSystemEvent.Timestamp) {
        bytes.append(UInt8(ascii: "\""))
        timestampText(timestamp)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The same, unquoted: `2026-11-22T08:30:00.123456789Z`.
    mutating func timestampText(_ timestamp: FileSystemEvent.Timestamp) {
        if timestamp.secondsSinceEpoch != cachedSecond {
            cachedSecond = timestamp.secondsSinceEpoch
            var seconds = time_t(timestamp.secondsSinceEpoch)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var prefix: [UInt8] = []
            prefix.reserveCapacity(19)
            Self.padded(Int(parts.tm_year) + 1900, width: 4, into: &prefix)
            prefix.append(UInt8(ascii: "-"))
            Self.padded(Int(parts.tm_mon) + 1, width: 2, into: &prefix)
            prefix.append(UInt8(ascii: "-"))
            Self.padded(Int(parts.tm_mday), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: "T"))
            Self.padded(Int(parts.tm_hour), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: ":"))
            Self.padded(Int(parts.tm_min), width: 2, into: &prefix)
            prefix.append(UInt8(ascii: ":"))
            Self.padded(Int(parts.tm_sec), width: 2, into: &prefix)
            cachedPrefix = prefix
        }
        bytes.append(contentsOf: cachedPrefix)
        bytes.append(UInt8(ascii: "."))
        Self.padded(Int(timestamp.nanoseconds), width: 9, into: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    private static func padded(_ value: Int, width: Int, into out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var value = max(0, value)
        // Wider than `width` (a year past 9999): every digit, not a truncated field.
        while value / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor))
            value %= divisor
            divisor /= 10
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// ASCII is checked byte by byte; anything else by the standard library's validator.
    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x80 {
            return String(validating: bytes, as: UTF8.self) != nil
        }
        return true
    }
}
