import FileSystemEventsConformance
import FileSystemEventsCore
import SystemPackage
import Testing

/// The public snapshot API ("what changed while the app was not running"): its events obey
/// the replay invariant, and diffing never spends a snapshot someone still holds.
@Suite struct FileTreeSnapshotTests {
    @Test("events(from:to:) and update() replay to the new tree and leave both snapshots usable", arguments: 1...12)
    func offlineDiff(seed: Int) throws {
        let tree = try ScratchTree()
        var operations = RandomOperations(seed: UInt64(seed), tree: tree)
        for _ in 0..<10 { try operations.step() }
        let first = try FileTreeSnapshot.scan(tree.root)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        for _ in 0..<25 { try operations.step() }
        let second = try FileTreeSnapshot.scan(tree.root)
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        let offline = FileTreeSnapshot.events(from: first, to: second)
        try expectReplay(offline, from: before, to: after, tree.root, "events(from:to:), seed \(seed)", operations.log)
        // Neither snapshot was consumed: the same diff again gives the same events.
        #expect(Self.shape(FileTreeSnapshot.events(from: first, to: second)) == Self.shape(offline))

        // `live` shares `first`'s tree, so update() must work on a copy of it.
        var live = first
        let updated = try live.update()
        try expectReplay(updated, from: before, to: after, tree.root, "update(), seed \(seed)", operations.log)
        #expect(Self.shape(FileTreeSnapshot.events(from: first, to: second)) == Self.shape(offline))
        #expect(live.entryCount == second.entryCount)
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

    /// What a consumer acts on, without the timestamps that differ between two diffs.
    private static func shape(_ events: [FileSystemEvent]) -> [String] {
        events.map { "\($0.kind) \($0.path) \($0.previousPath.map(\.description) ?? "-") \($0.itemType)" }
    }
}
