import PlatformLibc
package import SystemPackage
import CFileSystemEventsShims

// Paths of any depth. The kernel refuses a path of `PATH_MAX` (4096) bytes or more with
// `ENAMETOOLONG`, yet any user who may write in a tree can make one deeper than that (17
// directories with 250-byte names will do). A watcher that resolves such paths in one call
// goes blind below that depth, so these calls walk a long path a few components at a time,
// each step relative to a descriptor of the one before.

extension Syscalls {
    /// The longest path handed to the kernel in one call; well below `PATH_MAX` (4096 on
    /// Linux, 1024 on Darwin) so a step plus its terminating NUL always fits.
    package static let longPathStep = Int(PATH_MAX) * 3 / 4

    /// `O_PATH` (Linux): a descriptor that only anchors a path walk, needing no read permission
    /// on the directories passed through. Glibc hides it behind `_GNU_SOURCE`.
    #if os(Linux)
    package static let pathOnlyFlag: CInt = 0o10000000
    #else
    package static let pathOnlyFlag: CInt = O_RDONLY
    #endif

    /// `/proc/self/fd/N`: a short path to what `descriptor` is open on, for the calls that take
    /// a path and no descriptor (`inotify_add_watch`, the `*xattr` calls). Built from bytes:
    /// a start-up's crawl makes one per directory.
    package static func processDescriptorPath(_ descriptor: CInt) -> [UInt8] {
        var path: [UInt8] = []
        path.reserveCapacity(processDescriptorPrefix.count + 10)
        path.append(contentsOf: processDescriptorPrefix)
        var digits: [UInt8] = []
        var value = UInt32(bitPattern: descriptor)
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(value % 10))
            value /= 10
        } while value > 0
        path.append(contentsOf: digits.reversed())
        return path
    }

    private static let processDescriptorPrefix = Array("/proc/self/fd/".utf8)

    /// Gives the calling thread a working directory of its own (`unshare(CLONE_FS)`), so that
    /// ``changeWorkingDirectory(to:)`` there moves no other thread. Then `.` is the shortest
    /// path to an open directory for the calls that take only a path: `inotify_add_watch` of
    /// `.` after `fchdir` took 3.3 µs a directory here, of `/proc/self/fd/N` 6.0 µs, most of it
    /// spent resolving procfs's links. Only for a thread this package started for one job:
    /// from then on it no longer follows the process's `chdir`, and a relative path given to
    /// it means its own directory.
    package static func separateWorkingDirectory() -> Result<Void, Errno> {
        valueOrErrno(cfse_unshare_working_directory()).map { _ in () }
    }

    /// `fchdir(2)`: needs search permission on the directory, which `/proc/self/fd` does not.
    package static func changeWorkingDirectory(to descriptor: CInt) -> Result<Void, Errno> {
        valueOrErrno(retryOnInterrupt: true) { fchdir(descriptor) }.map { _ in () }
    }

    /// `chdir("/")`, for a thread done with ``changeWorkingDirectory(to:)``: in a directory of a
    /// tree, it would keep that busy (a file system mounted there could not be unmounted).
    @discardableResult
    package static func leaveWorkingDirectory() -> Result<Void, Errno> {
        valueOrErrno(retryOnInterrupt: true) { chdir("/") }.map { _ in () }
    }

    /// `.`, the working directory, as a path.
    package static let workingDirectoryPath: [UInt8] = [UInt8(ascii: ".")]

    /// An `O_PATH` descriptor of `name` in `directory` (following a final symlink unless told
    /// not to), which pins the item it names: what is checked through it is what is then
    /// watched through `/proc/self/fd`, even if the name is re-pointed in between.
    package static func openPathOnly(_ name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool = true) -> Result<CInt, Errno> {
        let flags = pathOnlyFlag | O_CLOEXEC | (followSymlinks ? 0 : O_NOFOLLOW)
        return valueOrErrno(retryOnInterrupt: true) { openat(directory, name, flags) }
    }

    /// Opens the directory at `path` (absolute or working-directory-relative bytes), however
    /// long it is, for listing, or only to look names up in it (`forLookupOnly`: `O_PATH`).
    /// Symlinks in the middle of the path are followed as the kernel would; a final symlink
    /// only when `followSymlinks` is set.
    package static func openDirectory(atPath path: [UInt8], followSymlinks: Bool, forLookupOnly: Bool = false) -> Result<CInt, Errno> {
        open(atPath: path, flags: directoryFlags(followSymlinks: followSymlinks, forLookupOnly: forLookupOnly))
    }

    /// `statx` of the item at `path`, however long it is.
    package static func status(atPath path: [UInt8], followSymlinks: Bool = false) -> Result<FileStatus, Errno> {
        withParent(of: path) { directory, name in
            status(name, relativeTo: directory, followSymlinks: followSymlinks)
        }
    }

    /// `statx` of an open descriptor (`AT_EMPTY_PATH`).
    package static func status(ofDescriptor descriptor: CInt) -> Result<FileStatus, Errno> {
        status("", relativeTo: descriptor, followSymlinks: false)
    }

    /// `statx` of an open descriptor, and whether it is the root of a mount (a bind mount's
    /// included; `false` where the kernel cannot tell, before Linux 5.8, or off Linux).
    package static func statusAndMountRoot(ofDescriptor descriptor: CInt) -> Result<(status: FileStatus, isMountRoot: Bool), Errno> {
        var raw = cfse_status()
        return valueOrErrno(retryOnInterrupt: true) { cfse_status_at(descriptor, "", 0, &raw) }
            .map { _ in (FileStatus(raw), raw.is_mount_root != 0) }
    }

    /// The identity of the item at `path` (a final symlink not followed), however long the
    /// path is, and the ID of the mount it is reached through (`STATX_MNT_ID`): one directory
    /// seen at two paths is mounted twice only if the two mount IDs differ. The mount ID is
    /// `nil` where the kernel (before Linux 5.8) or the platform cannot tell the mount.
    package static func mountedIdentity(atPath path: [UInt8]) -> Result<(identity: FileIdentity, mountID: UInt64?), Errno> {
        withParent(of: path) { directory, name in
            var mountID: UInt64 = 0
            var device: UInt64 = 0
            var inode: UInt64 = 0
            return valueOrErrno(retryOnInterrupt: true) { cfse_mount_id_at(directory, name, &mountID, &device, &inode) }
                .map { _ in (FileIdentity(device: device, inode: inode), mountID == 0 ? nil : mountID) }
        }
    }

    /// Swaps the items at two paths atomically (`renameat2(RENAME_EXCHANGE)`, Linux).
    package static func exchange(_ first: [UInt8], _ second: [UInt8]) -> Result<Void, Errno> {
        withCString(first) { a in
            withCString(second) { b in nothingOrErrno(retryOnInterrupt: true) { cfse_exchange(a, b) } }
        }
    }

    /// `openat(2)` of `path` with `flags`, however long the path is.
    package static func open(atPath path: [UInt8], flags: CInt) -> Result<CInt, Errno> {
        withParent(of: path) { directory, name in
            valueOrErrno(retryOnInterrupt: true) { openat(directory, name, flags | O_CLOEXEC) }
        }
    }

    /// Calls `body` with a directory descriptor and a short name that together mean `path`:
    /// `base` (the working directory by default; for a relative path only) and the path itself
    /// when it is short enough, otherwise a descriptor opened by walking the leading components
    /// in steps.
    package static func withParent<T>(
        of path: [UInt8],
        relativeTo base: CInt = AT_FDCWD,
        _ body: (CInt, UnsafePointer<CChar>) -> Result<T, Errno>
    ) -> Result<T, Errno> {
        if path.count < longPathStep {
            return withCString(path) { body(base, $0) }
        }
        let slash = UInt8(ascii: "/")
        var directory = base
        var start = 0
        defer { if directory != base { _ = close(directory) } }
        while path.count - start >= longPathStep {
            // Cut at the last separator that keeps this step short enough.
            var cut = start + longPathStep - 1
            while cut > start && path[cut] != slash { cut -= 1 }
            // No separator in a whole step: one component longer than any file system allows.
            guard cut > start else { return .failure(.fileNameTooLong) }
            let opened = withCString(Array(path[start..<cut])) { name in
                valueOrErrno(retryOnInterrupt: true) { openat(directory, name, pathOnlyFlag | O_DIRECTORY | O_CLOEXEC) }
            }
            switch opened {
            case .success(let next):
                if directory != base { _ = close(directory) }
                directory = next
            case .failure(let errno):
                return .failure(errno)
            }
            start = cut + 1
            while start < path.count && path[start] == slash { start += 1 }
        }
        let rest = start < path.count ? Array(path[start...]) : [UInt8(ascii: ".")]
        return withCString(rest) { body(directory, $0) }
    }
}
