#if os(Linux)
@testable import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
#if InotifyTools
import FileSystemEventsInotifyTools
#endif
import SystemPackage
import Testing

/// The inotify backends watch a file with a name out of view (and every file root) on its own
/// as well as through its directory, so a write through a name in view is heard twice: by the
/// directory's watch and by the file's, queued together. It must be told once. Two things see
/// to that: the watch drops the file's event that follows the directory's for the same file
/// (`ReportedChange`), and the batcher coalesces repeats within a batch; this checks what a
/// consumer sees, whichever of the two does it (either alone passes it while the two events
/// are read together).
///
/// Not a conformance scenario: a polling backend may tell one write twice, when the write
/// races its scan (the digest-polling example, which reads the file after examining it).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HardLinkWatchTests {
    static let scenarios: [ConformanceScenario] = [
        ConformanceScenario(1, "a file of the tree with a name in an excluded directory, written through its name in view") { context in
            try context.tree.makeDirectory("skipped")
            try context.tree.write("kept.txt", "one")
            try context.tree.hardLink("skipped/kept", to: "kept.txt")
            let watch = try await context.watch { $0.filter = PathFilter(exclude: [PathGlob("skipped")]) }
            // Past the `modified` the examination after `ready` may tell: the file changed a
            // moment before the watch began.
            try await watch.sync()
            for round in 1...3 {
                let index = watch.eventCount
                try context.tree.append("kept.txt", " in view \(round)")
                try await watch.sync()
                try Self.expectOneWrite(context.tree.path("kept.txt"), watch, since: index, "in view")
                // Through the name out of view: heard by the file's own watch only.
                let outIndex = watch.eventCount
                try context.tree.append("skipped/kept", " out of view \(round)")
                try await watch.sync()
                try Self.expectOneWrite(context.tree.path("kept.txt"), watch, since: outIndex, "out of view")
            }
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(2, "a file root, written through its own name and through another link") { context in
            try context.tree.write("root.txt", "one")
            try context.tree.hardLink("other", to: "root.txt")
            let file = context.tree.path("root.txt")
            let watch = try await context.watch { $0.roots = [file] }
            for round in 1...3 {
                for name in ["root.txt", "other"] {
                    let index = watch.eventCount
                    try context.tree.append(RelativePath(name), " through \(name) \(round)")
                    // The writes through the other name come after each write through the own
                    // name: a repeat of the latter would be read with it, ahead of the next.
                    try await watch.waitForEvent("modified root.txt, written through \(name)", from: index) {
                        $0.path == file && $0.kind == .modified
                    }
                    try Self.expectOneWrite(file, watch, since: index, "through \(name)")
                }
            }
        },
    ]

    static func expectOneWrite(_ path: FilePath, _ watch: WatchSession, since index: Int, _ how: String) throws {
        let events = watch.events[index...]
        let writes = events.filter { $0.path == path && $0.kind == .modified }.count
        guard writes == 1 else {
            throw ConformanceFailure("one write \(how) was told \(writes) times:\n  \(events.map(\.description).joined(separator: "\n  "))")
        }
    }

    @Test("inotify: a write heard by a file's own watch and its directory's is told once", arguments: scenarios)
    func inotify(_ scenario: ConformanceScenario) async throws {
        try await scenario.run(against: ConformanceBackend(name: "inotify") { InotifyEventSource(options: $0) })
    }

    #if InotifyTools
    @Test("inotifytools: a write heard by a file's own watch and its directory's is told once", arguments: scenarios)
    func inotifyTools(_ scenario: ConformanceScenario) async throws {
        try await scenario.run(against: ConformanceBackend(name: "inotifytools") { InotifyToolsEventSource(options: $0) })
    }
    #endif
}
#endif
