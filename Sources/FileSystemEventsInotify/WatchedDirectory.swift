#if os(Linux)
import FileSystemEventsCore
import Synchronization

/// A directory of the watched tree, as the consumer knows it.
///
/// The node, not a path, is what a watch descriptor maps to: when a directory is renamed the
/// node is re-linked under its new parent, and the paths of everything below it (derived by
/// walking up) change at once. That is how descendants of a renamed directory report their
/// new paths immediately, where watchers that key on path strings keep stale ones.
final class WatchedDirectory {
    // Stored properties are laid out in the order they are declared, and a struct's tail
    // padding takes the small ones after it: the order here leaves no hole, 136 bytes per node,
    // malloc's 144-byte block (one node per watched directory; a test checks the block).
    weak var parent: WatchedDirectory? {
        didSet { WatchedDirectory.linksChanged() }
    }
    /// The name in the parent, inside the node while it is short (nearly always): as an array
    /// it was a heap block of its own, 48 bytes with malloc's header, for every directory.
    private var storedName: SnapshotName {
        didSet { WatchedDirectory.linksChanged() }
    }
    var children = ChildTable()
    /// Which root (index into the watch's roots) this directory belongs to.
    private let rootIndex: UInt32
    /// The inotify watch on this directory, or -1 while it has none.
    var watch: CInt = -1
    /// ``isListed`` and ``isKeptWhileUnreadable``, one bit each: a fifth `Bool` pushed
    /// ``listedAt`` to the next 8 bytes and every node into malloc's 160-byte block.
    private var listingFlags: UInt8 = 0
    /// The top of a root's tree. A node without a parent is not necessarily one: `parent` is
    /// weak, and a node that left the model may outlive its old parent.
    let isRoot: Bool
    /// Set on a root's node when a rescan put a fresh tree in its place: the old node has no
    /// parent to be unlinked from, so this is how it learns it is no longer attached.
    var isReplacedRoot = false {
        didSet { WatchedDirectory.linksChanged() }
    }
    /// Set on a mount point, and on a directory reached through a followed symlink: what its
    /// parent's watch hears by name is the covered directory, or the link, not this one, so
    /// only its own watch reports a change of its attributes.
    var hearsOwnAttributes = false
    /// Wall-clock nanoseconds when the directory was last listed (0: never). A file found by a
    /// rescan at the same name with the same inode number may still be another file (ext4
    /// reuses a freed number at once), which only its change time can tell: one changed since
    /// the listing is reported `modified`, so the consumer reads it again.
    var listedAt: Int64 = 0
    /// The directory's own identity, `0` while unknown. Every path the model derives may be
    /// stale (events still queued in the kernel will move it on), so whatever is opened at a
    /// node's path is checked against this before the model believes it.
    var device: UInt64
    var inode: UInt64
    /// A number no other node of this process has had or will have: what keys that must not
    /// keep a node alive (``NameInModel``, ``InotifyWatch/relativePath(of:)``'s cache) hold.
    /// An `ObjectIdentifier` is the node's address, which the next node allocated may take
    /// once this one is freed: `rm -rf g; mv c/s a` under a depth limit made `a`'s node at
    /// `g`'s old address, and the creations in `a` were told under `g/`, from the cached path
    /// of the node that was there (inotify 30 runs of 30).
    let serial = WatchedDirectory.serials.wrappingAdd(1, ordering: .relaxed).newValue
    /// The value of ``linkGeneration`` when this node was last found attached; see
    /// ``isAttached``.
    var attachedAtGeneration = -1

    /// The name in the parent (a copy: ``withName(_:)`` reads it in place).
    var name: [UInt8] {
        get { storedName.bytes }
        set { storedName = SnapshotName(newValue) }
    }

