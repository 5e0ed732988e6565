import PlatformLibc
package import SystemPackage

/// Whole-file reads and crash-safe replacement, for files a program keeps between runs
/// (saved snapshots).
///
/// A replacement goes through a temporary file in the same directory: written, `fsync`ed,
/// renamed over the target, and the directory `fsync`ed. `rename(2)` is atomic, so a reader
/// (or a crash at any moment) sees the old file or the new one, never a mix; the directory
/// `fsync` makes the rename itself durable.
package enum WholeFile {
    /// A failed step: the system call and its errno.
    package struct Failure: Error {
        package var call: String
        package var errno: Errno
    }

    /// Replaces the file at `path` with `bytes`. On failure the previous file is untouched and
    /// the temporary file is removed.
    ///
    /// Every step is relative to one descriptor of the directory, opened once (in steps where
    /// its path is longer than PATH_MAX): the temporary file, the rename and the `fsync` all
    /// act on the same directory even if its path is re-pointed meanwhile.
    package static func replace(_ path: FilePath, with bytes: [UInt8], permissions: UInt32 = 0o644) throws(Failure) {
        var directoryPath = path.removingLastComponent()
        if directoryPath.isEmpty { directoryPath = "." }
        let name = path.lastComponent?.string ?? "file"
        let temporary = ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

        // `O_PATH` anchors the `*at` calls below without asking for read permission on a
        // directory that may only be writable and searchable.
        let directory: CInt
        switch Syscalls.open(directoryPath, flags: Syscalls.pathOnlyFlag | O_DIRECTORY | O_CLOEXEC) {
        case .success(let fd): directory = fd
        case .failure(let errno): throw Failure(call: "open", errno: errno)
        }
        defer { Syscalls.close(directory) }

        let descriptor: CInt
        switch valueOrErrno(retryOnInterrupt: true, { openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions)) }) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw Failure(call: "open", errno: errno)
        }
        var isInPlace = false
        defer { if !isInPlace { _ = unlinkat(directory, temporary, 0) } }

        var failure: Failure?
        if case .failure(let errno) = writeAll(descriptor, bytes) {
            failure = Failure(call: "write", errno: errno)
        } else if case .failure(let errno) = nothingOrErrno(retryOnInterrupt: true, { fsync(descriptor) }) {
            failure = Failure(call: "fsync", errno: errno)
        }
        // close(2) reports deferred write errors on some file systems (NFS): it counts.
        if case .failure(let errno) = Syscalls.close(descriptor), failure == nil {
            failure = Failure(call: "close", errno: errno)
        }
        if let failure { throw failure }

        let renamed = nothingOrErrno(retryOnInterrupt: true) { renameat(directory, temporary, directory, name) }
        if case .failure(let errno) = renamed { throw Failure(call: "rename", errno: errno) }
        isInPlace = true

        // Make the rename durable. Some file systems refuse fsync on a directory (EINVAL): the
        // rename is then as durable as they make anything. A directory this user may not read
        // cannot be opened for it: the rename stands, as durable as the file system's own
        // journal makes it.
        if case .success(let readable) = valueOrErrno(retryOnInterrupt: true, { openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) {
            let synced = nothingOrErrno(retryOnInterrupt: true) { fsync(readable) }
            Syscalls.close(readable)
            if case .failure(let errno) = synced, errno != .invalidArgument {
                throw Failure(call: "fsync (directory)", errno: errno)
            }
        }
    }

    /// What ``read(_:maximumPrefix:)`` found.
    package enum Contents {
        /// The file's bytes.
        case bytes([UInt8])
        /// Not a regular file (a directory, a device, a pipe): nothing was read.
        case notRegularFile
    }

    /// Reads a whole regular file.
    ///
    /// Opened without blocking: `open(2)` of a FIFO waits for a writer, and `changes --since`
    /// given one (a pipe is no snapshot, which the check after the open says) hung there for
    /// good. A regular file reads the same either way.
    package static func read(_ path: FilePath) throws(Failure) -> Contents {
        let descriptor: CInt
        switch Syscalls.open(path, flags: O_RDONLY | O_CLOEXEC | O_NONBLOCK) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw Failure(call: "open", errno: errno)
        }
        defer { Syscalls.close(descriptor) }
        var info = stat()
        if case .failure(let errno) = nothingOrErrno(retryOnInterrupt: true, { fstat(descriptor, &info) }) {
            throw Failure(call: "fstat", errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegularFile }

        // Read to end of file, starting from the size fstat gave (the file may change size
        // while it is read; whatever is read is what the checksum then judges).
        var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 0) + 1)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096))) }
            let result = bytes.withUnsafeMutableBytes { buffer in
                Syscalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
            }
            switch result {
            case .success(0):
                bytes.removeSubrange(count...)
                return .bytes(bytes)
            case .success(let read):
                count += read
            case .failure(let errno):
                throw Failure(call: "read", errno: errno)
            }
        }
    }

    private static func writeAll(_ descriptor: CInt, _ bytes: [UInt8]) -> Result<Void, Errno> {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                switch Syscalls.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
                case .success(let written): offset += written
                case .failure(let errno): return .failure(errno)
                }
            }
            return .success(())
        }
    }
}
