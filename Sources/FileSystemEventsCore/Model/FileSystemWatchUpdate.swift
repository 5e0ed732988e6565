public import SystemPackage

/// What a ``FileSystemEventStream`` delivers: lifecycle milestones, batches of events, and
/// diagnostics that need a human but do not stop the watch.
///
/// Lifecycle is explicit because the replay invariant needs a starting point: everything that
/// existed when ``ready(roots:)`` arrived is the initial state, and only what follows is change.
public enum FileSystemWatchUpdate: Sendable, Hashable {
    /// The initial scan of `roots` has begun.
    case scanStarted(roots: [FilePath])
    /// The initial scan is complete and the source is watching; later changes are events.
    case ready(roots: [FilePath])
    /// Events in the order they must be applied. Never empty.
    case events([FileSystemEvent])
    /// Something the source could not watch or read, reported once; the rest keeps working.
    case diagnostic(FileSystemWatchDiagnostic)
}

/// A problem worth a log line that does not end the watch: an unreadable directory, a
/// directory that vanished mid-scan, a rescan after the kernel queue overflowed.
public struct FileSystemWatchDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of problem a watch reports without stopping.
    public enum Problem: String, Sendable, Hashable {
        /// The directory could not be listed (permission denied, I/O error); it is skipped, and
        /// reported again only after it has been readable in between.
        case unreadableDirectory
        /// An item disappeared between being seen and being examined; harmless, noted for debugging.
        case vanishedDuringScan
        /// The kernel queue overflowed; the source rescanned to reconcile.
        case rescannedAfterOverflow
        /// Stable IDs (``WatchOptions/stampsStableIDs``) cannot be stored here: a read-only
        /// file system (IDs are read, not written), or one without extended attributes (IDs
        /// are derived from identity instead). Reported once per file system.
        case stableIDsNotStored
        /// A file that a followed symlink leads to cannot be watched (the kernel needs read
        /// permission on it): the link is reported as a file, but not its changes.
        case unwatchableLinkTarget
        /// A file in view with a hard link out of view (outside the tree, or where the filter
        /// does not look) cannot be watched on its own (the kernel needs read permission on
        /// it, and a watch of the `fs.inotify.max_user_watches` allowance): a write through
        /// that other name is not reported.
        case unwatchableHardLink
    }

    /// What kind of problem it is; switch on this rather than parse ``message``.
    public var problem: Problem
    /// The path concerned, when there is one.
    public var path: FilePath?
    /// The error a system call returned, when one did.
    public var errno: Errno?
    /// A line for a person or a log, saying what happened.
    public var message: String

    /// Takes each field as given.
    public init(problem: Problem, path: FilePath?, errno: Errno? = nil, message: String) {
        self.problem = problem
        self.path = path
        self.errno = errno
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}
