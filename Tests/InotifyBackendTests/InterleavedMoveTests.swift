#if os(Linux)
import ConformanceTestSupport
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage
import Testing

/// A rename whose two halves were read with another event between them (``MoveHalves``) is
/// told as a rename: before, the first half followed by anything else was taken for a move
/// out of the tree, and the rename became `removed` and `created`, which a follower of
/// `app.log` could not connect to the path (a rotated file lost, 1 in 40 under a writer
/// appending in a tight loop while another process rotated every millisecond).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct InterleavedMoveTests {
    @Test("a rename with a write queued between its halves is told as renamed, and replays exactly",
          arguments: [false, true])
    func renameWithAWriteBetweenItsHalves(splittingReads: Bool) async throws {
        let tree = try ScratchTree()
        try tree.write("app.log", "one\n")
        try tree.makeDirectory("old")
        let options = WatchOptions(roots: [tree.root])
        let stream = InotifyEventSource.updates(options: options) { () throws(FileSystemEventsError) in
            try InterleavedMoveKernel(splittingReads: splittingReads)
        }
        var reader = try await MarkerCollector(stream)
        let root = tree.absolute(.root, in: .root)
        let before = DiskTree.read(root: root, recursive: true) { _, _ in true }
        let interleavedBefore = InterleavedMoveKernel.interleaved.load(ordering: .relaxed)

        try tree.rename("app.log", to: "app.log.1")
        try tree.rename("app.log.1", to: "old/app.log.1")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(InterleavedMoveKernel.interleaved.load(ordering: .relaxed) >= interleavedBefore + 2, "no rename was interleaved: nothing was tested")
        let told = reader.events.map { "\($0.kind) \($0.path) \($0.previousPath.map { "from \($0)" } ?? "")" }.joined(separator: "\n")
        #expect(!reader.events.contains { $0.kind == .removed }, "\(told)")
        #expect(reader.events.contains { $0.kind == .renamed && $0.path == tree.path("app.log.1") && $0.previousPath == tree.path("app.log") }, "\(told)")
        #expect(reader.events.contains { $0.kind == .renamed && $0.path == tree.path("old/app.log.1") && $0.previousPath == tree.path("app.log.1") }, "\(told)")
        let after = DiskTree.read(root: root, recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in reader.events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems)\n\(told)")
    }

    /// Renames of files and directories, within and across levels, and names traded in
    /// bursts, with an event between every rename's halves, read together or apart.
    static let renameScenarios = scenarios(numberedIn: "FILEWATCH_INTERLEAVED_MOVE_ONLY", default: [8, 9, 10, 11, 12, 129])

    @Test("rename scenarios replay exactly with an event between every rename's halves, read together",
          arguments: renameScenarios)
    func scenariosInterleaved(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, splittingReads: false)
    }

    @Test("rename scenarios replay exactly with an event between every rename's halves, read apart",
          arguments: renameScenarios)
    func scenariosInterleavedAndSplit(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, splittingReads: true)
    }

    private func run(_ scenario: ConformanceScenario, splittingReads: Bool) async throws {
        let name = "inotify, an event between a rename's halves\(splittingReads ? ", read apart" : "")"
        let backend = ConformanceBackend(name: name) { options in
            TestKernelSource(options: options, backendName: name) { () throws(FileSystemEventsError) in
                try InterleavedMoveKernel(splittingReads: splittingReads)
            }
        }
        let before = InterleavedMoveKernel.interleaved.load(ordering: .relaxed)
        try await ConformanceTestSupport.run(scenario, against: backend)
        #expect(InterleavedMoveKernel.interleaved.load(ordering: .relaxed) > before, "no rename was interleaved: nothing was tested")
    }

    @Test("the halves of renames are put together by cookie; moves out of the tree, and pairs already together, stay as they are")
    func reunitesByCookie() {
        func event(_ mask: Inotify.Mask, _ cookie: UInt32, _ name: String, watch: CInt = 1) -> Inotify.Event {
            Inotify.Event(watch: watch, mask: mask, cookie: cookie, name: Array(name.utf8))
        }
        func names(_ events: [Inotify.Event]) -> [String] { events.map { String(decoding: $0.name, as: UTF8.self) } }

        var together = [event(.movedFrom, 1, "a"), event(.movedTo, 1, "b"), event(.modify, 0, "b")]
        #expect(!MoveHalves.reunite(&together, pending: nil))

        var movedOut = [event(.movedFrom, 1, "a"), event(.modify, 0, "c"), event(.movedFrom, 2, "d")]
        #expect(!MoveHalves.reunite(&movedOut, pending: nil))
        #expect(names(movedOut) == ["a", "c", "d"])

        var apart = [event(.movedFrom, 7, "a"), event(.modify, 0, "b"), event(.create, 0, "x", watch: 2),
                     event(.movedTo, 7, "b"), event(.movedFrom, 8, "x", watch: 2), event(.movedTo, 8, "y", watch: 3)]
        #expect(MoveHalves.reunite(&apart, pending: nil))
        #expect(names(apart) == ["a", "b", "b", "x", "x", "y"])
        #expect(apart.map(\.cookie) == [7, 7, 0, 0, 8, 8])

        // The first half ended the previous read.
        var next = [event(.modify, 0, "b"), event(.movedTo, 9, "b")]
        #expect(MoveHalves.reunite(&next, pending: event(.movedFrom, 9, "a")))
        #expect(next.map(\.cookie) == [9, 0])
    }
}
#endif
