import PlatformLibc
import FileSystemEventsCore
import SystemPackage

/// The few calls a follower needs beyond the shared ``Syscalls`` layer, in its style (EINTR
/// retried, failures as `Errno`). Paths are bytes, never `FilePath`, because a follower stats
/// its path on every wake-up.
enum FollowerSyscalls {
    /// Opens the file at `path` for reading, following symlinks (a followed `current.log`
    /// means its target). Non-blocking, so a FIFO swapped in at the path between a `statx` and
    /// the open cannot block the caller (the watch's thread, holding the observer's lock); the
    /// caller checks that what it opened is a regular file, for which the flag changes nothing.
    /// A path of `PATH_MAX` bytes or more is walked in steps (``Syscalls/open(atPath:flags:)``):
    /// a log deep in a tree is followed like any other.
    static func openForReading(_ path: [UInt8]) -> Result<CInt, Errno> {
        Syscalls.open(atPath: path, flags: O_RDONLY | O_NOCTTY | O_NONBLOCK)
    }

    /// `statx` of what `path` names, through symlinks when `followSymlinks` is set, however
    /// long the path.
    static func status(_ path: [UInt8], followSymlinks: Bool) -> Result<FileStatus, Errno> {
        Syscalls.status(atPath: path, followSymlinks: followSymlinks)
    }

    /// Whether this process may list and search the directory at `path` (`access(2)` with
    /// `R_OK | X_OK`, by the effective IDs): what a watch of it needs.
    static func canWatch(_ path: [UInt8]) -> Bool {
        guard path.count < Int(PATH_MAX) else { return false }
        return (path + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { faccessat(AT_FDCWD, $0.baseAddress!, R_OK | X_OK, AT_EACCESS) == 0 }
        }
    }

    /// `statx` of an open descriptor (`AT_EMPTY_PATH`): the size the follower compares its
    /// offset with, and the identity it compares the path's with.
    static func status(ofDescriptor descriptor: CInt) -> Result<FileStatus, Errno> {
        Syscalls.status("", relativeTo: descriptor, followSymlinks: false)
    }

    /// Moves a descriptor's offset to `offset` from the start (after a truncation, and to the
    /// starting position).
    static func seek(_ descriptor: CInt, to offset: Int64) -> Result<Void, Errno> {
        valueOrErrno(retryOnInterrupt: true) { lseek(descriptor, off_t(offset), SEEK_SET) }.map { _ in () }
    }

    /// A second descriptor of the same open file, sharing its offset (`F_DUPFD_CLOEXEC`): the
    /// rest of a file whose delivery is split in two generations.
    static func duplicate(_ descriptor: CInt) -> Result<CInt, Errno> {
        valueOrErrno(retryOnInterrupt: true) { fcntl(descriptor, F_DUPFD_CLOEXEC, CInt(0)) }
    }

    /// `pread(2)`: reads at `offset` without moving the descriptor's offset (looking back for
    /// the last lines).
    static func read(
        _ descriptor: CInt,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: Int64
    ) -> Result<Int, Errno> {
        valueOrErrno(retryOnInterrupt: true) { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    }
}