    /// Calls `body` with the name's bytes, without copying them.
    @inline(__always)
    func withName<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storedName.withBytes(body)
    }

    /// Which root (index into the watch's roots) this directory belongs to.
    var root: Int { Int(rootIndex) }

    /// Set once the directory has been watched and listed; until then its contents may be
    /// unknown (it was renamed before its own event was read) and it is crawled again.
    var isListed: Bool {
        get { listingFlags & 1 != 0 }
        set { listingFlags = newValue ? listingFlags | 1 : listingFlags & ~1 }
    }

    /// Set on a listed directory that a rescan could not list (made unreadable since), whose
    /// old listing the model keeps (``InotifyWatch/keepUnreadableListings(of:in:)``): what it
    /// holds may have changed unseen (an exchange the watcher could not confirm in it), so the
    /// `chmod` that makes it readable has it listed again, as an unlisted one is.
    var isKeptWhileUnreadable: Bool {
        get { listingFlags & 2 != 0 }
        set { listingFlags = newValue ? listingFlags | 2 : listingFlags & ~2 }
    }

    init(parent: WatchedDirectory?, name: [UInt8], root: Int, device: UInt64 = 0, inode: UInt64 = 0) {
        self.isRoot = parent == nil
        self.parent = parent
        self.storedName = SnapshotName(name)
        // A watch has one root per path it was given: far fewer than 2^32.
        self.rootIndex = UInt32(truncatingIfNeeded: root)
        self.device = device
        self.inode = inode
    }

    deinit {
        // A node below this one now has no parent: its cached attachment is stale.
        if children.hasDirectories { WatchedDirectory.linksChanged() }
    }

    /// Counts the changes that can detach a node from its root: a directory item with
    /// subdirectories removed or replaced in some node's ``children`` (see ``detached(_:)``), a
    /// node's ``parent`` or ``name`` set, a root replaced, a node with subdirectories freed.
    /// ``isAttached`` walks up to the root, a dictionary lookup per level, and is asked
    /// several times for every event (a 20,000-file burst spent a fifth of its time there); a
    /// node found attached remembers the generation, and is attached for as long as nothing
    /// that could detach it has happened since. One counter for the process
    /// rather than one per watch: a watch's own changes are what matter to its nodes, and those
    /// happen on its thread, in order; another watch's changes only cost it a walk.
    static let linkGeneration = Atomic<Int>(0)

    /// The last ``serial`` handed out.
    private static let serials = Atomic<UInt64>(0)

    static func linksChanged() {
        linkGeneration.wrappingAdd(1, ordering: .relaxed)
    }

    /// `node` was taken out of its parent's ``children`` (removed, or replaced by another
    /// item). Only the nodes of its subtree can have become detached; where it has no
    /// subdirectory that is the node alone, whose cached attachment is dropped rather than
    /// every node's. `rm -rf` removes directories bottom up, each without subdirectories by
    /// then, and each removal sent every later event's directory walking up to the root: a
    /// chain 10,000 directories deep took 34 s to be reported removed.
    static func detached(_ node: WatchedDirectory) {
        if node.children.hasDirectories {
            linksChanged()
        } else {
            node.attachedAtGeneration = -1
        }
    }

    /// Whether this node is still part of its root's tree.
    var isAttached: Bool {
        let generation = WatchedDirectory.linkGeneration.load(ordering: .relaxed)
        if attachedAtGeneration == generation { return true }
        var node = self
        while true {
            guard let parent = node.parent else {
                guard node.isRoot && !node.isReplacedRoot else { return false }
                break
            }
            guard node.withName({ parent.children.entry(named: $0) })?.directory === node else { return false }
            // An ancestor found attached in this generation: so is everything below it.
            if parent.attachedAtGeneration == generation { break }
            node = parent
        }
        // Every node on the way is attached too, and remembers it: the events of a deep
        // directory's ancestors, one level after the other (`rm -rf` of a chain 10,000 deep),
        // each walked the whole way up again.
        var marked: WatchedDirectory? = self
        while let current = marked, current.attachedAtGeneration != generation {
            current.attachedAtGeneration = generation
            marked = current.parent
        }
        return true
    }

    /// Whether `self` is `other` or lies below it: re-linking `other` under `self` would make
    /// the model a cycle.
    func isInside(_ other: WatchedDirectory) -> Bool {
        var node: WatchedDirectory? = self
        while let current = node {
            if current === other { return true }
            node = current.parent
        }
        return false
    }

    /// The path below the root, `/`-separated.
    ///
    /// Built back to front in one buffer, one step up per level: an array of components
    /// joined afterwards cost a retain and a release per level more, and every event of a
    /// deep directory pays a walk to the root.
    var relativePath: [UInt8] {
        var backwards: [UInt8] = []
        var current = self
        while let parent = current.parent {
            if !backwards.isEmpty { backwards.append(UInt8(ascii: "/")) }
            current.withName { backwards.append(contentsOf: $0.reversed()) }
            current = parent
        }
        backwards.reverse()
        return backwards
    }

    /// Every directory in this subtree, this one first.
    func forEachDirectory(_ body: (WatchedDirectory) -> Void) {
        body(self)
        for entry in children.values {
            entry.directory?.forEachDirectory(body)
        }
    }

    /// The subtree as a snapshot (identity and type only), for diffing against a rescan.
    func snapshot() -> SnapshotDirectory {
        let result = SnapshotDirectory(parent: nil, name: name)
        var entries: [SnapshotEntry] = []
        entries.reserveCapacity(children.count)
        for (name, entry) in children {
            var snapshotEntry = SnapshotEntry(name: name.withUnsafeBytes { SnapshotName($0) }, status: entry.status(device: entry.directory?.device ?? device))
            if let directory = entry.directory {
                let child = directory.snapshot()
                child.parent = result
                snapshotEntry.directory = child
            }
            entries.append(snapshotEntry)
        }
        entries.sort { SnapshotName.compare($0.name, $1.name) < 0 }
        result.entries = entries
        return result
    }
}

/// One item of a watched directory.
struct WatchedEntry {
    var type: FileItemType
    var inode: UInt64
    /// Set for a directory of the recursive tree.
    var directory: WatchedDirectory?

    /// A status reduced to identity and type: what a rescan diff compares structure by.
    func status(device: UInt64) -> FileStatus {
        FileStatus(device: device, inode: inode, mode: type.modeBits)
    }
}

/// A name in a directory of the model, as a key: where a followed link stands (for finding its
/// watch), or a name reported from an early batch (``InotifyWatch/provisionalNames``). The
/// directory is held by its ``WatchedDirectory/serial`` only, so a key never keeps a node
/// alive, nor matches a node made after it was freed.
struct NameInModel: Hashable {
    let directory: UInt64
    let name: [UInt8]

    init(_ directory: WatchedDirectory, _ name: [UInt8]) {
        self.directory = directory.serial
        self.name = name
    }
}
#endif
