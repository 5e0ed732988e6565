import FileSystemEventsCore
import PlatformLibc

/// Writes whole batches straight to descriptor 1, so each batch reaches a pipe at once
/// (stdio would hold it back in a block buffer). A closed pipe ends the program quietly, as
/// `filewatch ... | head` expects; a reader that is merely behind on a non-blocking pipe is
/// waited for (``Syscalls/writeAll(_:_:)``); any other failure (a full disk, a revoked
/// terminal) ends it with one line that says so, since every later event would be lost too.
struct StandardOutput: Sendable {
    func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        switch bytes.withUnsafeBytes({ Syscalls.writeAll(1, $0) }) {
        case .success:
            return
        case .failure(.brokenPipe):
            exit(0)
        case .failure(let errno):
            StandardError.line("filewatch: error: cannot write to standard output (\(errno)); stopping, since every later event would be lost")
            exit(1)
        }
    }
}

enum StandardError {
    /// Writes `text` as one line: a control character in it (a path may hold a newline) is
    /// written escaped, `\n` as the two characters `\` `n`, so that a message is always one
    /// line, and a name cannot forge a second `filewatch: error:` line.
    static func line(_ text: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 1)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\n"): bytes += Array("\\n".utf8)
            case UInt8(ascii: "\r"): bytes += Array("\\r".utf8)
            case UInt8(ascii: "\t"): bytes += Array("\\t".utf8)
            case 0..<0x20, 0x7F:
                let digits = Array("0123456789abcdef".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { Libc.write(2, $0.baseAddress, $0.count) }
    }
}
