import PlatformLibc
public import SystemPackage

/// One change on disk, described so that a consumer can apply it to its own copy of the tree.
///
/// The contract every backend honours (the *replay invariant*): start from the tree as it was
/// when the source reported ``FileSystemWatchUpdate/ready(roots:)``, apply the events in order,
/// and you get the tree on disk once the source has caught up. In detail:
///
/// - ``Kind/created`` adds the item at ``path``, replacing whatever the consumer had there.
///   A directory that arrives with contents yields `created` for every level and every file.
/// - ``Kind/removed`` deletes the item and, for a directory, everything below it.
/// - ``Kind/renamed`` moves the item from ``previousPath`` to ``path``, with everything below
///   it, replacing whatever stood at ``path``. Later events inside use the new path.
/// - ``Kind/exchanged`` swaps the items at ``previousPath`` and ``path``, each with everything
///   below it (`renameat2(RENAME_EXCHANGE)`: editors, package managers and atomic-swap
///   deployments use it). Later events inside use the swapped paths.
/// - ``Kind/modified`` and ``Kind/attributesChanged`` change no structure: the first says the
///   content was written, the second that mode, owner, times, link count or xattrs changed.
/// - ``Kind/overflow`` says the backend lost kernel events; the synthetic events that follow it
///   reconcile the consumer's tree, so the invariant still holds.
/// - ``Kind/rootRemoved`` says a watched root itself was deleted or moved away: the consumer
///   drops everything below it, and the source stops watching that root.
/// - ``Kind/settled`` changes no structure either: only with ``WatchOptions/settleQuietPeriod``
///   set, it says a regular file's content stopped changing (its writer closed it and the
///   quiet period passed, or it was already in the tree at `ready`), so it can be opened now.
///   See `docs/settled-files.md`.
public struct FileSystemEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened; the list on ``FileSystemEvent`` says what each kind asks of a consumer.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// An item appeared at ``FileSystemEvent/path``; a directory's contents follow as `created`
        /// events of their own.
        case created
        /// The item at ``FileSystemEvent/path`` is gone, with everything below it.
        case removed
        /// The file's content was written.
        case modified
        /// Mode, owner, times, link count or extended attributes changed; the content did not.
        case attributesChanged
        /// The item moved from ``FileSystemEvent/previousPath`` to ``FileSystemEvent/path``, with
        /// everything below it.
        case renamed
        /// The items at ``FileSystemEvent/previousPath`` and ``FileSystemEvent/path`` swapped places
        /// (`renameat2(RENAME_EXCHANGE)`).
        case exchanged
        /// The backend lost kernel events; the synthetic events that follow reconcile the tree.
        case overflow
        /// A watched root was deleted or moved away; the source stops watching it.
        case rootRemoved
        /// A regular file's content stopped changing, so it can be opened now (only with
        /// ``WatchOptions/settleQuietPeriod`` set).
        case settled
    }

    /// What happened, and so how a consumer applies the event.
    public var kind: Kind
    /// Absolute, built from the root as the caller gave it (made absolute and lexically
    /// normalised, never resolved through symlinks), so paths match what the caller expects.
    public var path: FilePath
    /// The path before a ``Kind/renamed``, or the other item's path in an ``Kind/exchanged``
    /// (the item reported by ``itemType`` and ``identity`` stood there); `nil` for every other kind.
    public var previousPath: FilePath?
    /// What the item is (for a rename or an exchange, the item that stood at ``previousPath``);
    /// ``FileItemType/unknown`` when it vanished before it could be examined or the kernel did not say.
    public var itemType: FileItemType
    /// `true` when the event was inferred from a scan (a listing of a new directory, a rescan
    /// after overflow, a polling diff) rather than reported by the kernel.
    public var isSynthetic: Bool
    /// Device and inode, when the backend knew them; `nil` when it did not (never a made-up
    /// inode 0: a name seen in a directory the watcher may not read has no known identity).
    public var identity: FileIdentity?
    /// When the backend observed the change (wall clock).
    public var timestamp: Timestamp
    /// The item's persistent ID, with ``WatchOptions/stampsStableIDs`` (``FileStableID``);
    /// `nil` otherwise, and for an item that has none (a symlink, a file the process may not
    /// write, a file system that refuses extended attributes keeps a derived one).
    public var stableID: FileStableID?
    /// For a `created` item that arrived carrying the ID of an item still in the tree (a copy
    /// made with `cp -a`, `rsync -X`, a file manager's duplicate): that item's path at this
    /// point of the events (a rename reported later moves it on). The copy
    /// gets a fresh ID of its own. `nil` for everything else, including an item moved back in
    /// whose original is gone.
    public var duplicateOf: FilePath?
    /// For a `created` item that was made at another path in the watched tree and moved to
    /// ``path`` before the backend could tell of it there (`echo x > app.log; mv app.log
    /// app.log.1`, both read in one batch): that first path. Nothing is to be done with it to
    /// replay the events (no event told of the item there); it says where the item came
    /// from, which a follower of `app.log` needs to find a file that stood there only between
    /// two reads of the kernel queue. `nil` for every other event, and always with polling,
    /// which sees no path an item left before its scan.
    public var madeAt: FilePath?

    /// The identity is dropped when its inode is 0 (no file has it: it means "not examined").
    /// ``stableID``, ``duplicateOf`` and ``madeAt`` start as `nil`; the layer that knows them
    /// sets them.
    public init(
        kind: Kind,
        path: FilePath,
        previousPath: FilePath? = nil,
        itemType: FileItemType,
        isSynthetic: Bool,
        identity: FileIdentity? = nil,
        timestamp: Timestamp = .now()
    ) {
        self.kind = kind
        self.path = path
        self.previousPath = previousPath
        self.itemType = itemType
        self.isSynthetic = isSynthetic
        // Inode 0 is no file's: models use it for "not examined", and it must not leak out as
        // if it were known (a rescan's diff of such an entry used to report it).
        self.identity = identity.flatMap { $0.inode == 0 ? nil : $0 }
        self.timestamp = timestamp
    }

    /// One line for logs: kind, type and path, then the previous path, `[synthetic]` and the
    /// duplicated path where they apply.
    public var description: String {
        var text = "\(kind.rawValue) \(itemType.rawValue) \(path)"
        if let previousPath { text += " (from \(previousPath))" }
        if isSynthetic { text += " [synthetic]" }
        if let duplicateOf { text += " (duplicate of \(duplicateOf))" }
        if let madeAt { text += " (made at \(madeAt))" }
        return text
    }

    /// Wall-clock time with nanosecond resolution, without pulling Foundation into the core.
    public struct Timestamp: Sendable, Hashable, Comparable, Codable {
        /// Whole seconds since 1970-01-01 00:00 UTC.
        public var secondsSinceEpoch: Int64
        /// Nanoseconds past ``secondsSinceEpoch``.
        public var nanoseconds: Int32

        /// Takes both fields as given; the nanoseconds are not normalised into seconds.
        public init(secondsSinceEpoch: Int64, nanoseconds: Int32) {
            self.secondsSinceEpoch = secondsSinceEpoch
            self.nanoseconds = nanoseconds
        }

        /// The current wall-clock time (`CLOCK_REALTIME`), which jumps when the system clock is set.
        public static func now() -> Timestamp {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Timestamp(secondsSinceEpoch: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec))
        }

        /// Earlier first: by seconds, then by nanoseconds.
        public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
            (lhs.secondsSinceEpoch, lhs.nanoseconds) < (rhs.secondsSinceEpoch, rhs.nanoseconds)
        }

        package var nanosecondsSinceEpoch: Int64 { secondsSinceEpoch &* 1_000_000_000 &+ Int64(nanoseconds) }
    }
}
