#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Glibc
import SystemPackage
import Testing

/// What changes while the start-up crawl runs is in the tree a consumer reads at `ready`, so it
/// is not told after `ready` as well (see `InotifyWatch.absorbChangesMadeDuringStartUp()`).
/// Told, a rename reached a consumer whose tree already had it, and moved nothing onto the
/// directory it had read there: the directory was gone from its replay.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StartUpChangeTests {
    @Test("directories renamed, made and removed during the start-up crawl are in the tree at ready, and not told after it")
    func changesDuringTheCrawl() async throws {
        let tree = try ScratchTree()
        defer { tree.remove() }
        for directory in ["src/inner", "gone", "other/deeper"] { try tree.makeDirectories(RelativePath(directory)) }
        try tree.write("src/inner/file.txt", "f")
        let root = tree.root
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root])) { () throws(FileSystemEventsError) in
            // The second watch is the first below the root, which the crawl has listed by then.
            try ChangingDuringCrawlKernel(beforeWatch: 2) {
                _ = rename(root.appending("src").string, root.appending("dst").string)
                _ = mkdir(root.appending("made").string, 0o755)
                _ = rmdir(root.appending("gone").string)
            }
        }
        var iterator = stream.makeAsyncIterator()
        var beforeReady: [FileSystemEvent] = []
        waiting: while let update = try await iterator.next() {
            switch update {
            case .ready: break waiting
            case .events(let batch): beforeReady += batch
            default: continue
            }
        }
        #expect(beforeReady.isEmpty, "events before ready: \(beforeReady.map { "\($0.kind) \($0.path)" })")
        #expect(tree.exists("dst/inner/file.txt") && tree.exists("made") && !tree.exists("src") && !tree.exists("gone"),
                "the changes were not made during the crawl")
        try tree.write("marker", "after ready")
        var told: [FileSystemEvent] = []
        collecting: while let update = try await iterator.next() {
            guard case .events(let batch) = update else { continue }
            for event in batch {
                if event.path == tree.path("marker") { break collecting }
                told.append(event)
            }
        }
        #expect(told.isEmpty, "changes made before ready, told after it: \(told.map { "\($0.kind) \($0.path)" })")
    }
}
#endif
