import SystemPackage

/// The stable ID of every item a ``StableIDSource`` has seen, kept as a tree that the events
/// move about (a renamed directory takes its subtree's IDs along in one step), with an index
/// from ID to item that tells a duplicate (its original still in the tree) from a move back.
///
/// Runs on the source's producer thread only.
struct StableIDTracker {
    final class Node {
        var name: [UInt8]
        weak var parent: Node?
        var children: [[UInt8]: Node] = [:]
        var id: FileStableID?
        /// The item's device and inode when last seen: hard links share their inode, and so
        /// their attribute and ID, and are no duplicates of each other.
        var identity: FileIdentity?
        /// Set while the echo of an ID this tracker wrote to the item may still come (see
        /// ``Stamp``). Kept with the item rather than by path, so that it moves with a rename
        /// of the item or of a directory above it, and with an exchange: kept by path, the echo
        /// came at the new path and was reported, and the next change at the old path, another
        /// item's, was dropped in its stead.
        var stamp: Stamp?
        /// Created, but gone from where it was made when its event was handled (an atomic
        /// save's temporary file): identified where a later rename puts it, in this batch or
        /// a later one.
        var awaitsIdentification = false

        init(name: [UInt8], parent: Node?) {
            self.name = name
            self.parent = parent
        }

        /// Whether the node is still in its root's tree.
        func isAttached(to roots: [Node]) -> Bool {
            var current = self
            while let parent = current.parent {
                guard parent.children[current.name] === current else { return false }
                current = parent
            }
            return roots.contains { $0 === current }
        }
    }

    /// A stamp this tracker wrote, and what the item looked like just after: the event the
    /// stamp itself causes (`attributesChanged` from the kernel, `modified` from a poll that
    /// sees the change time move) is not reported when the item still looks like this.
    ///
    /// Compared on mode, owner, link count, size and modification time, not on the last two
    /// alone: the kernel merges an `IN_ATTRIB` with the same event queued just before it, so
    /// the echo of a stamp and a `chmod` made right after arrive as one event, and compared on
    /// size and time, it was taken for the echo and the `chmod` was never told. The change time
    /// is compared too where the event was derived from statuses (a poll, a rescan): its
    /// `modified` may be a rewrite that restored the modification time (`cp -p`), which only
    /// the change time shows. A kernel's `IN_ATTRIB` that nothing but the change time explains
    /// is another extended attribute written, or the echo itself: nothing to act on.
    struct Stamp {
        let status: FileStatus

        /// Whether `now` is the status the stamp left, unchanged since. A directory's size,
        /// times and link count move with its entries, whose own events tell of that (as the
        /// polling backend reports only a directory's permissions and owner): only those are
        /// compared for a directory.
        func isUnchanged(_ now: FileStatus, comparingChangeTime: Bool) -> Bool {
            guard now.inode == status.inode, now.device == status.device, now.mode == status.mode,
                  now.userID == status.userID, now.groupID == status.groupID
            else { return false }
            if now.itemType == .directory { return true }
            return now.linkCount == status.linkCount && now.size == status.size
                && now.modificationTime == status.modificationTime
                && (!comparingChangeTime || now.changeTime == status.changeTime)
        }
    }

    private let rootPaths: [[UInt8]]
    private var roots: [Node]
    private var byID: [FileStableID: Node] = [:]
    /// False once the tree turned out read-only: IDs are read, never written.
    private var writes: Bool
    private var reportedReadOnly = false
    /// Set once a stamp found no room (`ENOSPC`, `EDQUOT`) since the last that succeeded.
    private var reportedNoRoom = false
    private var reportedUnsupported: Set<UInt64> = []
    private(set) var diagnostics: [FileSystemWatchDiagnostic] = []
    /// Events handled and not returned yet: held while an item created in them is not
    /// identified (``unidentified``), so that its events go out with its ID.
    private var held: [FileSystemEvent] = []
    /// The items created in ``held`` that had left their path by the time their event was
    /// handled (`echo > .doc.tmp; mv .doc.tmp doc`), with the positions of their events in it:
    /// identified where later events put them (``identifyItemsThatLeft()``).
    ///
    /// Why held across batches: a watch that keeps up with the writer reads the creation and
    /// the rename that follows it apart, and the creation's events went out without an ID for
    /// good (a writer making files and moving them at once: 239 of 301 `created` had none).
    private var unidentified: [ObjectIdentifier: AwaitedItem] = [:]

