import PlatformLibc
public import Logging
public import SystemPackage

/// What to watch and how. The same options mean the same thing to every backend.
public struct WatchOptions: Sendable {
    /// Files or directories to watch. Relative paths are resolved against the working directory
    /// when the options are made, lexically, never through symlinks.
    public var roots: [FilePath]
    /// Watch whole subtrees (`true`) or only the roots' direct children.
    public var isRecursive: Bool
    /// Traverse symlinks to directories. Off by default: a symlink is an entry, and loops
    /// cannot hang a scan either way.
    public var followsSymlinks: Bool
    /// Which items are reported (see ``PathFilter``); the default, ``PathFilter/everything``,
    /// leaves nothing out.
    public var filter: PathFilter
    /// How long to gather events before delivering them. Zero delivers each kernel read (or
    /// poll) as it comes; a longer window trades latency for fewer, coalesced batches.
    public var latency: Duration
    /// How often a polling backend rescans.
    public var pollInterval: Duration
    /// How many undelivered events a source buffers before it stops reading. A kernel-queue
    /// backend then lets the kernel queue overflow and recovers with a rescan, so a slow
    /// consumer costs memory in proportion to this limit, never without bound.
    public var bufferLimit: Int
    /// Where backends log diagnostics (they are also delivered as updates).
    public var logger: Logger?
    /// Hand the tree as the source built it to the consumer at `ready`
    /// (``FileSystemEventStream/initialState``). Off by default: it copies the whole model.
    public var capturesInitialState: Bool = false
    /// Report ``FileSystemEvent/Kind/settled`` for a regular file once its content stopped
    /// changing: on the inotify backends when its writer closed it (`IN_CLOSE_WRITE`) and this
    /// long passed with no further write; on polling when a scan at least this long (and at
    /// least one poll interval) after its last change found it unchanged. Files already in the
    /// tree at `ready` are settled right after it unless changed within this period. `nil` (the
    /// default) reports no `settled` events. Small values (50 ms) are fine on inotify, where
    /// the close is a fact rather than a guess.
    public var settleQuietPeriod: Duration?
    /// Wait for a root that does not exist (yet) instead of failing with
    /// ``FileSystemEventsError/rootNotFound(_:)``, and pick it up when it appears; a root that
    /// goes away is waited for again instead of ending with `rootRemoved`. Its appearance is
    /// reported as `created` events for the root and its contents, its disappearance as
    /// `removed`. Off by default: for a typo, failing at once is the right answer. Applied by
    /// `FileSystemEventBackend.makeSource` over any backend (see ``AwaitingRootsSource``).
    public var waitsForMissingRoots: Bool = false
    /// Give every regular file and directory a persistent ID (``FileStableID``), stored in its
    /// extended attribute `user.filewatch.id`, and report it on every event
    /// (``FileSystemEvent/stableID``), with duplicates told from moves
    /// (``FileSystemEvent/duplicateOf``). Off by default, because it writes to the user's
    /// files: an attribute only (the modification time does not change), and only on items the
    /// process may already write; a read-only tree is watched without stamping. Applied by
    /// `FileSystemEventBackend.makeSource` over any backend (see ``StableIDSource``).
    public var stampsStableIDs: Bool = false
    /// Also report `modified` for a watched directory whose entries changed (an item created,
    /// removed or renamed in it, or its times set), which changes the directory's own
    /// modification time, even when no event is reported for the item itself: a file made and
    /// removed before it could be examined leaves no other trace. For an app that shows
    /// directories' times (``DirectoryListing`` turns it on); a replay of the tree needs none
    /// of these events, so it is off by default. The built-in backends honour it; a backend
    /// that does not leaves such times stale, and nothing else.
    public var reportsDirectoryContentChanges: Bool = false

    /// Relative roots are made absolute now (``absolute(_:)``), and a `bufferLimit` below 1 is
    /// raised to 1. Nothing else is checked here: sources call ``validate()`` when they start.
    public init(
        roots: [FilePath],
        isRecursive: Bool = true,
        followsSymlinks: Bool = false,
        filter: PathFilter = .everything,
        latency: Duration = .zero,
        pollInterval: Duration = .seconds(1),
        bufferLimit: Int = WatchOptions.defaultBufferLimit,
        logger: Logger? = nil
    ) {
        self.roots = roots.map(Self.absolute)
        self.isRecursive = isRecursive
        self.followsSymlinks = followsSymlinks
        self.filter = filter
        self.latency = latency
        self.pollInterval = pollInterval
        self.bufferLimit = max(1, bufferLimit)
        self.logger = logger
    }

    /// The default ``bufferLimit``.
    public static let defaultBufferLimit = 65_536

    /// One root, with every other option at its default.
    public init(root: FilePath) {
        self.init(roots: [root])
    }

    /// The latencies a source accepts: 0 (deliver each read at once) to one day.
    public static let latencyRange: ClosedRange<Duration> = .zero ... .seconds(86_400)

    /// The poll intervals a source accepts: 1 ms (anything shorter is a busy loop) to one day.
    public static let pollIntervalRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(86_400)

    /// The depths ``PathFilter/maximumDepth`` accepts (a path more than a million levels deep
    /// cannot exist: `PATH_MAX` is 4096).
    public static let depthRange: ClosedRange<Int> = 0 ... 1_000_000

    /// Throws the first option no source can honour: no roots, or a duration outside its range
    /// (a zero poll interval would rescan in a busy loop). Sources check this when they start
    /// and deliver the error through their stream.
    public func validate() throws(FileSystemEventsError) {
        if roots.isEmpty {
            throw .invalidOptions("no roots to watch; pass at least one file or directory in WatchOptions.roots")
        }
        if !Self.latencyRange.contains(latency) {
            throw .invalidOptions("WatchOptions.latency must be from 0 to 86400 seconds (got \(latency))")
        }
        if !Self.pollIntervalRange.contains(pollInterval) {
            throw .invalidOptions("WatchOptions.pollInterval must be from 0.001 to 86400 seconds (got \(pollInterval))")
        }
        if let quiet = settleQuietPeriod, !Self.latencyRange.contains(quiet) {
            throw .invalidOptions("WatchOptions.settleQuietPeriod must be from 0 to 86400 seconds (got \(quiet))")
        }
        if let depth = filter.maximumDepth, !Self.depthRange.contains(depth) {
            throw .invalidOptions("PathFilter.maximumDepth must be from 0 to \(Self.depthRange.upperBound) (got \(depth))")
        }
    }

    /// The absolute form of `path` as the caller wrote it: the working directory is prepended
    /// to a relative path, `.` and `..` are folded lexically, symlinks are left alone.
    public static func absolute(_ path: FilePath) -> FilePath {
        if path.isAbsolute { return path.lexicallyNormalized() }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path.lexicallyNormalized() }
        let cwd = buffer.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
        return cwd.pushing(path).lexicallyNormalized()
    }
}
