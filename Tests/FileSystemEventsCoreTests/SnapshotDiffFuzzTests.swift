import FileSystemEventsConformance
import FileSystemEventsCore
import Testing

/// The diff against the replay invariant, without any backend timing in the way: scan,
/// apply a seeded burst of random operations, scan again, and replay the diff's events on
/// the first tree. Every seed and burst size is deterministic, so a failure reproduces.
@Suite struct SnapshotDiffFuzzTests {
    @Test("replaying the diff reproduces the new tree", arguments: [1, 3, 8, 25], [true, false])
    func replayMatches(operationsPerScan: Int, withBirthTimes: Bool) throws {
        for seed in 1...40 {
            let tree = try ScratchTree()
            let scanner = SnapshotScanner()
            var operations = RandomOperations(seed: UInt64(seed), tree: tree)
            try Self.replayRounds(
                6, in: tree, first: try scan(scanner, tree, withBirthTimes),
                context: "seed \(seed), \(operationsPerScan) operations per scan, birth times \(withBirthTimes)",
                change: { _ in try operations.steps(operationsPerScan) },
                scan: { _ in try scan(scanner, tree, withBirthTimes) },
                next: { _ in try scan(scanner, tree, withBirthTimes) })
        }
    }

    /// The polling backend's cycle: each scan shares the subtrees it finds unchanged with the
    /// previous one (``SnapshotScanner/scan(root:sharingWith:)``), the diff consumes the
    /// previous tree, and the new tree is the next cycle's previous one.
    ///
    /// With `droppingAScan`, each cycle first scans and throws that scan away, as the polling
    /// backend does with a scan that raced a directory's move, and changes the tree again
    /// before the scan it keeps: the dropped scan shared subtrees with the previous tree, which
    /// ``SnapshotDirectory/reattachSubtrees()`` must lead back up that tree.
    @Test("replaying the diff reproduces the new tree when the scan shares unchanged subtrees", arguments: [1, 3, 8, 25], [false, true])
    func replayMatchesWhenSharing(operationsPerScan: Int, droppingAScan: Bool) throws {
        var sharedDirectories = 0
        for seed in 1...40 {
            let tree = try ScratchTree()
            let scanner = SnapshotScanner()
            var operations = RandomOperations(seed: UInt64(seed), tree: tree)
            try Self.replayRounds(
                6, in: tree, first: try scanner.scan(root: tree.root).snapshot,
                context: "seed \(seed), \(operationsPerScan) operations per scan, sharing\(droppingAScan ? " after a dropped scan" : "")",
                change: {
                    var performed = try operations.steps(operationsPerScan)
                    guard droppingAScan else { return performed }
                    _ = try scanner.scan(root: tree.root, sharingWith: $0)
                    $0.tree?.reattachSubtrees()
                    performed += try operations.steps(operationsPerScan)
                    return performed
                },
                scan: { before in
                    let after = try scanner.scan(root: tree.root, sharingWith: before).snapshot
                    // Counted before the diff consumes the previous tree.
                    if let oldTree = before.tree, let newTree = after.tree {
                        var newDirectories: Set<ObjectIdentifier> = []
                        Self.forEachDirectory(newTree) { newDirectories.insert(ObjectIdentifier($0)) }
                        Self.forEachDirectory(oldTree) { if $0 !== oldTree && newDirectories.contains(ObjectIdentifier($0)) { sharedDirectories += 1 } }
                    }
                    return after
                },
                next: { after in
                    // What the next scan finds unchanged must be what this one holds, not a rescan.
                    let again = SnapshotDiff.events(from: after.tree!.deepCopy(parent: nil), to: try scanner.scan(root: tree.root).snapshot.tree!,
                                                    root: PathBuilder(root: tree.root))
                    #expect(again.isEmpty, "the kept tree differs from the disk: \(again.map(\.description))")
                    return after
                })
        }
        // Otherwise this test would not be testing the sharing at all.
        #expect(sharedDirectories > 0)
    }

