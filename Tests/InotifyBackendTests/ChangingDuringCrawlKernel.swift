#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The real kernel, except that just before the start-up crawl adds its `watchNumber`-th watch,
/// `change` runs once: the tree changes while the crawl is under way, after the root was listed
/// and with its watch in place, so the change is queued for the watch to read after the crawl.
struct ChangingDuringCrawlKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let watchNumber: Int
    private let change: @Sendable () -> Void
    private var watchesAdded = 0

    init(beforeWatch watchNumber: Int, change: @escaping @Sendable () -> Void) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.watchNumber = watchNumber
        self.change = change
    }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        watchesAdded += 1
        if watchesAdded == watchNumber { change() }
        return real.addWatch(path: path, mask: mask)
    }
}
#endif
