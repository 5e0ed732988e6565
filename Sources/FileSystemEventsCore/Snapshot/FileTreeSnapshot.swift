public import SystemPackage

/// The state of a tree at one moment, and the events between two such moments.
///
/// This is the polling backend's engine, public because it is useful on its own: scan a tree
/// at shutdown, scan it again at launch, and ``events(from:to:)`` says what changed while the
/// app was not running, as events that obey the same replay invariant as a live watch.
public struct FileTreeSnapshot: Sendable {
    /// The root as given (made absolute).
    public let root: FilePath
    var storage: Storage
    /// How the tree is scanned (recursion, symlinks, filter); a saved snapshot records it.
    package let scanner: SnapshotScanner
    /// Whether entries carry size and times (a scan), or only name, type and identity (the
    /// model of a kernel-event backend, handed over at `ready`).
    public let recordsAttributes: Bool
    /// Directories this snapshot's scan could not list (permission, or gone mid-scan): their
    /// earlier contents stand in for them in a diff, so they do not look emptied. A backend
    /// reports each as a diagnostic (``FileSystemWatchDiagnostic/Problem/unreadableDirectory``).
    public private(set) var unreadableDirectories: [FilePath] = []

    /// Shared, immutable once made; copied before a diff if anyone else still holds it.
    final class Storage: @unchecked Sendable {
        var snapshot: RootSnapshot
        init(_ snapshot: RootSnapshot) { self.snapshot = snapshot }
    }

    /// Scans `root` (a directory or a single file) with the given filters.
    public static func scan(
        _ root: FilePath,
        isRecursive: Bool = true,
        followsSymlinks: Bool = false,
        filter: PathFilter = .everything
    ) throws(FileSystemEventsError) -> FileTreeSnapshot {
        let absolute = WatchOptions.absolute(root)
        let scanner = SnapshotScanner(isRecursive: isRecursive, followsSymlinks: followsSymlinks, filter: filter)
        return try scan(absolute, with: scanner)
    }

    /// Scans `root` the way a watch with `options` sees it: recursion,
    /// symlinks followed or not, and the filter, as ``WatchOptions`` says.
    public static func scan(_ root: FilePath, options: WatchOptions) throws(FileSystemEventsError) -> FileTreeSnapshot {
        try scan(WatchOptions.absolute(root), with: SnapshotScanner(options: options))
    }

    private static func scan(_ absolute: FilePath, with scanner: SnapshotScanner) throws(FileSystemEventsError) -> FileTreeSnapshot {
        let result = try scanner.scan(root: absolute)
        var snapshot = FileTreeSnapshot(root: absolute, storage: Storage(result.snapshot), scanner: scanner, recordsAttributes: true)
        snapshot.unreadableDirectories = Self.paths(of: result.unreadable, below: absolute)
        return snapshot
    }

    private static func paths(of unreadable: [(relativePath: [UInt8], errno: Errno)], below root: FilePath) -> [FilePath] {
        guard !unreadable.isEmpty else { return [] }
        let paths = PathBuilder(root: root)
        return unreadable.map { paths.path($0.relativePath) }
    }

    private init(root: FilePath, storage: Storage, scanner: SnapshotScanner, recordsAttributes: Bool) {
        self.root = root
        self.storage = storage
        self.scanner = scanner
        self.recordsAttributes = recordsAttributes
    }

    /// A snapshot of a tree a backend (or the shared watcher) already holds, which it hands
    /// over and never touches again.
    package init(root: FilePath, snapshot: RootSnapshot, options: WatchOptions, recordsAttributes: Bool) {
        self.init(root: root, storage: Storage(snapshot), scanner: SnapshotScanner(options: options), recordsAttributes: recordsAttributes)
    }

    /// A snapshot of an already built tree (a decoded file).
    package init(root: FilePath, snapshot: RootSnapshot, scanner: SnapshotScanner,
                 unreadable: [(relativePath: [UInt8], errno: Errno)] = []) {
        self.init(root: root, storage: Storage(snapshot), scanner: scanner, recordsAttributes: true)
        unreadableDirectories = Self.paths(of: unreadable, below: root)
    }

    /// The tree, for reading only (encoding it, copying it); the diff never runs on this reference.
    package var rootSnapshot: RootSnapshot { storage.snapshot }

    /// Rescans the tree and returns what changed since this snapshot, which then describes
    /// the tree as it is now: one polling cycle. Nothing is copied when this snapshot is the
    /// only holder of its tree.
    public mutating func update() throws(FileSystemEventsError) -> [FileSystemEvent] {
        try update(replacedRootArrives: false)
    }

