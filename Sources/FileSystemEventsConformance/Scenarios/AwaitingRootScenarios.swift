public import FileSystemEventsCore
import SystemPackage

// Roots that do not exist yet, or go away and come back (`WatchOptions.waitsForMissingRoots`).
// `AwaitingRootsSource` provides it over any backend, built on the protocol alone, so these
// scenarios run it over the backend under test: the backend's own watches of the root and of
// its ancestors must give it everything it needs.
extension ConformanceSuite {
    static let awaitingRootScenarios: [ConformanceScenario] = [
        ConformanceScenario(86, "a root that does not exist yet, made with `mkdir -p` and filled at once: created with every level") { context in
            let root = RelativePath("later/deep/root")
            let watch = try await context.watchAwaiting(root)
            try check(watch.readDisk().items.isEmpty, "the root should not exist at ready")
            try context.tree.makeDirectories("later/deep/root/x/y")
            try context.tree.write("later/deep/root/top.txt", "top")
            try context.tree.write("later/deep/root/x/middle.txt", "middle")
            try context.tree.write("later/deep/root/x/y/bottom.txt", "bottom")
            try await watch.sync(in: root)
            let rootPath = context.tree.path(root)
            try check(watch.events.first { $0.path == rootPath }?.kind == .created, "the root's first event should be its creation: \(watch.events.prefix(3))")
            try check(!watch.events.contains { $0.kind == .rootRemoved }, "rootRemoved while waiting for roots")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(87, "a waited-for root removed, made again and written: removed, then created with its contents") { context in
            let root = RelativePath("comes-and-goes")
            try context.tree.makeDirectories("comes-and-goes/inner")
            try context.tree.write("comes-and-goes/inner/old.txt", "old")
            let watch = try await context.watchAwaiting(root)
            let rootPath = context.tree.path(root)
            for round in 0..<3 {
                let start = watch.events.count
                try context.tree.removeTree(root)
                try await watch.waitForEvent("the root's removal in round \(round)", from: start) { $0.kind == .removed && $0.path == rootPath }
                try watch.assertReplayMatchesDisk("after removal \(round)")
                try context.tree.makeDirectories("comes-and-goes/inner")
                try context.tree.write(RelativePath("comes-and-goes/inner/new-\(round).txt"), "new \(round)")
                try await watch.sync(in: root)
                try watch.assertReplayMatchesDisk("after creation \(round)")
            }
            // Back as a file, then as a directory again, filled at once: the watch of a file
            // root cannot look into a directory, so the root is watched anew. (The kernel
            // backends told the directory's creation and nothing made in it, then or later.)
            var start = watch.events.count
            try context.tree.removeTree(root)
            try context.tree.write(root, "a file now")
            try await watch.waitForEvent("the root back as a file", from: start) { $0.kind == .created && $0.path == rootPath && $0.itemType == .file }
            try watch.assertReplayMatchesDisk("back as a file")
            start = watch.events.count
            try context.tree.remove(root)
            try context.tree.makeDirectories("comes-and-goes/inner")
            try context.tree.write("comes-and-goes/inner/after-the-file.txt", "x")
            try await watch.sync(in: root)
            try watch.assertReplayMatchesDisk("a directory again, after the file")
            try check(!watch.isFinished, "the watch ended although it waits for its root")
            try check(!watch.events.contains { $0.kind == .rootRemoved }, "rootRemoved while waiting for roots")
        },
        ConformanceScenario(109, "a waited-for root moved away with its parent, then made again: removed, then created with its contents",
                            runsUnprivileged: true) { context in
            let root = RelativePath("p/root")
            try context.tree.makeDirectories("p/root/inner")
            try context.tree.write("p/root/inner/old.txt", "old")
            let watch = try await context.watchAwaiting(root)
            let rootPath = context.tree.path(root)
            try context.tree.rename("p", to: "q")
            try await watch.waitForEvent("the root's removal") { $0.kind == .removed && $0.path == rootPath }
            try watch.assertReplayMatchesDisk("mv p q")
            // The moved tree is not the root any more.
            try context.tree.write("q/root/inner/late.txt", "late")
            try context.tree.makeDirectories("p/root/again")
            try context.tree.write("p/root/again/new.txt", "new")
            try await watch.sync(in: root)
            try watch.assertReplayMatchesDisk("mkdir -p p/root/again")
            let stale = watch.events.filter { $0.path.string.contains("late.txt") }
            try check(stale.isEmpty, "a change in the moved tree reported at the root's path: \(stale)")
            try check(!watch.events.contains { $0.kind == .rootRemoved }, "rootRemoved while waiting for roots")
        },
        ConformanceScenario(88, "a waited-for root whose ancestors are made, removed and moved away before it appears") { context in
            let root = RelativePath("a/b/c")
            let watch = try await context.watchAwaiting(root)
            try context.tree.makeDirectory("a")
            try context.tree.removeDirectory("a")
            try context.tree.makeDirectories("a/b")
            try context.tree.rename("a", to: "a-moved")
            // The moved ancestor's subtree is not the root's path any more.
            try context.tree.makeDirectories("a-moved/b/c")
            try context.tree.makeDirectories("a/b")
            try context.tree.rename("a/b", to: "b-moved")
            try context.tree.makeDirectories("a/b/c/d")
            try context.tree.write("a/b/c/d/file.txt", "here")
            try await watch.sync(in: root)
            try watch.assertReplayMatchesDisk()
            let rootPath = context.tree.path(root)
            let notOurs = watch.events.filter { !$0.path.starts(with: rootPath) }
            try check(notOurs.isEmpty, "events outside the root: \(notOurs.prefix(3))")
        },
        ConformanceScenario(89, "a waited-for root that is a file: created when written, replaced by an atomic save, its directory removed and made again") { context in
            let root = RelativePath("dir/file.txt")
            try context.tree.makeDirectory("dir")
            let watch = try await context.watchAwaiting(root)
            let file = context.tree.path(root)
            var index = watch.eventCount
            try context.tree.write(root, "first")
            try await watch.waitForEvent("the file's creation", from: index) { $0.kind == .created && $0.path == file }
            index = watch.eventCount
            try context.tree.append(root, " and more")
            try await watch.waitForEvent("the append", from: index) { $0.kind == .modified && $0.path == file }
            try watch.assertReplayMatchesDisk("created and appended to")

            index = watch.eventCount
            try context.tree.write("dir/.file.txt.tmp", "replaced")
            try context.tree.rename("dir/.file.txt.tmp", to: root)
            try await watch.waitForEvent("the replacement", from: index) { $0.path == file && ($0.kind == .created || $0.kind == .modified) }
            try watch.assertReplayMatchesDisk("replaced by an atomic save")

            index = watch.eventCount
            try context.tree.removeTree("dir")
            try await watch.waitForEvent("the file's removal with its directory", from: index) { $0.kind == .removed && $0.path == file }
            try watch.assertReplayMatchesDisk("its directory removed")
            index = watch.eventCount
            try context.tree.makeDirectory("dir")
            try context.tree.write(root, "again")
            try await watch.waitForEvent("the file made again", from: index) { $0.kind == .created && $0.path == file }
            index = watch.eventCount
            try context.tree.append(root, " and again")
            try await watch.waitForEvent("an append to the new file", from: index) { $0.kind == .modified && $0.path == file }
            try watch.assertReplayMatchesDisk("made again")
            try check(!watch.isFinished && !watch.events.contains { $0.kind == .rootRemoved }, "the watch must go on, with no rootRemoved")
        },
    ]
}

extension ConformanceContext {
    /// Starts a watch of `root` (below the scratch root, existing or not) with
    /// ``WatchOptions/waitsForMissingRoots``, through ``AwaitingRootsSource`` over the backend
    /// under test.
    public func watchAwaiting(_ root: RelativePath, _ configure: (inout WatchOptions) -> Void = { _ in }) async throws -> WatchSession {
        let backend = self.backend
        let awaiting = ConformanceBackend(name: "\(backend.name), awaiting roots") { options in
            var innerOptions = options
            innerOptions.waitsForMissingRoots = false
            let inner = try backend.makeSource(innerOptions)
            return AwaitingRootsSource(options: options, backendName: inner.backendName, capabilities: inner.capabilities) { options throws(FileSystemEventsError) in
                do {
                    return try backend.makeSource(options)
                } catch let error as FileSystemEventsError {
                    throw error
                } catch {
                    throw .invalidOptions("\(error)")
                }
            }
        }
        var options = WatchOptions(roots: [tree.path(root)])
        options.waitsForMissingRoots = true
        configure(&options)
        return try await watch(options: options, backend: awaiting)
    }
}