    /// An item of ``unidentified``.
    private struct AwaitedItem {
        let node: Node
        /// Where its events are in ``held``, its creation first.
        var events: [Int] = []
        /// Gone from the tree when a batch was handled, and not found created in another root
        /// yet: given one batch more (see ``identifyItemsThatLeft()``).
        var isGone = false
    }

    init(roots: [FilePath], writes: Bool) {
        self.rootPaths = roots.map(\.bytes)
        self.roots = roots.map { _ in Node(name: [], parent: nil) }
        self.writes = writes
    }

    mutating func takeDiagnostics() -> [FileSystemWatchDiagnostic] {
        defer { diagnostics = [] }
        return diagnostics
    }

    // MARK: The tree at `ready`

    /// Reads (or stamps) the ID of every file and directory of the trees at `ready`. Two
    /// items found with one ID (copied while nobody watched): the later one gets a fresh ID.
    mutating func load(_ snapshots: [FileTreeSnapshot]) {
        var loaded: Set<Int> = []
        for snapshot in snapshots {
            // Matched by root, not by position: a missing root has no snapshot. A root named
            // twice (`watch R R`) is one tree, loaded once: loaded again, the second tree,
            // which had only read the IDs, replaced the one that had written them and knew
            // their echoes, and every echo was reported.
            guard let index = rootPaths.firstIndex(of: snapshot.root.bytes), loaded.insert(index).inserted else { continue }
            let root = Node(name: [], parent: nil)
            roots[index] = root
            for item in [snapshot.rootItem] + snapshot.items {
                guard let node = insert(item.path.bytes) else { continue }
                node.identity = item.identity
                var id = identify(item.path.bytes, type: item.itemType, of: node)
                if liveItem(holding: id, otherThan: node) != nil {
                    id = restamp(item.path.bytes, of: node)
                }
                assign(id, to: node)
            }
        }
    }

    // MARK: Events

    /// Whether events are held for an item not identified yet: the caller hands over the next
    /// batch, or, if none comes soon, takes them as they are (``releaseHeldEvents()``).
    var isHoldingEvents: Bool { !held.isEmpty }

