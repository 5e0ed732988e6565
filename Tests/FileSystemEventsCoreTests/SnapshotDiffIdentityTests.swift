import SystemPackage
import FileSystemEventsCore
import Testing

/// What the diff pairs as a move when the statuses cannot tell a moved item from a new one
/// with a reused inode (a kernel backend's model keeps only inode and type), and the order in
/// which it tells what one scan found.
@Suite struct SnapshotDiffIdentityTests {
    private static let device: UInt64 = 7

    private static func file(_ inode: UInt64) -> FileStatus {
        FileStatus(device: device, inode: inode, mode: 0o100644)
    }

    private static func directory(_ inode: UInt64) -> FileStatus {
        FileStatus(device: device, inode: inode, mode: 0o040755)
    }

    private static func tree(_ entries: [(String, FileStatus, [(String, FileStatus)])]) -> SnapshotDirectory {
        let root = SnapshotDirectory(parent: nil, name: [])
        for (name, status, children) in entries {
            var entry = SnapshotEntry(name: Array(name.utf8), status: status)
            if status.itemType == .directory {
                let child = SnapshotDirectory(parent: root, name: Array(name.utf8))
                for (childName, childStatus) in children { child.insert(SnapshotEntry(name: Array(childName.utf8), status: childStatus)) }
                entry.directory = child
            }
            root.insert(entry)
        }
        return root
    }

    private static func describe(_ events: [FileSystemEvent]) -> [String] {
        events.map { event in
            let path = String(decoding: event.path.bytes.dropFirst(5), as: UTF8.self)
            let previous = event.previousPath.map { " from " + String(decoding: $0.bytes.dropFirst(5), as: UTF8.self) } ?? ""
            return "\(event.kind) \(path)\(previous)"
        }
    }

    /// `save` deleted and `new` created with its inode: with nothing but the inode to go on,
    /// pairing them would tell the consumer to keep `save`'s content for `new`.
    @Test("without times, a file at a new path with a deleted file's inode is created, not renamed")
    func reusedInodeIsCreated() {
        let events = SnapshotDiff.events(from: Self.tree([("save", Self.file(5), [])]), to: Self.tree([("new", Self.file(5), [])]),
                                         root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(events) == ["removed /save", "created /new"])
    }

    @Test("with pairing allowed, the same statuses are a rename (what a polling scan with equal mtimes sees)")
    func sameStatusesPairWhenAllowed() {
        let events = SnapshotDiff.events(from: Self.tree([("save", Self.file(5), [])]), to: Self.tree([("new", Self.file(5), [])]),
                                         root: PathBuilder(root: "/root"))
        #expect(Self.describe(events) == ["renamed /new from /save"])
    }

