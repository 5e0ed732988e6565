#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Glibc
import Synchronization
import SystemPackage

/// The real kernel, except that looking at a name in some directories fails with `EACCES`: a
/// directory a watcher may list but not search (mode `0600`, or `0` after it was watched),
/// as an unprivileged watcher sees it while root writes there. A test running as root cannot
/// make the kernel refuse it, so this kernel does.
///
/// Changes may also be put off to the next read (``ChangesBeforeNextRead``).
struct RefusedExaminationKernel: RealKernelWrapper {
    /// Whether lookups are refused; shared with the test, which lifts the refusal where the
    /// real kernel would (a `chmod` that makes the directory searchable, a move out of it).
    final class Refusal: Sendable {
        private let refusing = Mutex(true)
        var isOn: Bool { refusing.withLock { $0 } }
        func lift() { refusing.withLock { $0 = false } }
    }

    var real: RawInotifyKernel
    private let refused: [(device: UInt64, inode: UInt64)]
    private let changes: ChangesBeforeNextRead
    private let refusal: Refusal

    init(refusingLookupsIn directories: [FilePath], changes: ChangesBeforeNextRead, refusal: Refusal = Refusal()) throws(FileSystemEventsError) {
        var refused: [(device: UInt64, inode: UInt64)] = []
        for directory in directories {
            var status = stat()
            guard stat(directory.string, &status) == 0 else {
                throw .systemCallFailed(call: "stat", path: directory, errno: Errno(rawValue: errno))
            }
            refused.append((UInt64(status.st_dev), UInt64(status.st_ino)))
        }
        real = try RawInotifyKernel()
        self.refused = refused
        self.changes = changes
        self.refusal = refusal
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        changes.makeWaiting()
        return real.read(into: &events, maximumBytes: maximumBytes)
    }

    func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno> {
        var status = stat()
        if refusal.isOn, fstat(directory, &status) == 0,
           refused.contains(where: { $0.device == UInt64(status.st_dev) && $0.inode == UInt64(status.st_ino) }) {
            return .failure(.permissionDenied)
        }
        return real.status(of: name, relativeTo: directory, followSymlinks: followSymlinks)
    }
}
#endif