    /// Scenario 110's bursts of exchanges between files and directories at several depths,
    /// where a scan finds items that swapped places several times, and types at names changed.
    @Test("replaying the diff reproduces the new tree after bursts of exchanges", arguments: [1, 3, 8, 25], [false, true])
    func replayMatchesAfterExchanges(operationsPerScan: Int, sharing: Bool) throws {
        let tree = try ScratchTree()
        let scanner = SnapshotScanner()
        for seed in 1...30 {
            try ExchangeBurst.resetTree(tree)
            var burst = ExchangeBurst(tree: tree, seed: UInt64(seed * 7_919))
            var step = 0
            try Self.replayRounds(
                60 / operationsPerScan, in: tree, first: try scanner.scan(root: tree.root).snapshot,
                context: "seed \(seed), \(operationsPerScan) operations per scan, sharing \(sharing)",
                change: { _ in
                    let logged = burst.log.count
                    for _ in 0..<operationsPerScan {
                        burst.step(step)
                        step += 1
                    }
                    return Array(burst.log[logged...])
                },
                scan: { try sharing ? scanner.scan(root: tree.root, sharingWith: $0).snapshot : scanner.scan(root: tree.root).snapshot },
                next: { try sharing ? $0 : scanner.scan(root: tree.root).snapshot })
        }
    }

    /// One seed's rounds of the replay invariant: `change` the tree (given the previous scan,
    /// and saying what it did), `scan` it (given the previous scan), replay the diff on the
    /// tree as it was, and compare with the disk; `next` gives the next round's previous scan.
    /// The first round that does not reproduce the disk is recorded with the operations and
    /// events that led to it, and ends the rounds: later ones would only repeat the damage.
    private static func replayRounds(
        _ rounds: Int, in tree: ScratchTree, first: RootSnapshot, context: String,
        change: (RootSnapshot) throws -> [String],
        scan: (RootSnapshot) throws -> RootSnapshot,
        next: (RootSnapshot) throws -> RootSnapshot
    ) throws {
        var before = first
        var disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        for round in 0..<rounds {
            let operations = try change(before)
            let after = try scan(before)
            guard let oldTree = before.tree, let newTree = after.tree else {
                Issue.record("root is not a directory")
                return
            }
            let (events, problems) = replay(from: oldTree, to: newTree, in: tree, startingFrom: &disk)
            if !problems.isEmpty {
                Issue.record(
                    """
                    \(context), round \(round):
                      \(problems.prefix(10).joined(separator: "\n  "))
                    operations: \(operations.joined(separator: "; "))
                    events:
                      \(events.map(\.description).joined(separator: "\n  "))
                    """
                )
                return
            }
            before = try next(after)
        }
    }

    /// Diffs `old` against `new` (consuming `old`), replays the events on `disk` (the tree
    /// as it was at `old`) and compares the result with the disk now, which becomes `disk`.
    private static func replay(from old: SnapshotDirectory, to new: SnapshotDirectory, in tree: ScratchTree,
                               startingFrom disk: inout DiskTree) -> (events: [FileSystemEvent], problems: [String]) {
        let events = SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: tree.root))
        var model = ReplayModel(initial: disk, root: tree.root)
        for event in events { model.apply(event) }
        disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        return (events, model.anomalies + model.differences(from: disk))
    }

    private static func forEachDirectory(_ directory: SnapshotDirectory, _ body: (SnapshotDirectory) -> Void) {
        body(directory)
        for entry in directory.entries {
            if let child = entry.directory { forEachDirectory(child, body) }
        }
    }

    /// A scan, optionally without birth times, as on file systems that do not record them
    /// (where the diff must fall back to mtime to refuse reused inodes as moves).
    private func scan(_ scanner: SnapshotScanner, _ tree: ScratchTree, _ withBirthTimes: Bool) throws -> RootSnapshot {
        let snapshot = try scanner.scan(root: tree.root).snapshot
        if !withBirthTimes, let root = snapshot.tree { stripBirthTimes(root) }
        return snapshot
    }

    private func stripBirthTimes(_ directory: SnapshotDirectory) {
        for index in directory.entries.indices {
            directory.entries[index].status.birthTime = 0
            if let child = directory.entries[index].directory { stripBirthTimes(child) }
        }
    }
}

private extension RandomOperations {
    /// Performs `count` operations and returns what they were, for a failure's report.
    mutating func steps(_ count: Int) throws -> [String] {
        let logged = log.count
        for _ in 0..<count { try step() }
        return Array(log[logged...])
    }
}
