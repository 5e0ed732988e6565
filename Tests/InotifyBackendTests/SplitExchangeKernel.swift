#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The real kernel, except that an exchange's second move pair arrives late: whenever a read
/// holds a complete move pair followed by another `IN_MOVED_FROM`, everything after the first
/// pair (and its `IN_MOVE_SELF`) is held back for `delay`, during which the queue looks empty.
/// That is what a reader sees when `renameat2(RENAME_EXCHANGE)` is preempted between queueing
/// its two pairs, which on a loaded machine lasts milliseconds.
struct SplitExchangeKernel: InotifyKernel {
    private var kernel: RawInotifyKernel
    private let delay: Duration
    private var held: [Inotify.Event] = []
    private var releaseAt: ContinuousClock.Instant?

    init(delay: Duration) throws(FileSystemEventsError) {
        kernel = try RawInotifyKernel()
        self.delay = delay
    }

    var readinessDescriptor: CInt { kernel.readinessDescriptor }

    mutating func addWatch(path: [UInt8], mask: Inotify.Mask) -> Result<CInt, Errno> {
        kernel.addWatch(path: path, mask: mask)
    }

    mutating func removeWatch(_ watch: CInt) { kernel.removeWatch(watch) }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        if let releaseAt {
            guard ContinuousClock.now >= releaseAt else { return .failure(.resourceTemporarilyUnavailable) }
            // Released: the held events, then whatever the kernel queued behind them.
            self.releaseAt = nil
            events += held
            held = []
            _ = kernel.read(into: &events, maximumBytes: maximumBytes)
            return .success(())
        }
        var read: [Inotify.Event] = []
        let result = kernel.read(into: &read, maximumBytes: maximumBytes)
        guard case .success = result else { return result }
        if let split = Self.splitPoint(in: read) {
            events += read[..<split]
            held = Array(read[split...])
            releaseAt = ContinuousClock.now + delay
        } else {
            events += read
        }
        return .success(())
    }

    /// Where an exchange's second pair starts in `events`, if they hold one.
    private static func splitPoint(in events: [Inotify.Event]) -> Int? {
        var index = events.startIndex
        while index + 1 < events.endIndex {
            let first = events[index]
            let second = events[index + 1]
            if first.mask.contains(.movedFrom) && second.mask.contains(.movedTo) && first.cookie == second.cookie {
                var next = index + 2
                while next < events.endIndex && events[next].name.isEmpty && events[next].mask.contains(.moveSelf) { next += 1 }
                if next < events.endIndex && events[next].mask.contains(.movedFrom) { return next }
            }
            index += 1
        }
        return nil
    }

    /// While the second pair is held back, the kernel has not queued it yet: nothing waits.
    func hasPendingEvents() -> Bool {
        if let releaseAt { return ContinuousClock.now >= releaseAt }
        return kernel.hasPendingEvents()
    }

    mutating func close() { kernel.close() }
}

/// An inotify source whose exchanges arrive split (``SplitExchangeKernel``).
struct SplitExchangeSource: ProducerThreadEventSource {
    let options: WatchOptions
    let delay: Duration
    var backendName: String { "inotify, exchanges split by \(delay)" }
    var capabilities: FileSystemEventSourceCapabilities { InotifyEventSource.capabilities }

    func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let delay = self.delay
        return InotifyEventSource.updates(options: options, handler: handler) { () throws(FileSystemEventsError) in
            try SplitExchangeKernel(delay: delay)
        }
    }
}
#endif
