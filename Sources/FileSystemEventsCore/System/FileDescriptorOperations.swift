import PlatformLibc
import CFileSystemEventsShims
package import SystemPackage

/// Thin, typed wrappers over the descriptor calls the backends share.
///
/// Each one retries `EINTR` and reports failure as `Errno`, so a backend never inspects
/// `errno` itself and never forgets the retry loop.
package enum Syscalls {
    /// Opens a directory relative to `directory` without following a final symlink, so a
    /// symlink swapped in for a directory during a scan is reported, not traversed.
    package static func openDirectory(
        _ name: UnsafePointer<CChar>,
        relativeTo directory: CInt,
        followSymlinks: Bool = false,
        forLookupOnly: Bool = false
    ) -> Result<CInt, Errno> {
        let flags = directoryFlags(followSymlinks: followSymlinks, forLookupOnly: forLookupOnly)
        return valueOrErrno(retryOnInterrupt: true) { openat(directory, name, flags) }
    }

    /// The `open` flags of a directory opened for listing, or only to look names up in
    /// (`O_PATH`), following a final symlink or not.
    static func directoryFlags(followSymlinks: Bool, forLookupOnly: Bool) -> CInt {
        (forLookupOnly ? pathOnlyFlag : O_RDONLY) | O_DIRECTORY | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW)
    }

    /// Opens a path for reading attributes only (used to pin a root while it is scanned).
    /// A path of `PATH_MAX` bytes or more (which the kernel refuses in one piece) is walked in
    /// steps (``open(atPath:flags:)``).
    package static func open(_ path: FilePath, flags: CInt) -> Result<CInt, Errno> {
        let opened = path.withPlatformString { name in
            valueOrErrno(retryOnInterrupt: true) { Libc.open(name, flags) }
        }
        if case .failure(.fileNameTooLong) = opened { return open(atPath: path.bytes, flags: flags) }
        return opened
    }

    /// Closes a descriptor. `EINTR` is not retried: on Linux the descriptor is gone either way.
    @discardableResult
    package static func close(_ descriptor: CInt) -> Result<Void, Errno> {
        valueOrErrno(
            {
                #if canImport(Glibc)
                Glibc.close(descriptor)
                #elseif canImport(Musl)
                Musl.close(descriptor)
                #else
                Darwin.close(descriptor)
                #endif
            }()
        ).map { _ in () }
    }

    /// Whether `descriptor` is open (`fcntl(F_GETFD)` does not fail with `EBADF`).
    package static func isOpen(_ descriptor: CInt) -> Bool {
        if case .failure(.badFileDescriptor) = valueOrErrno(retryOnInterrupt: true, { fcntl(descriptor, F_GETFD) }) { return false }
        return true
    }

    /// `read(2)` into `buffer`; `.wouldBlock` means the descriptor is drained.
    package static func read(
        _ descriptor: CInt,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Result<Int, Errno> {
        valueOrErrno(retryOnInterrupt: true) {
            #if canImport(Glibc)
            Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            #elseif canImport(Musl)
            Musl.read(descriptor, buffer.baseAddress, buffer.count)
            #else
            Darwin.read(descriptor, buffer.baseAddress, buffer.count)
            #endif
        }
    }

    /// `write(2)` of a whole (small) buffer.
    package static func write(
        _ descriptor: CInt,
        _ buffer: UnsafeRawBufferPointer
    ) -> Result<Int, Errno> {
        valueOrErrno(retryOnInterrupt: true) {
            #if canImport(Glibc)
            Glibc.write(descriptor, buffer.baseAddress, buffer.count)
            #elseif canImport(Musl)
            Musl.write(descriptor, buffer.baseAddress, buffer.count)
            #else
            Darwin.write(descriptor, buffer.baseAddress, buffer.count)
            #endif
        }
    }

    /// Writes all of `buffer`, however many calls that takes.
    ///
    /// A descriptor may be non-blocking without its writer knowing: the process that made a
    /// pipe (a Node.js or Python parent, a shell that shares its terminal) sets `O_NONBLOCK`
    /// on its end, and the flag belongs to the open file both ends share. Such a write stops
    /// short or fails with `EAGAIN` whenever the reader is behind; it then waits here until the
    /// descriptor takes more, instead of failing.
    package static func writeAll(_ descriptor: CInt, _ buffer: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        var offset = 0
        while offset < buffer.count {
            switch write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
            case .success(let written):
                offset += written
            case .failure(.resourceTemporarilyUnavailable):
                var descriptorState = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if case .failure(let errno) = valueOrErrno(retryOnInterrupt: true, { poll(&descriptorState, 1, -1) }) {
                    return .failure(errno)
                }
            case .failure(let errno):
                return .failure(errno)
            }
        }
        return .success(())
    }

    /// How many bytes wait unread in the pipe (or socket) `descriptor`, from either end of it
    /// (`FIONREAD`).
    package static func bytesWaiting(_ descriptor: CInt) -> Result<Int, Errno> {
        valueOrErrno(cfse_bytes_waiting(descriptor)).map(Int.init)
    }

    /// Waits up to `timeoutMilliseconds` for the write end `descriptor` of a pipe to report
    /// that no reader is left (`POLLERR`, or `POLLHUP`): whether it did.
    package static func waitForReadersGone(_ descriptor: CInt, timeoutMilliseconds: CInt) -> Result<Bool, Errno> {
        var state = pollfd(fd: descriptor, events: 0, revents: 0)
        return valueOrErrno(retryOnInterrupt: true) { poll(&state, 1, timeoutMilliseconds) }
            .map { _ in state.revents & Int16(POLLERR | POLLHUP) != 0 }
    }

    /// Waits for any of `descriptors` to become readable.
    ///
    /// - Parameter timeoutMilliseconds: -1 waits forever.
    /// - Returns: the `revents` of each descriptor, in order.
    package static func pollReadable(
        _ descriptors: [CInt],
        timeoutMilliseconds: CInt
    ) -> Result<[Int16], Errno> {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = nfds_t(fds.count)
        return valueOrErrno(retryOnInterrupt: true) { poll(&fds, count, timeoutMilliseconds) }
            .map { _ in fds.map(\.revents) }
    }

    /// Waits for either of two descriptors to become readable, allocating nothing: an inotify
    /// watch's thread waits here once per kernel read, and a subscription's once per delivery,
    /// where the array form made three arrays (descriptors, `pollfd`s, results) on every
    /// wake-up. Every wait on two descriptors uses this form.
    ///
    /// - Parameter timeoutMilliseconds: -1 waits forever.
    /// - Returns: whether each descriptor has `revents` set, in order.
    package static func pollReadable(
        _ first: CInt, _ second: CInt,
        timeoutMilliseconds: CInt
    ) -> Result<(first: Bool, second: Bool), Errno> {
        var fds = (pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0))
        return withUnsafeMutableBytes(of: &fds) { raw in
            let pointer = raw.baseAddress!.assumingMemoryBound(to: pollfd.self)
            return valueOrErrno(retryOnInterrupt: true) { poll(pointer, 2, timeoutMilliseconds) }
                .map { _ in (pointer[0].revents != 0, pointer[1].revents != 0) }
        }
    }

    /// Wakes whoever polls the read end of a wakeup pipe (made by ``pipe()``): one byte, and a
    /// full pipe is fine, since it already wakes its reader.
    package static func signalWakeup(_ writeEnd: CInt) {
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { write(writeEnd, $0) }
    }

    /// Reads a wakeup pipe empty, once its reader has woken.
    package static func drainWakeups(_ readEnd: CInt) {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { buffer in
            while case .success(let count) = read(readEnd, into: buffer), count > 0 {}
        }
    }

    /// The soft limit on open descriptors (`getrlimit(RLIMIT_NOFILE)`).
    package static func openFileLimit() -> Result<UInt64, Errno> {
        var limit = rlimit()
        return valueOrErrno(getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)).map { _ in UInt64(limit.rlim_cur) }
    }

    /// A close-on-exec, non-blocking pipe: `(read, write)`.
    package static func pipe() -> Result<(read: CInt, write: CInt), Errno> {
        var fds: [CInt] = [-1, -1]
        return valueOrErrno(retryOnInterrupt: true) { cfse_pipe_cloexec_nonblock(&fds) }
            .map { _ in (fds[0], fds[1]) }
    }

    /// `statx`/`fstatat` relative to `directory` without following a final symlink (unless asked).
    package static func status(
        _ name: UnsafePointer<CChar>,
        relativeTo directory: CInt,
        followSymlinks: Bool = false
    ) -> Result<FileStatus, Errno> {
        var raw = cfse_status()
        return valueOrErrno(retryOnInterrupt: true) {
            cfse_status_at(directory, name, followSymlinks ? 1 : 0, &raw)
        }.map { _ in FileStatus(raw) }
    }

    /// Status of an absolute or working-directory-relative path, however long
    /// (``status(atPath:followSymlinks:)`` past `PATH_MAX`).
    package static func status(_ path: FilePath, followSymlinks: Bool = false) -> Result<FileStatus, Errno> {
        let found = path.withPlatformString { status($0, relativeTo: AT_FDCWD, followSymlinks: followSymlinks) }
        if case .failure(.fileNameTooLong) = found { return status(atPath: path.bytes, followSymlinks: followSymlinks) }
        return found
    }
}


#if os(Linux)
extension Syscalls {
    /// `madvise(MADV_DONTNEED)`: unmaps the pages of `length` bytes from `start` (a page
    /// boundary). A private file mapping's pages are mapped again from the file on the next
    /// access, so this is for mappings that hold nothing but a copy of the file
    /// (``MemoryRelease/unmapStartUpFilePages()``).
    package static func adviseDontNeed(_ start: UnsafeMutableRawPointer, length: UInt) -> Result<Void, Errno> {
        nothingOrErrno(retryOnInterrupt: true) { madvise(start, Int(length), MADV_DONTNEED) }
    }
}
#endif
