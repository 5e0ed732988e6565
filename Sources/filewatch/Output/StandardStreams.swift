import PlatformLibc

/// Writes whole batches straight to descriptor 1, so each batch reaches a pipe at once
/// (stdio would hold it back in a block buffer). A closed pipe ends the program quietly, as
/// `filewatch ... | head` expects.
struct StandardOutput: Sendable {
    func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Libc.write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                exit(errno == EPIPE ? 0 : 1)
            }
            offset += written
        }
    }
}

enum StandardError {
    static func line(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { Libc.write(2, $0.baseAddress, $0.count) }
    }
}