    /// ``update()``; with `replacedRootArrives`, a root replaced since (another directory at
    /// its path) is told `rootRemoved` and then `created` with everything in it, for a
    /// consumer that catches up and goes on rather than a watch that ends there.
    package mutating func update(replacedRootArrives: Bool) throws(FileSystemEventsError) -> [FileSystemEvent] {
        let isShared = !isKnownUniquelyReferenced(&storage)
        // A tree only this snapshot holds is consumed by the diff anyway: the scan may share
        // its unchanged subtrees (one tree at the peak, not two).
        let result = try scanner.scan(root: root, sharingWith: isShared ? nil : storage.snapshot)
        let newer = result.snapshot
        defer {
            storage = Storage(newer)
            unreadableDirectories = Self.paths(of: result.unreadable, below: root)
        }
        return Self.events(from: storage.snapshot, to: newer, root: root, copyingOld: isShared, copyingNew: false,
                           replacedRootArrives: replacedRootArrives)
    }

    /// Items below the root.
    public var entryCount: Int { storage.snapshot.entryCount }

    /// The events that turn `old` into `new` (same root), in replay order. A root replaced in
    /// between (another directory, or a file for a directory) is `rootRemoved`, then `created`
    /// with everything in it: the events still turn the old tree into the new one.
    public static func events(from old: FileTreeSnapshot, to new: FileTreeSnapshot) -> [FileSystemEvent] {
        // Both snapshots stay valid for their holders: the diff works on private copies.
        events(from: old.storage.snapshot, to: new.storage.snapshot, root: new.root, copyingOld: true, copyingNew: true,
               replacedRootArrives: true)
    }

    /// The diff consumes the old tree and re-links the new one's unreadable listings, so a
    /// tree someone else still holds is copied first.
    static func events(
        from older: RootSnapshot,
        to newer: RootSnapshot,
        root: FilePath,
        copyingOld: Bool,
        copyingNew: Bool,
        replacedRootArrives: Bool = false
    ) -> [FileSystemEvent] {
        // The copies and the diff descend one call per level: on a stack made for any depth.
        ProducerThread.withLargeStack {
            eventsOnThisStack(from: older, to: newer, root: root, copyingOld: copyingOld, copyingNew: copyingNew,
                              replacedRootArrives: replacedRootArrives)
        }
    }

    private static func eventsOnThisStack(
        from older: RootSnapshot,
        to newer: RootSnapshot,
        root: FilePath,
        copyingOld: Bool,
        copyingNew: Bool,
        replacedRootArrives: Bool
    ) -> [FileSystemEvent] {
        switch SnapshotDiff.rootChange(from: older, to: newer, path: root) {
        case .replaced:
            let type: FileItemType = older.tree == nil ? older.status.itemType : .directory
            let removed = FileSystemEvent(kind: .rootRemoved, path: root, itemType: type, isSynthetic: true)
            // Caught up with after the fact, the root that stands there now is the consumer's
            // next tree: told only `rootRemoved`, and that tree saved (`changes --update`), its
            // contents were never told at all.
            return replacedRootArrives ? [removed] + arrival(of: newer, at: root) : [removed]
        case .directory(let oldTree, let newTree):
            return SnapshotDiff.events(
                from: copyingOld ? oldTree.deepCopy(parent: nil) : oldTree,
                to: copyingNew ? newTree.deepCopy(parent: nil) : newTree,
                root: PathBuilder(root: root)
            )
        case .file(let events):
            return events
        }
    }
}

extension FileTreeSnapshot {
    /// `created` for the root and everything below it, each directory before its contents,
    /// names in byte order; walked with a stack of its own, for a tree of any depth.
    static func arrival(of snapshot: RootSnapshot, at root: FilePath) -> [FileSystemEvent] {
        let timestamp = FileSystemEvent.Timestamp.now()
        var events = [FileSystemEvent(kind: .created, path: root, itemType: snapshot.status.itemType, isSynthetic: true,
                                      identity: snapshot.status.identity, timestamp: timestamp)]
        guard let tree = snapshot.tree else { return events }
        let paths = PathBuilder(root: root)
        var pending: [(entry: SnapshotEntry, relative: [UInt8])] = tree.entries.reversed().compactMap {
            $0.isVacant ? nil : ($0, $0.name.bytes)
        }
        while let (entry, relative) = pending.popLast() {
            events.append(FileSystemEvent(kind: .created, path: paths.path(relative), itemType: entry.itemType, isSynthetic: true,
                                          identity: entry.status.identity, timestamp: timestamp))
            guard let directory = entry.directory else { continue }
            for child in directory.entries.reversed() where !child.isVacant {
                pending.append((child, relative.appendingComponent(child.name)))
            }
        }
        return events
    }
}

extension SnapshotDirectory {
    /// An independent copy of this subtree.
    package func deepCopy(parent: SnapshotDirectory?) -> SnapshotDirectory {
        let copy = SnapshotDirectory(parent: parent, name: snapshotName, isUnreadable: isUnreadable)
        var copied: [SnapshotEntry] = []
        copied.reserveCapacity(entries.count - Int(vacancies))
        for var entry in entries where !entry.isVacant {
            entry.directory = entry.directory?.deepCopy(parent: copy)
            copied.append(entry)
        }
        copy.entries = copied
        return copy
    }
}
