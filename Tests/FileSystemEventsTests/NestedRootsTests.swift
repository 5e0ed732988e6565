import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Testing

/// Roots inside other roots (`filewatch watch /srv /srv/www`) are one watch: each change is
/// reported once, every root has its `ready` and its own `rootRemoved`, and the process holds
/// one inotify instance for them.
@Suite(.serialized) struct NestedRootsTests {
    @Test("nested and repeated roots: one watch, each change once, an inner root removed ends alone", arguments: availableBackends)
    func nestedRoots(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("inner/deeper")
        let roots = [tree.root, tree.path("inner"), tree.path("inner/deeper"), tree.path("inner")]
        var options = WatchOptions(roots: roots, pollInterval: .milliseconds(20))
        options.capturesInitialState = true
        let before = watchDescriptors().filter { $0.hasSuffix("anon_inode:inotify") }.count
        let stream = try backend.makeSource(options: options).updates()
        let readyRoots = try await untilDeadline(.seconds(30)) { () -> [FilePath]? in
            for try await update in stream { if case .ready(let roots) = update { return roots } }
            return nil
        }
        #expect(readyRoots == roots, "\(backend): ready names every root, as given")
        #expect(stream.initialState?.count == roots.count, "\(backend): one initial snapshot per root")
        let instances = watchDescriptors().filter { $0.hasSuffix("anon_inode:inotify") }.count - before
        #expect(instances <= (backend == .polling ? 0 : 1), "\(backend): \(instances) inotify instances for nested roots")

        try tree.write("inner/deeper/file.txt", "x")
        try tree.write("inner/middle.txt", "y")
        try tree.write("outer.txt", "z")
        try tree.removeTree("inner/deeper")
        try tree.write("inner/marker", "")
        let observed = try await observe(stream, stopping: false) { observed in
            observed.events.contains { $0.path == tree.path("inner/marker") }
        }
        let events = observed.events
        for name in ["inner/middle.txt", "outer.txt", "inner/marker"] {
            let created = events.filter { $0.kind == .created && $0.path == tree.path(RelativePath(name)) }.count
            #expect(created == 1, "\(backend): \(name) reported created \(created) times: \(events.map { "\($0.kind) \($0.path)" })")
        }
        // The deepest root is gone: it ends; the others report its removal and go on.
        let endings = events.filter { $0.kind == .rootRemoved }.map(\.path)
        #expect(endings == [tree.path("inner/deeper")], "\(backend): \(endings)")
        #expect(events.contains { $0.kind == .removed && $0.path == tree.path("inner/deeper") })
        try tree.write("after.txt", "")
        let later = try await observe(stream) { $0.events.contains { $0.path == tree.path("after.txt") } }
        #expect(later.events.filter { $0.path == tree.path("after.txt") && $0.kind == .created }.count == 1)
    }
}
