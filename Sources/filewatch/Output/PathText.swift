import FileSystemEvents

/// Paths as bytes, and the two lossless ways the CLI prints them.
enum PathText {
    /// The path as a string when its bytes are valid UTF-8.
    static func utf8(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// For people: printable as is, with `\n`, `\t`, `\\` and `\xNN` for anything that is not
    /// valid, printable UTF-8, so one event is always one line and nothing is lost.
    static func escapedForTerminal(_ bytes: [UInt8]) -> String {
        var result = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                switch byte {
                case UInt8(ascii: "\n"): result += "\\n"
                case UInt8(ascii: "\t"): result += "\\t"
                case UInt8(ascii: "\\"): result += "\\\\"
                case 0..<0x20, 0x7F: result += hexEscape(byte)
                default: result.unicodeScalars.append(Unicode.Scalar(byte))
                }
                index += 1
                continue
            }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if length > 1, index + length <= bytes.count,
                let text = String(validating: bytes[index..<index + length], as: UTF8.self)
            {
                result += text
                index += length
            } else {
                result += hexEscape(byte)
                index += 1
            }
        }
        return result
    }

    private static func hexEscape(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0xF)])"
    }

    /// Standard base64 with padding (RFC 4648), for `pathBytes`.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var result = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = (UInt32(chunk[0]) << 16) | (UInt32(chunk.count > 1 ? chunk[1] : 0) << 8) | UInt32(chunk.count > 2 ? chunk[2] : 0)
            result.append(alphabet[Int((value >> 18) & 63)])
            result.append(alphabet[Int((value >> 12) & 63)])
            result.append(chunk.count > 1 ? alphabet[Int((value >> 6) & 63)] : "=")
            result.append(chunk.count > 2 ? alphabet[Int(value & 63)] : "=")
            index += 3
        }
        return result
    }
}