    /// `events` with their IDs, in order, after any held before; the stamps' own echoes left
    /// out. Empty while an item created in them has left its path and has not been found
    /// where it went (``isHoldingEvents``).
    mutating func process(_ events: [FileSystemEvent]) -> [FileSystemEvent] {
        held.reserveCapacity(held.count + events.count)
        for var event in events {
            let path = event.path.bytes
            switch event.kind {
            case .created:
                remove(path)
                guard let node = insert(path) else { break }
                node.identity = event.identity
                // Only files and directories have IDs (a symlink, a FIFO: none to wait for).
                guard event.itemType == .file || event.itemType == .directory else { break }
                guard holdsItem(of: node, at: path) else {
                    // What stands at the path now is another item (or none): its ID is not
                    // this one's, and a stamp written there would go to the wrong item.
                    node.awaitsIdentification = true
                    noteAwaiting(node)
                    break
                }
                event.stableID = identifyArrival(path, of: node, for: &event)
                if event.stableID == nil, !holdsItem(of: node, at: path) {
                    // It left between the look and the read of its attribute (a writer that
                    // renames at once: 22 of 300 files were never stamped): found where it
                    // went, as above.
                    node.awaitsIdentification = true
                    noteAwaiting(node)
                }
            case .removed:
                let node = node(at: path)
                noteAwaiting(node)
                event.stableID = node?.id
                if let index = rootPaths.firstIndex(of: path) {
                    // A root reported removed (a watch that waits for its roots goes on).
                    dropIDs(below: roots[index])
                    roots[index] = Node(name: [], parent: nil)
                } else {
                    remove(path)
                }
            case .renamed:
                guard let previous = event.previousPath?.bytes else { break }
                if let moving = detach(previous) {
                    remove(path)
                    attach(moving, at: path)
                    if moving.awaitsIdentification, moving.id == nil, holdsItem(of: moving, at: path) {
                        identifyAwaited(moving, at: path, for: &event)
                    }
                    noteAwaiting(moving)
                    event.stableID = moving.id
                } else {
                    remove(path)
                    if let node = insert(path) {
                        let id = identify(path, type: event.itemType, of: node)
                        assign(id, to: node)
                        event.stableID = id
                    }
                }
            case .exchanged:
                guard let other = event.previousPath?.bytes else { break }
                let first = detach(path), second = detach(other)
                if let first { attach(first, at: other) }
                if let second { attach(second, at: path) }
                noteAwaiting(second)
                event.stableID = second?.id
            case .modified, .attributesChanged:
                // Read first: the kernel merges cp's own attribute write into our stamp's echo,
                // and dropped as an echo, that event would hide the copy's ID.
                let node = node(at: path)
                let rewritten = node.map { reread($0, at: path, for: &event) } ?? false
                // The kernel tells a stamp as `IN_ATTRIB` only: a `modified` it reports is a
                // write, never the echo, which may still follow. One derived from statuses (a
                // poll, a rescan) may be the change time the stamp moved.
                if !rewritten, let node, let stamp = node.stamp, event.kind == .attributesChanged || event.isSynthetic {
                    // Echo or not, the event settles the stamp: the echo came, or the item
                    // changed since and no later event is taken for it either.
                    node.stamp = nil
                    if case .success(let status) = Syscalls.status(atPath: path),
                       stamp.isUnchanged(status, comparingChangeTime: event.isSynthetic)
                    {
                        continue
                    }
                }
                noteAwaiting(node)
                event.stableID = node?.id
            case .settled:
                let node = node(at: path)
                noteAwaiting(node)
                event.stableID = node?.id
            case .rootRemoved:
                if let index = rootPaths.firstIndex(of: path) {
                    dropIDs(below: roots[index])
                    roots[index] = Node(name: [], parent: nil)
                }
            case .overflow:
                break
            }
            held.append(event)
        }
        identifyItemsThatLeft()
        return unidentified.isEmpty ? releaseHeldEvents() : []
    }

    /// The held events, as they are: those of an item still not found go without its ID (the
    /// item is identified still, if a later rename puts it in view, for its later events).
    mutating func releaseHeldEvents() -> [FileSystemEvent] {
        defer {
            held = []
            unidentified = [:]
        }
        return held
    }

    /// Notes that the event about to be held concerns `node`, if that is an item not
    /// identified yet: it gets the ID once the item is.
    private mutating func noteAwaiting(_ node: Node?) {
        guard let node, node.awaitsIdentification, node.id == nil else { return }
        unidentified[ObjectIdentifier(node), default: AwaitedItem(node: node)].events.append(held.count)
    }

    /// Identifies the items created in ``held`` that had left their path, where the events
    /// since have put them (a rename of the item, or of a directory above it, in any batch),
    /// and gives their held events the ID. One removed since, or moved out of the roots, goes
    /// without: nothing is left to stamp. One not found yet keeps the events held.
    private mutating func identifyItemsThatLeft() {
        for (key, entry) in unidentified {
            let node = entry.node
            guard node.awaitsIdentification, node.id == nil, let path = path(of: node) else {
                // Identified since, or gone from the tree: removed, or moved into another root
                // (told as a removal and a creation there). The same inode told with an ID (that
                // creation, or another name of a hard-linked file) gives its ID. The creation may
                // come in the next batch (the kernel backends examine it first): with several
                // roots, a gone item waits for one more.
                let id = node.id ?? node.identity.flatMap { identity in
                    held.last { $0.identity == identity && $0.stableID != nil }?.stableID
                }
                if id == nil && rootPaths.count > 1 && !entry.isGone {
                    unidentified[key]?.isGone = true
                    continue
                }
                // Gone for good before anyone could look at it (deleted, replaced by a rename
                // over it: an atomic save's file saved over by the next): nothing is left to
                // stamp, and its events share an ID of their own, stored nowhere.
                let shared = id ?? FileStableID.random()
                for index in entry.events { held[index].stableID = shared }
                unidentified[key] = nil
                continue
            }
            guard holdsItem(of: node, at: path) else { continue }
            // A duplicate is told on its creation.
            var creation = held[entry.events[0]]
            if identifyAwaited(node, at: path, for: &creation) { held[entry.events[0]].duplicateOf = creation.duplicateOf }
        }
    }

