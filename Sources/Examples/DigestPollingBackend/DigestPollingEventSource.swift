public import FileSystemEvents

/// An example of a backend written outside the package, against its public building blocks
/// only: a polling backend whose change test also compares the contents of small files.
///
/// The built-in ``PollingEventSource`` decides that a file changed from its status (size,
/// nanosecond mtime and ctime, mode, owner, links). That is exact on local file systems, where
/// every write moves ctime; some network and FUSE file systems keep times to the second or
/// two, or let a client set them, and a rewrite of the same size within that grain looks like
/// nothing happened. This backend also keeps a 64-bit FNV-1a digest of every regular file of
/// at most ``digestLimit`` bytes, keyed by identity so that renames carry it along, and reports
/// `modified` when the digest changes although the status did not. Each interval it reads
/// those files again: choose it for trees of small files where that guarantee is worth the I/O.
///
/// It is built from what any third party has: ``FileSystemEventStream`` and its channel for
/// delivery with back-pressure, ``FileTreeSnapshot`` for the scan and the diff that pairs
/// moves, ``EventBatcher`` for the latency window, ``SettleTracker`` for `settled`, and
/// ``MonotonicClock`` for time. The target is compiled under a package name of its own, so
/// nothing `package`-internal is visible to it; and it passes the whole conformance suite
/// (`Tests/ConformanceTests`), like the built-in backends.
public struct DigestPollingEventSource: ProducerThreadEventSource {
    /// How configuration spells it.
    public static let name = "digest-polling"

    /// Files larger than this are compared by status alone: reading them every interval would
    /// cost more than the guarantee is worth.
    public static let defaultDigestLimit = 64 * 1024

    /// The options every watch of this source uses.
    public let options: WatchOptions
    /// Regular files of at most this many bytes are read and digested every interval; 0 digests
    /// none, which leaves the status test alone.
    public let digestLimit: Int

    /// Checks nothing yet: each watch validates the options when it starts. A negative
    /// `digestLimit` is taken as 0.
    public init(options: WatchOptions, digestLimit: Int = Self.defaultDigestLimit) {
        self.options = options
        self.digestLimit = max(0, digestLimit)
    }

    /// Always ``name``.
    public var backendName: String { Self.name }

    /// A poll: nothing to overflow, no per-directory watches, other hosts' writes seen.
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

    /// Starts one watch on a producer thread of its own, scanning every
    /// ``WatchOptions/pollInterval``.
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let options = self.options
        let digestLimit = self.digestLimit
        return FileSystemEventStream(options: options, handler: handler) { channel in
            var watch = DigestPollingWatch(options: options, digestLimit: digestLimit, channel: channel)
            watch.run()
        }
    }

    /// The registration a host makes once at start-up, after which `FILEWATCH_BACKEND=digest-polling`
    /// (or the configuration file's `"backend"`) selects it:
    ///
    /// ```swift
    /// try FileSystemEventBackendRegistry.shared.register(DigestPollingEventSource.registration)
    /// ```
    public static let registration = RegisteredBackend(
        name: name,
        summary: "polling that also compares the contents of files up to 64 KiB (example third-party backend)",
        capabilities: capabilities
    ) { options in
        DigestPollingEventSource(options: options)
    }
}
