import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Saved snapshots: a save/load round trip loses nothing the diff needs, `update()` after a
/// load replays to today's tree (the "catch up after a restart" path), and the file lands on
/// disk atomically.
@Suite struct SnapshotPersistenceTests {
    @Test("save, restart, load, update: the events replay the saved tree into today's", arguments: 1...16)
    func replayAcrossRestart(seed: Int) throws {
        let tree = try ScratchTree()
        let file = tree.path("state.fwsnap", in: .outside)
        var operations = RandomOperations(seed: UInt64(seed), tree: tree)
        for _ in 0..<12 { try operations.step() }
        try tree.write(RelativePath("anchor-\(seed)"), "anchor")
        try tree.hardLink(RelativePath("linked-\(seed)"), to: RelativePath("anchor-\(seed)"))
        let saved = try FileTreeSnapshot.scan(tree.root)
        try saved.save(to: file)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        // While "the app is not running": moves across levels, swaps, deletes and creates that
        // reuse the freed inodes, atomic saves.
        for _ in 0..<30 { try operations.step() }
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        var loaded = try FileTreeSnapshot.load(from: file, root: tree.root)
        #expect(loaded.entryCount == saved.entryCount)
        let current = try FileTreeSnapshot.scan(tree.root)
        // The loaded tree diffs exactly like the one that was saved.
        let fromMemory = current.changes(since: saved)
        let fromFile = current.changes(since: loaded)
        #expect(Self.shape(fromFile) == Self.shape(fromMemory), "seed \(seed)")
        try expectReplay(fromFile, from: before, to: after, tree.root, "changes(since:), seed \(seed)", operations.log)

        let updated = try loaded.update()
        try expectReplay(updated, from: before, to: after, tree.root, "load + update(), seed \(seed)", operations.log)
        // Loaded and rescanned side by side, the same events and the same tree.
        let (sideBySide, rescanned) = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: tree.root)
        #expect(Self.shape(sideBySide) == Self.shape(updated), "seed \(seed)")
        #expect(rescanned.entryCount == loaded.entryCount && rescanned.isRecursive == saved.isRecursive)
        // Saved again and reloaded, nothing has changed.
        try loaded.save(to: file)
        var reloaded = try FileTreeSnapshot.load(from: file, root: tree.root)
        let none = try reloaded.update()
        #expect(none.filter { $0.itemType != .directory }.isEmpty, "after --update: \(none)")
    }

    @Test("changes(sinceSnapshotAt:) reports a bad file as the file's error and a missing tree as the scan's")
    func changesErrors() throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("watched")
        try tree.write("watched/a", "a")
        let file = tree.path("state.fwsnap", in: .outside)
        let filtered = try FileTreeSnapshot.scan(tree.path("watched"), filter: PathFilter(include: [PathGlob("*.txt")]))
        try filtered.save(to: file)
        // The options come from the file: the rescan keeps its filter.
        try tree.write("watched/b.txt", "b")
        let (events, _) = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: tree.path("watched"))
        #expect(events.map(\.path) == [tree.path("watched/b.txt")], "\(events)")
        #expect(throws: FileTreeSnapshot.ChangesError.snapshotFile(.notFound(tree.path("none", in: .outside)))) {
            _ = try FileTreeSnapshot.changes(sinceSnapshotAt: tree.path("none", in: .outside), root: tree.path("watched"))
        }
        #expect(throws: FileTreeSnapshot.ChangesError.snapshotFile(.differentRoot(file, recorded: tree.path("watched"), requested: tree.root))) {
            _ = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: tree.root)
        }
        try tree.append("state.fwsnap", "trailing bytes", in: .outside)
        do {
            _ = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: tree.path("watched"))
            Issue.record("a corrupted file was accepted")
        } catch {
            guard case .snapshotFile(.corrupted) = error else { Issue.record("\(error)"); return }
        }
        try filtered.save(to: file)
        try tree.removeTree("watched")
        #expect(throws: FileTreeSnapshot.ChangesError.scan(.rootNotFound(tree.path("watched")))) {
            _ = try FileTreeSnapshot.changes(sinceSnapshotAt: file, root: tree.path("watched"))
        }
    }

    @Test("inodes reused between snapshots are never taken for moves", arguments: [true, false])
    func reusedInodes(withBirthTimes: Bool) throws {
        let tree = try ScratchTree()
        let file = tree.path("state.fwsnap", in: .outside)
        for index in 0..<20 { try tree.write(RelativePath("old\(index).txt"), "old \(index)") }
        try tree.makeDirectories("deep/er")
        var saved = try FileTreeSnapshot.scan(tree.root)
        if !withBirthTimes { saved = saved.strippingBirthTimes() }
        try saved.save(to: file)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        // Delete everything, then create new files (which take the freed inodes) at other
        // names, at the same names, and deeper.
        for index in 0..<20 { try tree.remove(RelativePath("old\(index).txt")) }
        for index in 0..<10 { try tree.write(RelativePath("new\(index).txt"), "new \(index)") }
        for index in 10..<15 { try tree.write(RelativePath("old\(index).txt"), "again \(index)") }
        for index in 15..<20 { try tree.write(RelativePath("deep/er/moved\(index).txt"), "deep \(index)") }
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        let loaded = try FileTreeSnapshot.load(from: file, root: tree.root)
        var current = try FileTreeSnapshot.scan(tree.root)
        if !withBirthTimes { current = current.strippingBirthTimes() }
        let events = current.changes(since: loaded)
        try expectReplay(events, from: before, to: after, tree.root, "reused inodes", [])
        #expect(!events.contains { $0.kind == .renamed }, "a new file paired with a deleted one: \(events)")
    }

    @Test("a round trip keeps every status field, flag and option, and re-encodes to the same bytes")
    func roundTrip() throws {
        let tree = try ScratchTree()
        try Self.makeVariedTree(tree)
        let snapshot = try FileTreeSnapshot.scan(tree.root, filter: PathFilter(exclude: [PathGlob("*.skip")]))
        let bytes = snapshot.encoded()
        let decoded = try FileTreeSnapshot.decoded(from: bytes, file: "memory", root: tree.root)
        #expect(decoded.encoded() == bytes)
        #expect(decoded.entryCount == snapshot.entryCount)
        #expect(decoded.filter == snapshot.filter)
        #expect(decoded.isRecursive && !decoded.followsSymlinks)
        #expect(Self.flatten(decoded) == Self.flatten(snapshot))
        #expect(decoded.changes(since: snapshot).isEmpty)

        let shallow = try FileTreeSnapshot.scan(tree.root, isRecursive: false, followsSymlinks: true)
        let decodedShallow = try FileTreeSnapshot.decoded(from: shallow.encoded(), file: "memory", root: tree.root)
        #expect(!decodedShallow.isRecursive && decodedShallow.followsSymlinks)
        #expect(Self.flatten(decodedShallow) == Self.flatten(shallow))

        // A single watched file is a snapshot too.
        let single = try FileTreeSnapshot.scan(tree.path("a.txt"))
        let decodedSingle = try FileTreeSnapshot.decoded(from: single.encoded(), file: "memory", root: tree.path("a.txt"))
        #expect(decodedSingle.encoded() == single.encoded())
    }

    @Test("save replaces the file atomically and leaves no temporary file, even when it fails")
    func atomicSave() throws {
        let tree = try ScratchTree()
        try tree.write("a.txt", "a")
        let file = tree.path("state.fwsnap", in: .outside)
        let first = try FileTreeSnapshot.scan(tree.root)
        try first.save(to: file)
        try tree.write("b.txt", "b")
        let second = try FileTreeSnapshot.scan(tree.root)
        try second.save(to: file)
        #expect(try FileTreeSnapshot.load(from: file, root: tree.root).entryCount == 2)
        #expect(Self.names(in: tree.outside) == ["root", "state.fwsnap"].filter { tree.exists(RelativePath($0), in: .outside) })

        // A rename that cannot happen (a non-empty directory in the way): the error names the
        // call, and the temporary file is gone.
        try tree.makeDirectories("blocker/inside", in: .outside)
        #expect(throws: SnapshotFileError.self) { try second.save(to: tree.path("blocker", in: .outside)) }
        #expect(!Self.names(in: tree.outside).contains { $0.hasPrefix(".") })

        // A directory that does not exist.
        do {
            try second.save(to: tree.path("missing/state.fwsnap", in: .outside))
            Issue.record("saved into a missing directory")
        } catch {
            guard case .unwritable(_, let call, let errno) = error else { Issue.record("\(error)"); return }
            #expect(call == "open" && errno == .noSuchFileOrDirectory)
        }
        #expect(try FileTreeSnapshot.load(from: file, root: tree.root).entryCount == 2)
    }

    // MARK: Helpers

    static func makeVariedTree(_ tree: ScratchTree) throws {
        try tree.write("a.txt", "alpha")
        try tree.write("ab.txt", "alpha beta")
        try tree.write("b.skip", "excluded")
        try tree.makeDirectories("dir/sub/subsub")
        try tree.write("dir/sub/subsub/leaf", String(repeating: "x", count: 70_000))
        try tree.write("dir/private", "p")
        try tree.changeMode("dir/private", to: 0o600)
        try tree.symlink("dir/link", pointingTo: "../a.txt")
        try tree.hardLink("dir/hard", to: "a.txt")
        try tree.write(RelativePath(bytes: [0x62, 0xFF, 0x2E, 0x74]), "not UTF-8")
        try tree.makeDirectory("empty")
        _ = mkfifo(String(decoding: tree.absolute("fifo", in: .root), as: UTF8.self), 0o640)
    }

    /// Every entry's path and status, for comparing trees without the diff.
    static func flatten(_ snapshot: FileTreeSnapshot) -> [String] {
        var lines: [String] = ["root \(snapshot.rootSnapshot.status)"]
        func walk(_ directory: SnapshotDirectory, _ path: [UInt8]) {
            lines.append("listing \(path) unreadable=\(directory.isUnreadable) count=\(directory.entries.count)")
            for entry in directory.entries {
                let childPath = path.appendingComponent(entry.name)
                lines.append("\(childPath) \(entry.status) listed=\(entry.directory != nil)")
                if let child = entry.directory { walk(child, childPath) }
            }
        }
        if let tree = snapshot.rootSnapshot.tree { walk(tree, []) }
        return lines
    }

    static func names(in directory: FilePath) -> [String] {
        guard let stream = opendir(directory.string) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private func expectReplay(
        _ events: [FileSystemEvent], from before: DiskTree, to after: DiskTree, _ root: FilePath,
        _ what: String, _ log: [String]
    ) throws {
        var model = ReplayModel(initial: before, root: root)
        for event in events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(what): \(problems.prefix(10).joined(separator: "; "))\noperations: \(log.joined(separator: "; "))")
    }

    static func shape(_ events: [FileSystemEvent]) -> [String] {
        events.map { "\($0.kind) \($0.path) \($0.previousPath.map(\.description) ?? "-") \($0.itemType)" }
    }
}

extension FileTreeSnapshot {
    /// The same snapshot as a file system without birth times would give. The tree is
    /// changed in place (shared with `self`), which is all the tests need.
    func strippingBirthTimes() -> FileTreeSnapshot {
        func strip(_ directory: SnapshotDirectory) {
            for index in directory.entries.indices {
                directory.entries[index].status.birthTime = 0
                if let child = directory.entries[index].directory { strip(child) }
            }
        }
        let copy = FileTreeSnapshot(root: root, snapshot: rootSnapshot, scanner: scanner)
        if let tree = copy.rootSnapshot.tree { strip(tree) }
        return copy
    }
}