    /// Identifies `node`, an item awaiting identification, at `path`, where it stands now: its
    /// held events get the ID, and `event` (the one that found it there) a `duplicateOf`, as
    /// ``identifyArrival(_:of:for:)`` says. `false` where it left again while its attribute was
    /// read or written: it goes on waiting, looked for again after the next batch.
    @discardableResult
    private mutating func identifyAwaited(_ node: Node, at path: [UInt8], for event: inout FileSystemEvent) -> Bool {
        let id = identifyArrival(path, of: node, for: &event)
        if id == nil && !holdsItem(of: node, at: path) { return false }
        node.awaitsIdentification = false
        for index in unidentified.removeValue(forKey: ObjectIdentifier(node))?.events ?? [] { held[index].stableID = id }
        return true
    }

    /// Identifies an item that has just come into the tree at `path` (`node`), as its event
    /// says: a copy carrying a live item's ID is a duplicate, told so
    /// (``FileSystemEvent/duplicateOf``) and given a fresh ID of its own.
    private mutating func identifyArrival(_ path: [UInt8], of node: Node, for event: inout FileSystemEvent) -> FileStableID? {
        var id = identify(path, type: event.itemType, of: node)
        if let original = liveItem(holding: id, otherThan: node), let originalPath = self.path(of: original) {
            event.duplicateOf = FilePath(bytes: originalPath)
            id = restamp(path, of: node)
        }
        assign(id, to: node)
        return id
    }

    /// Takes up an ID someone else wrote to the item since it was identified.
    ///
    /// A copier that keeps attributes (`cp -a`, `rsync -X`) creates the file, writes it, and
    /// only then copies its attributes: the `created` may be handled in between, find no ID
    /// (and stamp one), and the copy's own ID arrives with a later change. If that ID is a live
    /// item's, this is a duplicate after all: the event says so (``FileSystemEvent/duplicateOf``)
    /// and the copy gets a fresh ID of its own, as if the ID had been there at its creation.
    ///
    /// - Returns: whether someone else's ID was found: the change is then reported, not
    ///   taken for the echo of a stamp of ours (which it overwrote).
    private mutating func reread(_ node: Node, at path: [UInt8], for event: inout FileSystemEvent) -> Bool {
        // Only the node's own item: one moved there since the event (an exchange, a rename
        // over it, read in the same batch) has an ID of its own, which is no copy of anything.
        guard event.itemType == .file || event.itemType == .directory, holdsItem(of: node, at: path),
              case .success(let value?) = Syscalls.extendedAttribute(FileStableID.extendedAttributeName, of: path),
              let onDisk = FileStableID(bytes: value), onDisk != node.id
        else { return false }
        node.stamp = nil
        if let original = liveItem(holding: onDisk, otherThan: node), let originalPath = self.path(of: original) {
            event.duplicateOf = FilePath(bytes: originalPath)
            assign(restamp(path, of: node), to: node)
        } else {
            assign(onDisk, to: node)
        }
        return true
    }

