#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The real kernel with a watch limit of its own, as `fs.inotify.max_user_watches` imposes one
/// (`ENOSPC` once `limit` watches stand), without changing the sysctl for the whole machine.
/// Changes handed to ``ChangesBeforeNextRead`` are made just before the next read.
struct WatchCountingKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let limit: Int
    private let changes: ChangesBeforeNextRead
    private var standing: Set<CInt> = []

    init(limit: Int, changes: ChangesBeforeNextRead) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.limit = limit
        self.changes = changes
    }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        let result = real.addWatch(path: path, mask: mask)
        guard case .success(let watch) = result, !standing.contains(watch) else { return result }
        guard standing.count < limit else {
            real.removeWatch(watch)
            return .failure(.noSpace)
        }
        standing.insert(watch)
        return result
    }

    mutating func removeWatch(_ watch: CInt) {
        standing.remove(watch)
        real.removeWatch(watch)
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        changes.makeWaiting()
        let start = events.count
        let result = real.read(into: &events, maximumBytes: maximumBytes)
        // Dropped by the kernel (a directory removed): no longer counted.
        for event in events[start...] where event.mask.contains(.ignored) { standing.remove(event.watch) }
        return result
    }
}
#endif
