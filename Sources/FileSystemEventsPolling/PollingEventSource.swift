public import FileSystemEventsCore

/// Finds changes by comparing stat snapshots of the tree, every ``WatchOptions/pollInterval``.
///
/// It needs nothing from the kernel but `statx`, so it is the backend that works everywhere:
/// network and FUSE file systems (where inotify hears nothing of other hosts' writes),
/// containers out of inotify watches, and file systems that do not support inotify at all.
/// The price is latency (up to one interval) and a scan's CPU per interval.
///
/// What a diff can and cannot see: moves are recovered from identity (device, inode, birth
/// time), so renames, moves across levels and whole-directory moves are `renamed`, and a swap
/// or rotation of names is ordered so replay never overwrites a pending source. Changes are
/// found by nanosecond mtime and ctime, size, mode, owner and link count, so a second write in
/// the same second is seen. What happens *and is undone* within one interval (a temp file
/// created and deleted) is, correctly, not reported.
public struct PollingEventSource: ProducerThreadEventSource {
    /// The options every watch of this source uses.
    public let options: WatchOptions

    /// Checks nothing yet: each watch validates the options when it starts, and fails through
    /// its stream.
    public init(options: WatchOptions) {
        self.options = options
    }

    /// Always ``name``.
    public var backendName: String { Self.name }

    /// The name configuration uses for this backend.
    public static let name = "polling"

    /// A poll: renames paired, nothing to overflow, no per-directory watches, other hosts'
    /// writes seen, and no closes heard.
    public static let capabilities = FileSystemEventSourceCapabilities(
        isEventDriven: false,
        pairsRenames: true,
        needsPollInterval: true,
        canOverflow: false,
        usesPerDirectoryWatches: false,
        seesRemoteChanges: true
    )

    /// The static `capabilities`: they do not depend on the options.
    public var capabilities: FileSystemEventSourceCapabilities { Self.capabilities }


    /// Starts one watch on a producer thread of its own: a first scan before `ready`, then a
    /// scan and diff every ``WatchOptions/pollInterval``.
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let options = self.options
        return FileSystemEventStream(options: options, handler: handler) { channel in
            var watch = PollingWatch(options: options, channel: channel)
            watch.run()
        }
    }
}
