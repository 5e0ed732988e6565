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
    static func line(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { Libc.write(2, $0.baseAddress, $0.count) }
    }
}