    /// Whether the item at `path` is still the one `node` stands for, by device and inode
    /// (`true` when the node's identity is not known). Events are handled after the fact: by
    /// then a later rename or exchange may have put another item at the path, and what is
    /// read or written there would be that item's (`chmod b; exchange a b` read in one go took
    /// `a`'s ID, found at `b`, for a copy, and stamped a new one over it).
    private func holdsItem(of node: Node, at path: [UInt8]) -> Bool {
        guard let identity = node.identity else { return true }
        guard case .success(let status) = Syscalls.status(atPath: path) else { return false }
        return status.identity == identity
    }

    /// The item in the tree that holds `id`, if it is another one than `node`: `node` then
    /// carries a copy of its ID (a duplicate).
    private func liveItem(holding id: FileStableID?, otherThan node: Node) -> Node? {
        guard let id, let other = byID[id], other !== node, other.isAttached(to: roots), !Self.sameItem(other, node) else { return nil }
        return other
    }

    // MARK: IDs on disk

    /// The item's ID: read from its attribute, or stamped there if it has none; derived from
    /// its identity where the file system refuses attributes. `nil` for other types, for an
    /// item gone since, and for one this process may not write.
    private mutating func identify(_ path: [UInt8], type: FileItemType, of node: Node) -> FileStableID? {
        guard type == .file || type == .directory else { return nil }
        switch Syscalls.extendedAttribute(FileStableID.extendedAttributeName, of: path) {
        case .success(let value?):
            if let id = FileStableID(bytes: value) { return id }
            return stamp(path, of: node, replacing: true)  // not ours, or damaged: a fresh one
        case .success(nil):
            return stamp(path, of: node, replacing: false)
        case .failure(.notSupported):
            return derived(path)
        case .failure:
            return nil
        }
    }

    /// A fresh ID for a duplicate, replacing the one it was copied with.
    private mutating func restamp(_ path: [UInt8], of node: Node) -> FileStableID? {
        stamp(path, of: node, replacing: true)
    }

    /// Writes a fresh ID to the item at `path` (`node` in the tree) and notes the stamp there,
    /// with the item's status just after, when nothing but the stamp changed it meanwhile.
    private mutating func stamp(_ path: [UInt8], of node: Node, replacing: Bool) -> FileStableID? {
        guard writes else { return nil }
        let id = FileStableID.random()
        let before = Syscalls.status(atPath: path)
        switch Syscalls.setExtendedAttribute(FileStableID.extendedAttributeName, of: path, to: id.bytes, createOnly: !replacing) {
        case .success:
            reportedNoRoom = false
            node.stamp = nil
            // Anything else that changed the item meanwhile (a `chmod` between the two looks)
            // is no echo: no stamp is noted, and its event is reported.
            if case .success(let before) = before, case .success(let after) = Syscalls.status(atPath: path),
               Stamp(status: before).isUnchanged(after, comparingChangeTime: false)
            {
                node.stamp = Stamp(status: after)
            }
            return id
        case .failure(.fileExists):
            // Stamped by someone else since it was read (another watcher): theirs stands.
            if case .success(let value?) = Syscalls.extendedAttribute(FileStableID.extendedAttributeName, of: path) {
                return FileStableID(bytes: value)
            }
            return nil
        case .failure(.readOnlyFileSystem):
            writes = false
            if !reportedReadOnly {
                reportedReadOnly = true
                diagnostics.append(FileSystemWatchDiagnostic(
                    problem: .stableIDsNotStored, path: FilePath(bytes: path), errno: .readOnlyFileSystem,
                    message: "\(FilePath(bytes: path)) is on a read-only file system: stable IDs already stored are read, none are written"))
            }
            return nil
        case .failure(.notSupported):
            return derived(path)
        case .failure(let errno) where errno == .noSpace || errno == .diskQuotaExceeded:
            // Full (or over quota): the item goes without an ID for now, and is stamped at its
            // next event once there is room, if it has one. Said once per spell: 187 of 197
            // creations on a full tmpfs came without an `id`, and nothing said why.
            if !reportedNoRoom {
                reportedNoRoom = true
                diagnostics.append(FileSystemWatchDiagnostic(
                    problem: .stableIDsNotStored, path: FilePath(bytes: path), errno: errno,
                    message: "cannot store a stable ID on \(FilePath(bytes: path)) (\(errno)): items get none while there is no room"))
            }
            return nil
        case .failure:
            return nil  // not ours to write (permission): never touched
        }
    }