    /// A directory's content is its entries, which the diff reconciles one by one, so pairing
    /// it loses nothing and keeps a moved subtree from being told as removed and created.
    @Test("without times, a directory found at a new path is still a rename, its entries reconciled")
    func directoriesStillPair() {
        let old = Self.tree([("a", Self.directory(9), [("kept", Self.file(10)), ("gone", Self.file(11))])])
        let new = Self.tree([("t", Self.directory(9), [("kept", Self.file(10)), ("reused", Self.file(11))])])
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(events) == ["renamed /t from /a", "removed /t/gone", "created /t/reused"])
    }

    /// One scan sees changes made at different moments together. A consumer that made its
    /// changes, then a marker file, and waits for the marker's `created`, must have been told
    /// the rest by then: the removals and renames, and the files made before it, whatever their
    /// names. Told where placed (new names in path order, removals last), a marker named to sort
    /// early came first. Within one tick, files below the top come before it (a marker belongs
    /// at the top), whatever their inode numbers.
    @Test("new files are told after the scan's removals and renames, oldest first whatever their names")
    func newFilesComeLastOldestFirst() {
        func file(_ inode: UInt64, born: Int64) -> FileStatus {
            FileStatus(device: Self.device, inode: inode, mode: 0o100644, changeTime: born, birthTime: born)
        }
        let old = Self.tree([
            ("sub", Self.directory(2), [("old", file(3, born: 10))]),
            ("moved", file(4, born: 10), []),
        ])
        let new = Self.tree([
            (".marker", file(9, born: 300), []),
            ("made", Self.directory(5), [("inside", file(6, born: 100)), ("same-tick-as-the-marker", file(10, born: 300))]),
            ("renamed", file(4, born: 10), []),
            ("zz", file(7, born: 200), []),
            ("same-time-higher-inode", file(8, born: 200), []),
        ])
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"))
        #expect(Self.describe(events) == [
            "created /made", "renamed /renamed from /moved", "removed /sub/old", "removed /sub",
            "created /made/inside", "created /zz", "created /same-time-higher-inode", "created /made/same-tick-as-the-marker", "created /.marker",
        ])
    }

    /// Rotation, `mv log.1 log.2; mv log log.1; touch log`: each old file is renamed to where
    /// it went, then the new one created. The diff places `log` first, where the old `log`
    /// stands; that was removed there and created at `log.1` (and the old `log.1` likewise), so
    /// a rotated file, or a directory and everything in it, was told as new.
    @Test("a rotation: the old files renamed along, then the new one created at the first name")
    func rotation() {
        func file(_ inode: UInt64, born: Int64) -> FileStatus {
            FileStatus(device: Self.device, inode: inode, mode: 0o100644, birthTime: born)
        }
        let old = Self.tree([("log", file(1, born: 10), []), ("log.1", file(3, born: 5), [])])
        let new = Self.tree([("log", file(2, born: 20), []), ("log.1", file(1, born: 10), []), ("log.2", file(3, born: 5), [])])
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"))
        #expect(Self.describe(events) == ["renamed /log.2 from /log.1", "renamed /log.1 from /log", "created /log"])
        // A directory rotated the same way keeps its contents, moved with it.
        let oldTree = Self.tree([("d", Self.directory(4), [("inside", file(5, born: 1))])])
        let newTree = Self.tree([("d", Self.directory(6), []), ("d.1", Self.directory(4), [("inside", file(5, born: 1))])])
        let moved = SnapshotDiff.events(from: oldTree, to: newTree, root: PathBuilder(root: "/root"))
        #expect(Self.describe(moved) == ["renamed /d.1 from /d", "created /d"])
    }

    /// A kernel backend's rescan after an overflow, which has no times: `rm a0; mkdir -p a0/in;
    /// touch a0/in/f; touch marker`, where the marker took the removed file's inode. It was
    /// placed ahead of its turn, as if it were the file that stood at `a0` moving away, and
    /// told before `a0/in/f`, which a consumer waiting for the marker then missed.
    @Test("without times, a new file with a removed file's inode keeps its place behind the files made before it")
    func reusedInodeKeepsItsPlace() {
        let old = Self.tree([("a0", Self.file(1), [])])
        let inner = SnapshotDirectory(parent: nil, name: Array("in".utf8))
        inner.insert(SnapshotEntry(name: Array("f".utf8), status: Self.file(12)))
        let new = Self.tree([("a0", Self.directory(10), []), ("zz-marker", Self.file(1), [])])
        new.entries[0].directory?.insert(SnapshotEntry(name: Array("in".utf8), status: Self.directory(11), directory: inner))
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(events) == ["removed /a0", "created /a0", "created /a0/in", "created /a0/in/f", "created /zz-marker"])
    }

    /// Two items that traded names (`mv a t; mv b a; mv t b` between scans, or a `renameat2`
    /// exchange): one `exchanged`, as the kernel backends tell it. They were told as one
    /// renamed and the other removed and created again, a new item to a consumer that keeps
    /// identities, and for a directory its whole subtree.
    @Test("two items that traded names are told exchanged, in one directory or two, directories with their contents")
    func tradedNames() {
        let old = Self.tree([("a", Self.file(1), []), ("b", Self.file(2), [])])
        let new = Self.tree([("a", Self.file(2), []), ("b", Self.file(1), [])])
        #expect(Self.describe(SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"))) == ["exchanged /a from /b"])

        let oldDirectories = Self.tree([("a", Self.directory(1), [("x", Self.file(10))]), ("b", Self.directory(2), [("y", Self.file(11))])])
        let newDirectories = Self.tree([
            ("a", Self.directory(2), [("y", Self.file(11)), ("z", Self.file(12))]), ("b", Self.directory(1), [("x", Self.file(10))]),
        ])
        #expect(Self.describe(SnapshotDiff.events(from: oldDirectories, to: newDirectories, root: PathBuilder(root: "/root")))
            == ["exchanged /a from /b", "created /a/z"])

        let apart = Self.tree([("d1", Self.directory(3), [("a", Self.file(1))]), ("d2", Self.directory(4), [("b", Self.file(2))])])
        let traded = Self.tree([("d1", Self.directory(3), [("a", Self.file(2))]), ("d2", Self.directory(4), [("b", Self.file(1))])])
        #expect(Self.describe(SnapshotDiff.events(from: apart, to: traded, root: PathBuilder(root: "/root"))) == ["exchanged /d1/a from /d2/b"])
    }

    /// A cycle of names (`mv a t; mv b a; mv c b; mv t c`) is told as exchanges, one fewer
    /// than the items, each putting one item in place: every item keeps its identity, and a
    /// directory its contents, where one item was removed and created again.
    @Test("names rotated around a cycle are told as exchanges, in one directory or several, directories with their contents")
    func rotatedNames() {
        let old = Self.tree([("a", Self.file(1), []), ("b", Self.file(2), []), ("c", Self.file(3), [])])
        let new = Self.tree([("a", Self.file(3), []), ("b", Self.file(1), []), ("c", Self.file(2), [])])
        #expect(Self.describe(SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root")))
            == ["exchanged /a from /c", "exchanged /b from /c"])

        let oldDirectories = Self.tree([
            ("a", Self.directory(1), [("x", Self.file(10))]), ("b", Self.directory(2), [("y", Self.file(11))]),
            ("c", Self.directory(3), [("z", Self.file(12))]), ("d", Self.directory(4), []),
        ])
        let newDirectories = Self.tree([
            ("a", Self.directory(4), []), ("b", Self.directory(1), [("w", Self.file(13)), ("x", Self.file(10))]),
            ("c", Self.directory(2), [("y", Self.file(11))]), ("d", Self.directory(3), [("z", Self.file(12))]),
        ])
        #expect(Self.describe(SnapshotDiff.events(from: oldDirectories, to: newDirectories, root: PathBuilder(root: "/root")))
            == ["exchanged /a from /d", "exchanged /b from /d", "exchanged /c from /d", "created /b/w"])

        let apart = Self.tree([
            ("d1", Self.directory(5), [("a", Self.file(1))]), ("d2", Self.directory(6), [("b", Self.file(2))]),
            ("d3", Self.directory(7), [("c", Self.file(3))]),
        ])
        let rotated = Self.tree([
            ("d1", Self.directory(5), [("a", Self.file(2))]), ("d2", Self.directory(6), [("b", Self.file(3))]),
            ("d3", Self.directory(7), [("c", Self.file(1))]),
        ])
        #expect(Self.describe(SnapshotDiff.events(from: apart, to: rotated, root: PathBuilder(root: "/root")))
            == ["exchanged /d1/a from /d2/b", "exchanged /d3/c from /d2/b"])
    }

    /// Up to 33 items a cycle is exchanged; a longer one (or a long chain of names shifted
    /// along, which is no cycle) is told as renames with one item removed and created again.
    /// Either way the events, replayed, give every name its item. 20,000 names shifted along
    /// overflowed the stack when each was placed in a call within the one before.
    @Test("a long cycle replays exactly, exchanged up to 33 items", arguments: [2, 20, 33, 34, 200, 20_000])
    func longCycles(count: Int) {
        func name(_ index: Int) -> String { "f" + String(1_000_000 + index) }
        let old = Self.tree((0..<count).map { (name($0), Self.file(UInt64($0 + 1)), []) })
        let new = Self.tree((0..<count).map { (name($0), Self.file(UInt64((($0 + 1) % count) + 1)), []) })
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"))
        // Inode at each name, replayed.
        var replayed = Dictionary(uniqueKeysWithValues: (0..<count).map { ("/" + name($0), UInt64($0 + 1)) })
        for event in events {
            let path = String(decoding: event.path.bytes.dropFirst(5), as: UTF8.self)
            let previous = event.previousPath.map { String(decoding: $0.bytes.dropFirst(5), as: UTF8.self) }
            switch event.kind {
            case .exchanged:
                guard let previous, replayed[path] != nil, replayed[previous] != nil else {
                    Issue.record("\(event): an exchange of names not both known")
                    return
                }
                (replayed[path], replayed[previous]) = (replayed[previous], replayed[path])
            case .renamed:
                guard let previous, replayed[previous] != nil else {
                    Issue.record("\(event): a rename of a name not known")
                    return
                }
                replayed[path] = replayed.removeValue(forKey: previous)
            case .removed: replayed[path] = nil
            case .created: replayed[path] = event.identity?.inode
            default: break
            }
        }
        #expect(replayed == Dictionary(uniqueKeysWithValues: (0..<count).map { ("/" + name($0), UInt64((($0 + 1) % count) + 1)) }))
        let exchanges = events.filter { $0.kind == .exchanged }.count
        if count <= 33 {
            #expect(exchanges == count - 1 && events.count == exchanges)
        } else {
            #expect(exchanges == 0 && events.filter { $0.kind == .created }.count == 1)
        }
    }

    /// Without times a file found at another path is not paired (it may be a new file with a
    /// reused inode), so files that traded names are not an exchange then; directories are.
    @Test("without times, traded files are removed and created, traded directories exchanged")
    func tradedNamesWithoutTimes() {
        let old = Self.tree([("a", Self.file(1), []), ("b", Self.file(2), [])])
        let new = Self.tree([("a", Self.file(2), []), ("b", Self.file(1), [])])
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(events) == ["removed /a", "removed /b", "created /a", "created /b"])
        let oldDirectories = Self.tree([("a", Self.directory(1), []), ("b", Self.directory(2), [])])
        let newDirectories = Self.tree([("a", Self.directory(2), []), ("b", Self.directory(1), [])])
        let exchanged = SnapshotDiff.events(from: oldDirectories, to: newDirectories, root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(exchanged) == ["exchanged /a from /b"])
        let oldCycle = Self.tree([("a", Self.directory(1), []), ("b", Self.directory(2), []), ("c", Self.directory(3), [])])
        let newCycle = Self.tree([("a", Self.directory(3), []), ("b", Self.directory(1), []), ("c", Self.directory(2), [])])
        let rotated = SnapshotDiff.events(from: oldCycle, to: newCycle, root: PathBuilder(root: "/root"), pairsMovedItems: false)
        #expect(Self.describe(rotated) == ["exchanged /a from /c", "exchanged /b from /c"])
    }
}
