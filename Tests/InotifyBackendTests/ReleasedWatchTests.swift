#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Testing

/// Watches released by the model are removed from the kernel a batch per read
/// (`ReleasedWatches`), not at once. A subtree moved out and one as large moved in, read
/// together, must still fit under a watch limit that holds either: every released watch is gone
/// before the second subtree needs the room (fails if released watches are never removed).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ReleasedWatchTests {
    @Test("a subtree moved out and one as large moved in, read together, fit under a watch limit that holds either")
    func releasedWatchesMakeRoomUnderTheLimit() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        // More than one batch of removals (at most 4,096), so that some still wait when the
        // second subtree is crawled.
        let count = ReleasedWatches.batchSize + 500
        try tree.makeDirectory("leaving")
        try tree.makeDirectory("arriving", in: .outside)
        try tree.makeDirectory("away", in: .outside)
        for index in 0..<count {
            try tree.makeDirectory(RelativePath("leaving/d\(index)"))
            try tree.makeDirectory(RelativePath("arriving/d\(index)"), in: .outside)
        }
        try tree.write("arriving/d0/file.txt", "f", in: .outside)
        let changes = ChangesBeforeNextRead()
        let limit = count + count / 2
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            try WatchCountingKernel(limit: limit, changes: changes)
        }
        var reader = try await MarkerCollector(stream)
        let before = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }

        changes.make { [tree] in
            try? tree.rename("leaving", to: "away/leaving", to: .outside)
            try? tree.rename("arriving", to: "arrived", from: .outside)
        }
        try tree.write("wake", "w")
        try await reader.collect(until: "wake")
        try tree.write("arrived/d1/marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        let after = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in reader.events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems.prefix(10))")
    }
}
#endif
