#if os(Linux)
public import FileSystemEventsCore

/// Watches through inotify(7), with direct system calls: the backend `auto` picks on Linux.
///
/// What it does that thin inotify wrappers do not:
/// - **Watch, then list.** Every directory (the initial crawl, and every directory that
///   appears later) gets its watch before its listing is read, and whatever the listing finds
///   that no event reported is sent as synthetic `created`, without duplicates. A burst of
///   `mkdir -p a/b/c/d && touch a/b/c/d/f` reports every level and the file.
/// - **Renames pair by cookie**, without a timer: the kernel queues both halves together.
///   An unpaired half is a move out (`removed`) or a move in (`created`, with everything inside).
/// - **Renamed directories keep working**: watches map to nodes of an in-memory tree that is
///   re-linked on rename, so descendants report their new paths at once.
/// - **Overflow loses nothing**: `IN_Q_OVERFLOW` is reported as `overflow`, then the tree is
///   rescanned against the model and reconciled with synthetic events.
/// - **Hard links**: a write through one link reports every known path of the inode.
/// - **Limits** are typed errors naming the sysctl (`fs.inotify.max_user_watches`,
///   `fs.inotify.max_user_instances`); never a partial watch that silently misses a subtree.
public struct InotifyEventSource: ProducerThreadEventSource {
    /// The options every watch of this source uses.
    public let options: WatchOptions

    /// Checks nothing yet: each watch validates the options and creates its inotify instance
    /// when it starts, and fails through its stream.
    public init(options: WatchOptions) {
        self.options = options
    }

    /// The name configuration uses for this backend.
    public static let name = "inotify"

    /// Always ``name``.
    public var backendName: String { Self.name }

    /// Event-driven, with renames paired, overflow recovered by a rescan, one kernel watch per
    /// directory, closes heard (for `settled`), and no changes made by other hosts.
    public static let capabilities = FileSystemEventSourceCapabilities(
        isEventDriven: true,
        pairsRenames: true,
        needsPollInterval: false,
        canOverflow: true,
        usesPerDirectoryWatches: true,
        seesRemoteChanges: false,
        seesOpenDescriptors: true
    )

    /// The static `capabilities`: they do not depend on the options.
    public var capabilities: FileSystemEventSourceCapabilities { Self.capabilities }


    /// Starts one watch over the real kernel, on a producer thread of its own.
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        Self.updates(options: options, handler: handler, kernel: { () throws(FileSystemEventsError) in try RawInotifyKernel() })
    }

    /// A watch over another ``InotifyKernel``: tests wrap the real one to make
    /// `inotify_add_watch` fail as a full system does, so the production path carries no
    /// test hook.
    package static func updates<Kernel: InotifyKernel>(
        options: WatchOptions,
        handler: FileSystemEventHandler? = nil,
        kernel makeKernel: @escaping @Sendable () throws(FileSystemEventsError) -> Kernel
    ) -> FileSystemEventStream {
        FileSystemEventStream(options: options, handler: handler) { channel in
            var watch = InotifyWatch<Kernel>(options: options, channel: channel)
            watch.run(makeKernel: makeKernel)
        }
    }

    /// A watch over a kernel interface of another module (libinotifytools'), compiled here
    /// for ``ForeignInotifyKernel``, not instantiated unspecialized by that module.
    package static func updatesOverForeignKernel(
        options: WatchOptions,
        handler: FileSystemEventHandler? = nil,
        makeKernel: @escaping @Sendable () throws(FileSystemEventsError) -> any InotifyKernel
    ) -> FileSystemEventStream {
        updates(options: options, handler: handler, kernel: { () throws(FileSystemEventsError) -> ForeignInotifyKernel in
            try ForeignInotifyKernel(makeKernel())
        })
    }
}
#endif
