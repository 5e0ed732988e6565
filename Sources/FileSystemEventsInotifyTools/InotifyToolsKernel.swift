#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The ``InotifyKernel`` of the libinotifytools backend: every call goes through the
/// process-wide ``InotifyToolsOwner``; events arrive through this source's own queue.
struct InotifyToolsKernel: InotifyKernel {
    private let subscription: InotifyToolsOwner.Subscription
    private var isClosed = false

    init() throws(FileSystemEventsError) {
        subscription = try InotifyToolsOwner.shared.subscribe()
    }

    var readinessDescriptor: CInt { subscription.readable }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        InotifyToolsOwner.shared.addWatch(path, mask: mask, for: subscription)
    }

    mutating func removeWatch(_ watch: CInt) {
        InotifyToolsOwner.shared.removeWatch(watch, for: subscription)
    }

    /// Once the library's descriptor is known, a watch is a plain system call on it, which any
    /// thread may make (``InotifyToolsOwner/addWatchOnCallingThread(_:mask:for:)``); so a
    /// start-up's crawl opens, watches and lists on two threads here too, as it does with raw
    /// inotify (`ready` on 110,101 entries was about twice raw inotify's on one thread). The
    /// descriptor stays known while this source is subscribed.
    var concurrentWatchAdder: ConcurrentWatchAdder? {
        guard InotifyToolsOwner.shared.knowsLibraryDescriptor else { return nil }
        let subscription = subscription
        return { path, mask in InotifyToolsOwner.shared.addWatchOnCallingThread(path, mask: mask, for: subscription) }
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        subscription.take(into: &events, limit: max(128, maximumBytes / 32)) ? .success(()) : .failure(.resourceTemporarilyUnavailable)
    }

    /// The library's side first: an event read by the owner meanwhile is then in this
    /// source's queue by the time that is looked at (see `libraryHasUnreadEvents`).
    func hasPendingEvents() -> Bool {
        InotifyToolsOwner.shared.libraryHasUnreadEvents || subscription.hasQueuedEvents
    }

    mutating func queueMarker() -> CInt? {
        InotifyToolsOwner.shared.queueMarker(for: subscription)
    }

    mutating func close() {
        guard !isClosed else { return }
        isClosed = true
        InotifyToolsOwner.shared.unsubscribe(subscription)
    }
}
#endif