    private mutating func derived(_ path: [UInt8]) -> FileStableID? {
        guard case .success(let status) = Syscalls.status(atPath: path) else { return nil }
        if reportedUnsupported.insert(status.device).inserted {
            diagnostics.append(FileSystemWatchDiagnostic(
                problem: .stableIDsNotStored, path: FilePath(bytes: path), errno: .notSupported,
                message: "the file system of \(FilePath(bytes: path)) refuses extended attributes: its stable IDs are derived from device, inode and birth time, so they survive renames but not copies or moves to another file system, and duplicates are not told"))
        }
        return FileStableID.derived(device: status.device, inode: status.inode, birthTime: status.birthTime)
    }

    // MARK: The tree

    private func locate(_ path: [UInt8]) -> (root: Int, components: [[UInt8]])? {
        for (index, root) in rootPaths.enumerated() {
            if path == root { return (index, []) }
            var prefix = root
            if prefix.last != UInt8(ascii: "/") { prefix.append(UInt8(ascii: "/")) }
            if path.count > prefix.count, path[..<prefix.count].elementsEqual(prefix) {
                return (index, path[prefix.count...].split(separator: UInt8(ascii: "/")).map(Array.init))
            }
        }
        return nil
    }

    private func node(at path: [UInt8]) -> Node? {
        guard let (root, components) = locate(path) else { return nil }
        var current = roots[root]
        for name in components {
            guard let child = current.children[name] else { return nil }
            current = child
        }
        return current
    }

    /// The node at `path`, made with any missing levels above it.
    private mutating func insert(_ path: [UInt8]) -> Node? {
        guard let (root, components) = locate(path) else { return nil }
        return Self.descend(from: roots[root], through: components[...])
    }

    private mutating func detach(_ path: [UInt8]) -> Node? {
        guard let node = node(at: path), let parent = node.parent else { return nil }
        parent.children[node.name] = nil
        node.parent = nil
        return node
    }

    private mutating func attach(_ node: Node, at path: [UInt8]) {
        guard let (root, components) = locate(path), let name = components.last else { return }
        let parent = Self.descend(from: roots[root], through: components.dropLast())
        node.name = name
        node.parent = parent
        parent.children[name] = node
    }

    /// The node `components` below `start`, making the levels that are missing.
    private static func descend(from start: Node, through components: ArraySlice<[UInt8]>) -> Node {
        var current = start
        for name in components {
            if let child = current.children[name] {
                current = child
            } else {
                let child = Node(name: name, parent: current)
                current.children[name] = child
                current = child
            }
        }
        return current
    }

    private mutating func remove(_ path: [UInt8]) {
        guard let node = detach(path) else { return }
        dropIDs(below: node)
    }

    private mutating func dropIDs(below node: Node) {
        var stack = [node]
        while let current = stack.popLast() {
            if let id = current.id, byID[id] === current { byID[id] = nil }
            stack.append(contentsOf: current.children.values)
        }
    }

    private mutating func assign(_ id: FileStableID?, to node: Node) {
        if let old = node.id, byID[old] === node { byID[old] = nil }
        node.id = id
        if let id { byID[id] = node }
    }

    /// Whether two nodes are one inode (hard links): one attribute, one ID.
    private static func sameItem(_ first: Node, _ second: Node) -> Bool {
        guard let a = first.identity, let b = second.identity else { return false }
        return a == b
    }

    private func path(of node: Node) -> [UInt8]? {
        var names: [[UInt8]] = []
        var current = node
        while let parent = current.parent {
            names.append(current.name)
            current = parent
        }
        guard let index = roots.firstIndex(where: { $0 === current }) else { return nil }
        var path = rootPaths[index]
        for name in names.reversed() {
            if path.last != UInt8(ascii: "/") { path.append(UInt8(ascii: "/")) }
            path += name
        }
        return path
    }
}
