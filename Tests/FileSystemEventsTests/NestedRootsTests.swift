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
        let observed = try await observe(stream, stopping: false, untilEvent: { $0.path == tree.path("inner/marker") })
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
        let later = try await observe(stream, untilEvent: { $0.path == tree.path("after.txt") })
        #expect(later.events.filter { $0.path == tree.path("after.txt") && $0.kind == .created }.count == 1)
    }

    /// One stream for roots inside a root is one tree to its consumer. A file root inside a
    /// directory root (`watch A A/f`) printed `removed A/f` for itself and then the outer
    /// root's `renamed A/g <- A/f`, which then had nothing to move; roots that held a file root
    /// were watched root by root, every change under an inner directory root printed twice;
    /// and an inner root's `rootRemoved` came before the `renamed` that took it away, so a
    /// consumer that dropped it lost the subtree the rename then moved.
    @Test("a file root and a directory root inside another, and a root named twice: each change once, in an order that replays, each rootRemoved after the change that caused it",
          arguments: availableBackends)
    func innerFileAndDirectoryRoots(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("sub/deep")
        try tree.write("f", "x")
        try tree.write("sub/g", "y")
        let roots = [tree.root, tree.path("sub"), tree.path("f"), tree.path("f")]
        let start = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        let stream = try backend.makeSource(options: WatchOptions(roots: roots, pollInterval: .milliseconds(20))).updates()
        let observed = try await observe(stream, onReady: {
            try tree.rename("f", to: "f2")              // the file root, renamed inside the outer root
            try tree.write("sub/new", "z")              // under the inner directory root
            try tree.rename("sub/deep", to: "sub/deeper")
            try tree.rename("sub", to: "sub2")          // the inner directory root, moved away
            try tree.write("marker", "")
        }, untilEvent: { $0.kind == .created && $0.path == tree.path("marker") })
        let events = observed.events
        let told = Self.describe(events)
        // The outer root's tree, replayed: an inner root's `rootRemoved` changes nothing in it.
        Self.expectReplay(events, from: [start], roots: [tree.root], ignoringRootRemoved: true, backend: backend)
        // Told where it was made, or where it stood when the backend looked: once.
        for names in [["sub/new", "sub2/new"], ["marker"]] {
            let paths = names.map { tree.path(RelativePath($0)) }
            let created = events.filter { $0.kind == .created && paths.contains($0.path) }.count
            #expect(created == 1, "\(backend): \(names[0]) created \(created) times in \(told)")
        }
        let ended = events.firstIndex { $0.kind == .rootRemoved && $0.path == tree.path("sub") }
        let tookAway = events.firstIndex { $0.path == tree.path("sub") || $0.previousPath == tree.path("sub") }
        #expect(ended != nil && tookAway != nil && tookAway! < ended!, "\(backend): \(told)")
        #expect(!events.contains { $0.kind == .rootRemoved && $0.path == tree.path("f") }, "\(backend): a file root is watched by name: \(told)")
    }

    /// A directory named as a root twice, once by its path and once through a symlink, is one
    /// directory to the kernel, with one watch: every change there happened at both roots.
    /// The inotify backends applied a rename, a move in or a move out at one of them only, so
    /// the other root's replay kept the old names.
    @Test("a root and a symlink to it, watched side by side: each replays to the disk through renames, moves in and out, and an exchange",
          arguments: availableBackends)
    func rootAndSymlinkToIt(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("d/sub/deep")
        try tree.makeDirectory("outside")
        try tree.write("d/a", "a")
        try tree.write("d/sub/b", "b")
        try tree.write("outside/in", "in")
        try tree.symlink("link", pointingTo: "d")
        let roots = [tree.path("d"), tree.path("link")]
        let start = roots.map { DiskTree.read(root: $0.bytes, recursive: true) { _, _ in true } }
        let stream = try backend.makeSource(options: WatchOptions(roots: roots, pollInterval: .milliseconds(20))).updates()
        let observed = try await observe(stream, onReady: {
            try tree.rename("d/a", to: "d/a2")                  // within a directory
            try tree.rename("d/sub/b", to: "d/b")               // between two
            try tree.rename("d/sub/deep", to: "d/deep")         // a directory, between two
            try tree.rename("outside/in", to: "d/sub/in")       // moved in
            try tree.rename("d/a2", to: "outside/a2")           // moved out
            try tree.write("d/x", "x")
            try tree.makeDirectory("d/y")
            try tree.exchange("d/x", "d/y")                     // a swap
            try tree.write("d/marker", "")
        }) { observed in
            [tree.path("d/marker"), tree.path("link/marker")].allSatisfy { marker in
                observed.events.contains { $0.kind == .created && $0.path == marker }
            }
        }
        let events = observed.events
        Self.expectReplay(events, from: start, roots: roots, ignoringRootRemoved: false, backend: backend)
    }

    /// Roots that nest beside a root reached through a symlink (`watch A A/sub L`, with
    /// `L -> A/sub`): the symlink root made every root be watched on its own, so each change
    /// under `A/sub` was told twice under `A/` (and a move out of it as a rename and then a
    /// removal of what had just moved). The nested roots share a watch now, and the symlink
    /// root is a root of that watch, told under its own name.
    @Test("nested roots beside a symlink root: each change once under each name, in an order that replays", arguments: availableBackends)
    func nestedRootsBesideASymlinkRoot(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("A/sub/deep")
        try tree.write("A/sub/g", "g")
        try tree.write("A/h", "h")
        try tree.symlink("L", pointingTo: "A/sub")
        let roots = [tree.path("A"), tree.path("A/sub"), tree.path("L")]
        let outer = [tree.path("A"), tree.path("L")]
        let start = outer.map { DiskTree.read(root: $0.bytes, recursive: true) { _, _ in true } }
        let stream = try backend.makeSource(options: WatchOptions(roots: roots, pollInterval: .milliseconds(20))).updates()
        let observed = try await observe(stream, onReady: {
            try tree.rename("A/sub/g", to: "A/sub/deep/g2")
            try tree.rename("A/sub/deep/g2", to: "A/moved")     // out of the inner root
            try tree.rename("A/h", to: "A/sub/h")               // into it
            try tree.write("A/sub/new", "n")
            try tree.write("A/marker", "")
        }, untilEvent: { $0.kind == .created && $0.path == tree.path("A/marker") })
        let events = observed.events
        let told = Self.describe(events)
        Self.expectReplay(events, from: start, roots: outer, ignoringRootRemoved: true, backend: backend)
        let created = events.filter { $0.kind == .created && $0.path == tree.path("A/sub/new") }.count
        #expect(created == 1, "\(backend): A/sub/new created \(created) times in \(told)")
    }

    static func describe(_ events: [FileSystemEvent]) -> [String] {
        events.map { "\($0.kind) \($0.path)\($0.previousPath.map { " <- \($0)" } ?? "")" }
    }

    /// Replays `events` onto the trees `start` held at `roots` and expects the disk: no event
    /// that does not apply, and nothing missing or extra. An inner root's `rootRemoved` is a
    /// notice to a consumer keeping one tree of all its roots (`ignoringRootRemoved`).
    static func expectReplay(
        _ events: [FileSystemEvent], from start: [DiskTree], roots: [FilePath], ignoringRootRemoved: Bool,
        backend: FileSystemEventBackend, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var model = ReplayModel(initial: start, roots: roots)
        for event in events where !(ignoringRootRemoved && event.kind == .rootRemoved) { model.apply(event) }
        let disk = roots.map { DiskTree.read(root: $0.bytes, recursive: true) { _, _ in true } }
        let told = describe(events)
        #expect(model.anomalies.isEmpty, "\(backend): \(model.anomalies.prefix(3)) in \(told)", sourceLocation: sourceLocation)
        #expect(model.differences(from: disk).isEmpty, "\(backend): \(model.differences(from: disk).prefix(6)) in \(told)",
                sourceLocation: sourceLocation)
    }
}
