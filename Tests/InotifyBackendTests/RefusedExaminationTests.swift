#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Glibc
import SystemPackage
import Testing

/// Names made in a directory the watcher may list but not search (an unprivileged watcher,
/// `sub` mode `0600`, root writing there) cannot be looked at: they are told `created` with
/// the type `unknown`. What such a name becomes must still reach the replay: moved out, it is
/// looked at where it arrived (a file kept the type `unknown`, a directory arrived empty), and
/// moved out or removed before it was looked at, it is not left behind (the refused
/// examination said nothing of it being gone, and it stayed in the replay). Found by a race
/// hunt through the CLI as user `nobody`, on both kernel backends.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RefusedExaminationTests {
    @Test("an item made where the watcher may not look, then moved out, arrives with its type and contents")
    func movedOutOneAtATime() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.makeDirectory("sub")
        var reader = try await collector(for: tree, changes: ChangesBeforeNextRead())
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        try tree.write("sub/file", "f")
        try await reader.collect(until: "file")
        try tree.rename("sub/file", to: "out")
        try await reader.collect(until: "out")
        try tree.makeDirectory("sub/dir")
        try await reader.collect(until: "dir")
        try tree.write("sub/dir/inside", "i")
        try tree.rename("sub/dir", to: "outdir")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")

        try expectReplayMatches(tree, before, reader.events)
        #expect(reader.events.last { $0.path == tree.path("out") }?.itemType == .file, "out is a file: \(describe(reader.events))")
    }

    @Test("items made where the watcher may not look, then moved out or removed before it reads, are not left behind")
    func movedOutAndRemovedTogether() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        try tree.makeDirectory("sub")
        let changes = ChangesBeforeNextRead()
        var reader = try await collector(for: tree, changes: changes)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        changes.make { [tree] in
            try? tree.write("sub/file", "f")
            try? tree.rename("sub/file", to: "out")
            try? tree.makeDirectory("sub/dir")
            try? tree.write("sub/dir/inside", "i")
            try? tree.rename("sub/dir", to: "outdir")
            try? tree.write("sub/gone", "g")
            try? tree.remove("sub/gone")
            // Made again after it went: this one stays.
            try? tree.write("sub/again", "1")
            try? tree.remove("sub/again")
            try? tree.write("sub/again", "2")
            try? tree.write("sub/within", "w")
            try? tree.rename("sub/within", to: "sub/renamed")
        }
        // Wakes the watch, whose next read finds every change above queued behind this.
        try tree.write("wake", "w")
        try await reader.collect(until: "wake")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")

        #expect(tree.exists("outdir/inside") && tree.exists("sub/again") && !tree.exists("sub/gone"), "the changes were not made")
        try expectReplayMatches(tree, before, reader.events)
    }

    private func collector(for tree: ScratchTree, changes: ChangesBeforeNextRead) async throws -> MarkerCollector {
        let refused = tree.path("sub")
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try RefusedExaminationKernel(refusingLookupsIn: refused, changes: changes)
        }
        return try await MarkerCollector(stream)
    }

    /// The replay equals the disk, except for the type of a name directly in `sub`, which the
    /// watcher may not know.
    private func expectReplayMatches(_ tree: ScratchTree, _ before: DiskTree, _ events: [FileSystemEvent]) throws {
        var model = ReplayModel(initial: before, root: tree.root)
        for event in events { model.apply(event) }
        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        let problems = (model.anomalies + model.differences(from: after)).filter {
            !($0.hasPrefix("type differs at sub/") && $0.contains(": replay unknown,") && !$0.dropFirst("type differs at sub/".count).contains("/"))
        }
        #expect(problems.isEmpty, "\(problems)\n\(describe(events))")
    }

    private func describe(_ events: [FileSystemEvent]) -> String {
        events.map { "\($0.kind) \($0.path) \($0.itemType)\($0.isSynthetic ? " [synthetic]" : "")" }.joined(separator: "\n")
    }
}
#endif
