import FileSystemEventsCore
import PlatformLibc
import SystemPackage

/// Writes whole batches straight to descriptor 1, so each batch reaches a pipe at once
/// (stdio would hold it back in a block buffer). A closed pipe ends the program quietly, as
/// `filewatch ... | head` expects; a reader that is merely behind on a non-blocking pipe is
/// waited for (``Syscalls/writeAll(_:_:)``); any other failure (a full disk, a revoked
/// terminal) ends it with one line that says so, since every later event would be lost too.
///
/// Output made of records, one per line (JSON Lines, the text columns), reaches a pipe in
/// pieces of whole lines of at most `PIPE_BUF` bytes, which the kernel writes all at once or
/// not at all. One `write(2)` of a whole batch is split by the kernel wherever the pipe
/// fills; a watch that must then exit without finishing it (a second signal, or a stop that
/// waited 2 s for a reader that stopped reading) left half a record in the pipe, which the
/// reader took for a line (a stalled reader and `SIGINT` after a burst: polling 10 runs of
/// 10, inotify 2 of 10). A line longer than `PIPE_BUF` (a path of thousands of bytes) is
/// written on its own, and only it can still be cut so.
struct StandardOutput: Sendable {
    /// The bytes are records, one per line, to be written whole (see above); `false` for the
    /// raw bytes of a followed file, which have no records to keep whole.
    private let writesWholeLines: Bool

    init(writesWholeLines: Bool = true) {
        self.writesWholeLines = writesWholeLines
    }

    func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let result = bytes.withUnsafeBytes { buffer in
            writesWholeLines && Self.isPipe ? Self.writeInWholeLines(buffer) : Syscalls.writeAll(1, buffer)
        }
        switch result {
        case .success:
            return
        case .failure(.brokenPipe):
            exit(0)
        case .failure(let errno):
            StandardError.line("filewatch: error: cannot write to standard output (\(errno)); stopping, since every later event would be lost")
            exit(1)
        }
    }

    /// Waits until the reader of a pipe has read everything written to it: `false` if it went
    /// away first, leaving some unread (`true` at once for output that is not a pipe).
    ///
    /// For a command that commits to what it printed (`changes --update` saving the snapshot
    /// it reported against): with the whole output in the pipe's buffer, the writes succeed
    /// whether or not anyone reads, and a reader that stopped before reading lost what it left.
    /// A reader that reads everything and uses part of it (`head -1`) cannot be told apart;
    /// ``ChangesCommand``'s `--save` lets it commit itself.
    func waitUntilRead() -> Bool {
        guard Self.isPipe else { return true }
        while case .success(let unread) = Syscalls.bytesWaiting(1), unread > 0 {
            if case .success(true) = Syscalls.waitForReadersGone(1, timeoutMilliseconds: 20) { return false }
        }
        return true
    }

    /// Whether descriptor 1 is a pipe, the only kind of output where a write up to `PIPE_BUF`
    /// bytes is atomic (a file takes a whole write anyway; a terminal has no records to keep).
    private static let isPipe: Bool = {
        guard case .success(let status) = Syscalls.status("", relativeTo: 1, followSymlinks: false) else { return false }
        return status.mode & UInt32(S_IFMT) == UInt32(S_IFIFO)
    }()

    /// The largest write a pipe takes atomically (POSIX requires at least 512; Linux: 4096).
    private static var atomicPipeWrite: Int { Int(PIPE_BUF) }

    /// Writes `buffer` in pieces of whole lines, each at most ``atomicPipeWrite`` bytes unless
    /// it is one longer line.
    private static func writeInWholeLines(_ buffer: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        var start = 0
        while start < buffer.count {
            var end = buffer.count
            if end - start > atomicPipeWrite {
                let window = UnsafeRawBufferPointer(rebasing: buffer[start..<(start + atomicPipeWrite)])
                if let lastNewline = window.lastIndex(of: UInt8(ascii: "\n")) {
                    end = start + lastNewline + 1
                } else if let newline = buffer[(start + atomicPipeWrite)...].firstIndex(of: UInt8(ascii: "\n")) {
                    end = newline + 1  // one line longer than an atomic write, on its own
                }
            }
            if case .failure(let errno) = Syscalls.writeAll(1, UnsafeRawBufferPointer(rebasing: buffer[start..<end])) {
                return .failure(errno)
            }
            start = end
        }
        return .success(())
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
