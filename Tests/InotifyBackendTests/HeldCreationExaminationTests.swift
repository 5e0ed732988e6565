#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage
import Testing

/// A creation examined while the queue was busy keeps what its name was found to hold until an
/// event read since says that may have changed. Creations held behind one that waits for a
/// rename (``HeldCreationKernel``) kept theirs through such an event: a directory made, looked
/// at, then moved out of the tree was told `created` after its departure had been read, and
/// stayed in the replay (scenario 113, seed 704401, in about one run in three on inotify and
/// inotifytools, found by a stress run as `nobody`).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HeldCreationExaminationTests {
    @Test("a creation held behind a rename is looked at again once its name was moved away")
    func heldCreationMovedAway() async throws {
        let tree = try ScratchTree()
        try tree.write("F", "the file that ends at L")
        var options = WatchOptions(roots: [tree.root])
        // Two waiting creations reach the limit: examined at once, with the queue busy.
        options.bufferLimit = 2
        let source = tree.path("D").string
        let destination = tree.path("D", in: .outside).string
        let stream = InotifyEventSource.updates(options: options) { () throws(FileSystemEventsError) in
            try HeldCreationKernel(movingOut: source, to: destination)
        }
        var reader = try await MarkerCollector(stream)
        let root = tree.absolute(.root, in: .root)
        let before = DiskTree.read(root: root, recursive: true) { _, _ in true }

        try tree.symlink("L", pointingTo: "x")
        try tree.makeDirectory("D")
        try tree.rename("L", to: "S")
        try tree.rename("F", to: "L")
        // The kernel moves D out between its two reads.
        try await reader.collect(until: "L")
        try tree.write("marker", "after every change above")
        try await reader.collect(until: "marker")
        await reader.stop()

        #expect(!tree.exists("D"), "D was not moved out: nothing was tested")
        let after = DiskTree.read(root: root, recursive: true) { _, _ in true }
        var model = ReplayModel(initial: before, root: tree.root)
        for event in reader.events { model.apply(event) }
        let problems = model.anomalies + model.differences(from: after)
        #expect(problems.isEmpty, "\(problems)\n\(reader.events.map { "\($0.kind) \($0.path) \($0.isSynthetic ? "[synthetic]" : "")" }.joined(separator: "\n"))")
    }
}
#endif
