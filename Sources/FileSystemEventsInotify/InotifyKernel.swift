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
    /// Whether a ``read(into:maximumBytes:)`` that found nothing proves the queue empty at that
    /// moment, so that asking ``hasPendingEvents()`` right after it tells nothing new. True for
    /// the kernel's own descriptor, where `EAGAIN` is that proof. The default is `false`: a
    /// library that reads on a thread of its own may hold events still on their way to it.
    var emptyReadProvesDrained: Bool { get }
    /// Whether the last ``read(into:maximumBytes:)`` that returned events also proves the queue
    /// was empty when it ended, as `EAGAIN` from one more read would, so that read is not made.
    /// The default is `false`.
    var lastReadEmptiedQueue: Bool { get }

    /// Releases every descriptor and watch.
    mutating func close()

    /// Queues a marker behind every event the kernel has queued so far, and returns the watch
    /// number its `IN_IGNORED` will carry: a watch added on an inode of the kernel's own (never
    /// one the watch added) and removed at once. `nil` where the kernel cannot; the default.
    ///
    /// A rebuild of the model that cannot wait for a drained queue (a tree that never stops
    /// changing) lists the disk while events of earlier changes are still queued. The marker
    /// tells those, which the listing already shows, from the events of later changes.
    mutating func queueMarker() -> CInt?

    /// ``addWatch(path:mask:)`` for another thread than the watch's own, to call while that one
    /// works (a start-up's ``CrawlPrefetcher``); `nil` where only the kernel's own methods may
    /// add watches (a test kernel's script). The default is `nil`.
    ///
    /// The watch must be added on the calling thread: a path relative to that thread's working
    /// directory (`.`) means the directory that thread is in.
    var concurrentWatchAdder: ConcurrentWatchAdder? { get }

    /// Looks at a name the kernel reported created (`statx` relative to its directory's
    /// descriptor): the one system call a watch makes per creation, here so that a test kernel
    /// can count them. The default makes the call.
    func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno>
}

/// `inotify_add_watch` of a path with a mask, as a kernel lets another thread make it
/// (``InotifyKernel/concurrentWatchAdder``).
package typealias ConcurrentWatchAdder = @Sendable (_ path: [UInt8], _ mask: Inotify.Mask) -> Result<CInt, Errno>

extension InotifyKernel {
    package var concurrentWatchAdder: ConcurrentWatchAdder? { nil }

    package var emptyReadProvesDrained: Bool { false }

    package var lastReadEmptiedQueue: Bool { false }

    package mutating func queueMarker() -> CInt? { nil }

    package func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno> {
        Syscalls.status(name, relativeTo: directory, followSymlinks: followSymlinks)
    }
}

/// inotify through direct system calls: one descriptor per watch, read into a 256 KiB buffer.
package struct RawInotifyKernel: InotifyKernel {
    package let readinessDescriptor: CInt
    private let buffer: UnsafeMutableRawBufferPointer
    private var isClosed = false
    /// The inode ``queueMarker()`` watches for a moment: a pipe of its own, made on first use.
    private var markerPipe: (read: CInt, write: CInt)?
    /// Set by each read that returned events (see ``read(into:maximumBytes:)``).
    package private(set) var lastReadEmptiedQueue = false

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

    /// Creates an inotify instance and closes it at once: `nil` where this process can have one
    /// now, else the error a watch's start would meet (the user's instance limit, most often).
    /// Why: `auto` takes inotify only where it can start, and `filewatch backends` says whether
    /// it can, not only whether this build has it.
    package static func probeInstance() -> FileSystemEventsError? {
        switch Inotify.initialize() {
        case .success(let descriptor):
            Syscalls.close(descriptor)
            return nil
        case .failure(let errno):
            return InotifyLimits.initializationError(errno, call: "inotify_init1")
        }
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
            // The kernel's read(2) takes events until the queue is empty or the next one does
            // not fit: with room left for the longest event, it stopped on an empty queue.
            // Known here, that saves the read that would only say `EAGAIN`: one of the nine
            // system calls between a create and its line on a pipe.
            lastReadEmptiedQueue = size - count >= Inotify.longestEventSize
            Inotify.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]), into: &events)
            return .success(())
        case .failure(let errno):
            return .failure(errno)
        }
    }

    package func hasPendingEvents() -> Bool {
        cfse_bytes_waiting(readinessDescriptor) > 0
    }

    /// `EAGAIN` from the descriptor itself: nothing was queued when it was read.
    package var emptyReadProvesDrained: Bool { true }

    /// A watch on this kernel's own pipe, through `/proc/self/fd` as the watch's directories
    /// are, removed at once: the kernel queues its `IN_IGNORED` after everything before it.
    /// The pipe's inode is this process's alone, so no watch of the tree can share the number.
    package mutating func queueMarker() -> CInt? {
        if markerPipe == nil, case .success(let pipe) = Syscalls.pipe() { markerPipe = pipe }
        guard let markerPipe else { return nil }
        guard case .success(let watch) = addWatch(path: Syscalls.processDescriptorPath(markerPipe.read), mask: .attrib) else { return nil }
        guard case .success = Inotify.removeWatch(readinessDescriptor, watch: watch) else { return nil }
        return watch
    }

    /// `inotify_add_watch` is a plain system call on the descriptor: any thread may make it.
    package var concurrentWatchAdder: ConcurrentWatchAdder? {
        let descriptor = readinessDescriptor
        return { path, mask in Inotify.addWatch(descriptor, path: path, mask: mask) }
    }

    package mutating func close() {
        guard !isClosed else { return }
        isClosed = true
        Syscalls.close(readinessDescriptor)
        if let markerPipe {
            Syscalls.close(markerPipe.read)
            Syscalls.close(markerPipe.write)
        }
        buffer.deallocate()
    }
}
#endif
