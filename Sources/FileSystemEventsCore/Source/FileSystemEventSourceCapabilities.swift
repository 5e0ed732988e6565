/// What a backend can and cannot do, so a host app (or `auto`) can choose knowingly.
public struct FileSystemEventSourceCapabilities: Sendable, Hashable, CustomStringConvertible {
    /// Changes arrive from the kernel as they happen, rather than by comparing scans.
    public var isEventDriven: Bool
    /// A rename is reported as one `renamed` event with both paths, not `removed` + `created`.
    public var pairsRenames: Bool
    /// The backend needs ``WatchOptions/pollInterval`` and finds changes only that often.
    public var needsPollInterval: Bool
    /// The backend can lose kernel events and reports it with `overflow` before reconciling.
    public var canOverflow: Bool
    /// The backend keeps one kernel watch per directory, limited by `fs.inotify.max_user_watches`.
    public var usesPerDirectoryWatches: Bool
    /// Changes made by other hosts on network or FUSE file systems are seen.
    public var seesRemoteChanges: Bool
    /// The backend hears files being opened and closed, so `settled` waits for the last
    /// writer to close a file; without it, a writer that pauses longer than the quiet period
    /// has its file settled early (``WatchOptions/settleQuietPeriod``).
    public var seesOpenDescriptors: Bool

    /// `seesOpenDescriptors` defaults to `false`, the safe claim for a backend that does not hear
    /// files being closed.
    public init(
        isEventDriven: Bool,
        pairsRenames: Bool,
        needsPollInterval: Bool,
        canOverflow: Bool,
        usesPerDirectoryWatches: Bool,
        seesRemoteChanges: Bool,
        seesOpenDescriptors: Bool = false
    ) {
        self.isEventDriven = isEventDriven
        self.pairsRenames = pairsRenames
        self.needsPollInterval = needsPollInterval
        self.canOverflow = canOverflow
        self.usesPerDirectoryWatches = usesPerDirectoryWatches
        self.seesRemoteChanges = seesRemoteChanges
        self.seesOpenDescriptors = seesOpenDescriptors
    }

    /// The capabilities in words, comma-separated (`event-driven, pairs renames, ...`).
    public var description: String {
        var parts: [String] = []
        parts.append(isEventDriven ? "event-driven" : "scan-driven")
        if pairsRenames { parts.append("pairs renames") }
        if needsPollInterval { parts.append("needs a poll interval") }
        if canOverflow { parts.append("recovers from kernel overflow") }
        if usesPerDirectoryWatches { parts.append("one watch per directory") }
        if seesRemoteChanges { parts.append("sees remote changes") }
        if seesOpenDescriptors { parts.append("settles on the last close") }
        return parts.joined(separator: ", ")
    }
}
