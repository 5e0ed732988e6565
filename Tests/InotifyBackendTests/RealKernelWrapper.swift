#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// A test kernel that is the real one except where it says otherwise: every requirement it
/// does not implement goes to ``real``. Each test kernel of this suite changes one thing (a
/// read held back, a failing `inotify_add_watch`, a queue that looks busy) and should read as
/// that one thing.
protocol RealKernelWrapper: InotifyKernel {
    var real: RawInotifyKernel { get set }
}

extension RealKernelWrapper {
    var readinessDescriptor: CInt { real.readinessDescriptor }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        real.addWatch(path: path, mask: mask)
    }

    mutating func removeWatch(_ watch: CInt) { real.removeWatch(watch) }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        real.read(into: &events, maximumBytes: maximumBytes)
    }

    func hasPendingEvents() -> Bool { real.hasPendingEvents() }

    mutating func close() { real.close() }

    mutating func queueMarker() -> CInt? { real.queueMarker() }
}
#endif
