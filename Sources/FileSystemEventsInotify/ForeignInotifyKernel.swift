#if os(Linux)
package import FileSystemEventsCore
package import SystemPackage

/// A kernel interface from another module (the InotifyTools backend's), behind an
/// existential, so that the watch over it is compiled here, specialized, like the raw
/// backend's (``InotifyEventSource/updatesOverForeignKernel(options:handler:makeKernel:)``).
///
/// Why: ``InotifyWatch`` is generic over its kernel, and generic code that another module
/// instantiates runs unspecialized: each value of the watch's own types (a pending creation,
/// a root) is copied and destroyed through its type's value witnesses, and generic types are
/// looked up at run time. Over libinotifytools that cost 20,000 atomic saves about twice the
/// CPU the same watch spent over the raw kernel. Through this wrapper the only dynamic calls
/// are the kernel's own, a few per read.
package struct ForeignInotifyKernel: InotifyKernel {
    private var base: any InotifyKernel

    package init(_ base: any InotifyKernel) {
        self.base = base
    }

    package var readinessDescriptor: CInt { base.readinessDescriptor }

    package mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        base.addWatch(path: path, mask: mask)
    }

    package mutating func removeWatch(_ watch: CInt) {
        base.removeWatch(watch)
    }

    package mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        base.read(into: &events, maximumBytes: maximumBytes)
    }

    package func hasPendingEvents() -> Bool { base.hasPendingEvents() }

    package var emptyReadProvesDrained: Bool { base.emptyReadProvesDrained }

    package var lastReadEmptiedQueue: Bool { base.lastReadEmptiedQueue }

    package mutating func close() {
        base.close()
    }

    package mutating func queueMarker() -> CInt? {
        base.queueMarker()
    }

    package var concurrentWatchAdder: ConcurrentWatchAdder? { base.concurrentWatchAdder }

    package func status(of name: UnsafePointer<CChar>, relativeTo directory: CInt, followSymlinks: Bool) -> Result<FileStatus, Errno> {
        base.status(of: name, relativeTo: directory, followSymlinks: followSymlinks)
    }
}
#endif
