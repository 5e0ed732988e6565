import FileSystemEventsCore
import SystemPackage

/// The shared watcher's own copy of a watched tree: the source's state at `ready`, with every
/// event since applied to it, as the replay invariant promises a consumer can.
///
/// It is what lets a new subscription start at once (its `ready` is a copy of a subtree, not a
/// crawl), what a subscriber that fell behind is reconciled against, and what a directory moved
/// into a subscribed subtree is expanded from. Entries keep name, type and identity; a content or
/// attribute change bumps a counter in the change time (and modification time), so a diff
/// between two copies reports it, and every creation stamps a fresh counter into the birth
/// time, so an inode the file system reuses at once (a file deleted, another created) is never
/// taken by the diff for the old file moved.
///
/// `@unchecked Sendable`: its directories are objects, and the tree is only ever read or
/// changed under the shared watch's lock.
struct LiveTree: @unchecked Sendable {
    let root: FilePath
    private(set) var snapshot: RootSnapshot
    private var changeCounter: Int64 = 0

    init(root: FilePath, snapshot: RootSnapshot) {
        self.root = root
        self.snapshot = snapshot
    }

    // MARK: Applying events

    /// Applies one event whose paths are given relative to the root (`nil`: outside it).
    mutating func apply(_ event: FileSystemEvent, relative: [UInt8]?, previous: [UInt8]?) {
        guard let relative else { return }
        switch event.kind {
        case .created:
            var created = status(for: event)
            let existing = relative.isEmpty ? snapshot.status : entry(at: relative)?.status
            changeCounter += 1
            // A consumer told `created` reads the item again, so for a diff its content is new,
            // whatever stood at the path before with the same inode number: the same item told
            // again, or a new file that took a replaced one's number (ext4 hands freed numbers
            // out at once). The entries of the tree at `ready` have no birth time, and an item
            // without one is the same item at the same path whenever its inode is: only the
            // times then tell a subscription that fell behind that it must read the file again.
            if created.itemType != .directory {
                created.modificationTime = changeCounter
                created.changeTime = changeCounter
            }
            if let existing, existing.inode == created.inode, existing.device == created.device, existing.itemType == created.itemType {
                // The same item reported again (a rescan after lost events): its generation stays.
                created.birthTime = existing.birthTime
            } else {
                created.birthTime = changeCounter
            }
            guard !relative.isEmpty else {
                snapshot.status = created
                return
            }
            guard let (parent, name) = parentDirectory(of: relative, creatingListings: true) else { return }
            var entry = SnapshotEntry(name: name, status: created)
            if event.itemType == .directory {
                entry.directory = SnapshotDirectory(parent: parent, name: name)
            }
            parent.insert(entry)
        case .removed:
            guard !relative.isEmpty, let (parent, name) = parentDirectory(of: relative) else { return }
            parent.removeLeavingVacancy(named: SnapshotName(name))
        case .renamed:
            guard let previous, !previous.isEmpty, !relative.isEmpty,
                  let (source, sourceName) = parentDirectory(of: previous),
                  let entry = source.removeLeavingVacancy(named: SnapshotName(sourceName)),
                  let (destination, destinationName) = parentDirectory(of: relative, creatingListings: true)
            else { return }
            var moved = entry
            moved.name = SnapshotName(destinationName)
            destination.insert(moved)
        case .exchanged:
            guard let previous, !previous.isEmpty, !relative.isEmpty,
                  let (first, firstName) = parentDirectory(of: previous),
                  let (second, secondName) = parentDirectory(of: relative),
                  var a = first.entry(named: firstName), var b = second.entry(named: secondName)
            else { return }
            // Each name is filled again at once: its vacancy is where the other item goes.
            first.vacate(named: SnapshotName(firstName))
            second.vacate(named: SnapshotName(secondName))
            a.name = SnapshotName(secondName)
            b.name = SnapshotName(firstName)
            second.insert(a)
            first.insert(b)
        case .modified, .attributesChanged:
            changeCounter += 1
            let content = event.kind == .modified
            let counter = changeCounter
            mutateStatus(at: relative) { status in
                status.changeTime = counter
                if content { status.modificationTime = counter }
            }
        case .overflow, .rootRemoved, .settled:
            break
        }
    }

    private func status(for event: FileSystemEvent) -> FileStatus {
        FileStatus(device: event.identity?.device ?? 0, inode: event.identity?.inode ?? 0, mode: event.itemType.modeBits)
    }

    private mutating func mutateStatus(at relative: [UInt8], _ body: (inout FileStatus) -> Void) {
        if relative.isEmpty {
            body(&snapshot.status)
            return
        }
        guard let (parent, name) = parentDirectory(of: relative) else { return }
        parent.updateEntry(named: SnapshotName(name)) { body(&$0.status) }
    }

    // MARK: Reading

    /// The directory that holds the last component of `relative`, and that component.
    ///
    /// - Parameter creatingListings: a directory on the way that has no listing is given an
    ///   empty one, for what is created or moved into it: a directory at a depth limit has none
    ///   in the state at `ready`, and items are reported in it once a move has brought it above
    ///   the limit.
    func parentDirectory(of relative: [UInt8], creatingListings: Bool = false) -> (SnapshotDirectory, [UInt8])? {
        var directory = snapshot.tree
        var start = relative.startIndex
        while let slash = relative[start...].firstIndex(of: UInt8(ascii: "/")) {
            let name = Array(relative[start..<slash])
            var next = directory?.entry(named: name)?.directory
            if next == nil, creatingListings, let current = directory, current.entry(named: name)?.itemType == .directory {
                let listing = SnapshotDirectory(parent: current, name: name)
                current.updateEntry(named: SnapshotName(name)) { $0.directory = listing }
                next = listing
            }
            directory = next
            start = slash + 1
        }
        guard let directory, start < relative.endIndex else { return nil }
        return (directory, Array(relative[start...]))
    }

    func entry(at relative: [UInt8]) -> SnapshotEntry? {
        guard let (parent, name) = parentDirectory(of: relative) else { return nil }
        return parent.entry(named: name)
    }

    /// A private copy of the subtree at `relative` (the root when empty), as a root snapshot.
    func copy(of relative: [UInt8]) -> RootSnapshot? {
        if relative.isEmpty {
            return RootSnapshot(status: snapshot.status, tree: snapshot.tree?.deepCopy(parent: nil))
        }
        guard let entry = entry(at: relative) else { return nil }
        return RootSnapshot(status: entry.status, tree: entry.directory?.deepCopy(parent: nil))
    }
}

extension SnapshotDirectory {
    /// Every item below this directory with its path relative to it, parents first.
    func forEachItem(_ prefix: [UInt8] = [], _ body: ([UInt8], SnapshotEntry) -> Void) {
        for entry in entries where !entry.isVacant {
            let path = prefix.appendingComponent(entry.name)
            body(path, entry)
            entry.directory?.forEachItem(path, body)
        }
    }
}
