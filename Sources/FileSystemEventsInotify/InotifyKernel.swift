#if os(Linux)
package import FileSystemEventsCore
import CFileSystemEventsShims
package import SystemPackage

/// Where an inotify watch gets its kernel events from: direct system calls
/// (``RawInotifyKernel``), or a library that owns the inotify descriptor (libinotifytools).
///
/// ``InotifyWatch`` holds all the logic that makes a watch lose nothing (watch-then-list,
/// cookie pairing, overflow reconciliation); a kernel only adds and removes watches and hands
/// over events, in the kernel's order.
package protocol InotifyKernel: SendableMetatype {
    /// Becomes readable when events may be waiting; the watch `poll`s it with its wakeup pipe.
    var readinessDescriptor: CInt { get }
    /// Adds (or finds) the watch for the directory at `path`. The watch passes a
    /// `/proc/self/fd/N` path for a directory it has opened and checked, so a kernel must not
    /// answer from a cache of paths it has seen.
    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno>
    mutating func removeWatch(_ watch: CInt)
    /// Appends the events that are waiting, about `maximumBytes` of them where the kernel
    /// lets the caller choose. `.failure(.resourceTemporarilyUnavailable)` means none were
    /// (the queue is drained).
    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno>
    /// Whether events are waiting that ``read(into:)`` has not returned yet: the model is
    /// then behind the disk, and what a path holds now may not be what an event meant.
    func hasPendingEvents() -> Bool

    /// Releases every descriptor and watch.
    mutating func close()

    /// The inotify descriptor, where another thread may add watches to it while the watch's
    /// own thread works (a start-up's ``CrawlPrefetcher``); `nil` where only the kernel's
    /// own methods may touch it (a library's bookkeeping, a test kernel's script). The default
    /// is `nil`.
    var concurrentInotifyDescriptor: CInt? { get }

    /// Looks at a name the kernel reported created (`statx` relative to its directory's
    /// descriptor): the one system call a watch makes per creation, here so that a test kernel
    /// can count them. The default makes the call.
    func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno>
}

extension InotifyKernel {
    package var concurrentInotifyDescriptor: CInt? { nil }

    package func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno> {
        Syscalls.status(name, relativeTo: directory, followSymlinks: followSymlinks)
    }
}

/// inotify through direct system calls: one descriptor per watch, read into a 256 KiB buffer.
package struct RawInotifyKernel: InotifyKernel {
    package let readinessDescriptor: CInt
    private let buffer: UnsafeMutableRawBufferPointer
    private var isClosed = false

    package static let readBufferSize = 256 * 1024

    /// Creates the inotify instance; the errors name the sysctl to raise.
    package init() throws(FileSystemEventsError) {
        switch Inotify.initialize() {
        case .success(let fd): readinessDescriptor = fd
        case .failure(let errno):
            throw InotifyLimits.initializationError(errno, call: "inotify_init1")
        }
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBufferSize, alignment: 8)
    }

    package mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        Inotify.addWatch(readinessDescriptor, path: path, mask: mask)
    }

    package mutating func removeWatch(_ watch: CInt) {
        Inotify.removeWatch(readinessDescriptor, watch: watch)
    }

    package mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        // Never less than one event with the longest name, or the kernel refuses the read.
        let size = min(buffer.count, max(4_096, maximumBytes))
        switch Syscalls.read(readinessDescriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<size])) {
        case .success(let count):
            guard count > 0 else { return .failure(.resourceTemporarilyUnavailable) }
            Inotify.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]), into: &events)
            return .success(())
        case .failure(let errno):
            return .failure(errno)
        }
    }

    package func hasPendingEvents() -> Bool {
        cfse_bytes_waiting(readinessDescriptor) > 0
    }

    /// `inotify_add_watch` is a plain system call on the descriptor: any thread may make it.
    package var concurrentInotifyDescriptor: CInt? { readinessDescriptor }

    package mutating func close() {
        guard !isClosed else { return }
        isClosed = true
        Syscalls.close(readinessDescriptor)
        buffer.deallocate()
    }
}
#endif
