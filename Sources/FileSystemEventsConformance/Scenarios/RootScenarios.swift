import FileSystemEventsCore

extension ConformanceSuite {
    static let rootScenarios: [ConformanceScenario] = [
        ConformanceScenario(22, "watching a single file: writes, an editor's atomic replace, deletion") { context in
            try context.tree.write("single.txt", "one")
            let file = context.tree.path("single.txt")
            let watch = try await context.watch { $0.roots = [file] }
            try context.tree.append("single.txt", " two")
            try await watch.waitForEvent("modified single.txt") { $0.path == file && $0.kind == .modified }
            try watch.assertReplayMatchesDisk("appended to")

            // An editor's save: write a temporary file beside it, rename it over the original.
            var index = watch.eventCount
            try context.tree.write(".single.txt.tmp", "replaced content")
            try context.tree.rename(".single.txt.tmp", to: "single.txt")
            try await watch.waitForEvent("the replacement of single.txt", from: index) {
                $0.path == file && ($0.kind == .created || $0.kind == .modified)
            }
            try watch.expectNothing(within: ".single.txt.tmp")
            try watch.assertReplayMatchesDisk("replaced by an atomic save")

            // The new file must still be watched.
            index = watch.eventCount
            try context.tree.append("single.txt", " and more")
            try await watch.waitForEvent("modified single.txt after the replace", from: index) {
                $0.path == file && $0.kind == .modified
            }
            try watch.assertReplayMatchesDisk("appended to after the replace")
            // Watched by name, like `tail -F`: deleted, it is `removed`, and the watch goes on.
            index = watch.eventCount
            try context.tree.remove("single.txt")
            try await watch.waitForEvent("removed single.txt", from: index) { $0.path == file && $0.kind == .removed }
            index = watch.eventCount
            try context.tree.write("single.txt", "back again")
            try await watch.waitForEvent("created single.txt", from: index) { $0.path == file && $0.kind == .created }

            // Rotation: renamed away, a new file in its place: the new file is `created`.
            index = watch.eventCount
            try context.tree.rename("single.txt", to: "single.txt.1")
            try context.tree.write("single.txt", "rotated")
            try await watch.waitForEvent("created single.txt after rotation", from: index) { $0.path == file && $0.kind == .created }
            try context.tree.append("single.txt", " and appended")
            try await watch.waitForEvent("modified single.txt after rotation", from: index) { $0.path == file && $0.kind == .modified }
            try check(!watch.events.contains { $0.kind == .rootRemoved },
                      "a file watched by name must survive deletion and rotation:\n  \(watch.describeEvents(since: 0))")
            try watch.expectNothing(within: "single.txt.1")

            // Its directory gone, the watch ends.
            index = watch.eventCount
            try context.tree.removeTree(.root)
            try await watch.waitForEvent("rootRemoved for single.txt", from: index) { $0.path == file && $0.kind == .rootRemoved }
            try await watch.waitForEnd()
            try watch.assertReplayMatchesDisk("deleted")
        },
        ConformanceScenario(85, "a root that is a symlink to a file: writes to the target, the target replaced, the link re-pointed") { context in
            try context.tree.makeDirectories("data")
            try context.tree.write("data/app-1.log", "one")
            try context.tree.symlink("current.log", pointingTo: "data/app-1.log")
            let root = context.tree.path("current.log")
            let watch = try await context.watch { $0.roots = [root] }
            // Followed like a symlink to a directory: a write through the target's own name
            // is a change of the watched file.
            try context.tree.append("data/app-1.log", " two")
            try await watch.waitForEvent("modified current.log after a write to its target") { $0.path == root && $0.kind == .modified }
            try watch.assertReplayMatchesDisk("the target appended to")

            // The target replaced by an atomic save in its own directory.
            var index = watch.eventCount
            try context.tree.write("data/.app-1.log.tmp", "replaced")
            try context.tree.rename("data/.app-1.log.tmp", to: "data/app-1.log")
            try await watch.waitForEvent("the target's replacement", from: index) {
                $0.path == root && ($0.kind == .created || $0.kind == .modified)
            }
            try watch.assertReplayMatchesDisk("the target replaced")
            index = watch.eventCount
            try context.tree.append("data/app-1.log", " more")
            try await watch.waitForEvent("modified after the target's replacement", from: index) { $0.path == root && $0.kind == .modified }

            // The link re-pointed (a new link renamed over it): another file, `created`, and
            // its writes are heard.
            index = watch.eventCount
            try context.tree.write("data/app-2.log", "second")
            try context.tree.symlink("current.log.new", pointingTo: "data/app-2.log")
            try context.tree.rename("current.log.new", to: "current.log")
            try await watch.waitForEvent("created current.log for the new target", from: index) { $0.path == root && $0.kind == .created }
            try watch.assertReplayMatchesDisk("the link re-pointed")
            index = watch.eventCount
            try context.tree.append("data/app-2.log", " appended")
            try await watch.waitForEvent("modified after the link was re-pointed", from: index) { $0.path == root && $0.kind == .modified }

            // The target deleted: the link dangles and the file is `removed`; the target
            // recreated is `created`.
            index = watch.eventCount
            try context.tree.remove("data/app-2.log")
            try await watch.waitForEvent("removed when the target is deleted", from: index) { $0.path == root && $0.kind == .removed }
            index = watch.eventCount
            try context.tree.write("data/app-2.log", "again")
            try await watch.waitForEvent("created when the target reappears", from: index) { $0.path == root && $0.kind == .created }
            try watch.assertReplayMatchesDisk("the target recreated")

            // The target's whole directory removed, then made again with the target inside.
            index = watch.eventCount
            try context.tree.removeTree("data")
            try await watch.waitForEvent("removed with the target's directory", from: index) { $0.path == root && $0.kind == .removed }
            index = watch.eventCount
            try context.tree.makeDirectories("data")
            try context.tree.write("data/app-2.log", "back")
            try await watch.waitForEvent("created when the target's directory and the target reappear", from: index) {
                $0.path == root && $0.kind == .created
            }
            try watch.assertReplayMatchesDisk("the target's directory recreated")
            try check(!watch.events.contains { $0.kind == .rootRemoved },
                      "a symlink root must survive its target's replacement and removal:\n  \(watch.describeEvents(since: 0))")
        },
        ConformanceScenario(23, "the root deleted: rootRemoved, and the sequence ends") { context in
            try context.tree.makeDirectories("a/b")
            try context.tree.write("a/b/c.txt", "x")
            let watch = try await context.watch()
            let root = context.tree.root
            try context.tree.removeTree(.root)
            try await watch.waitForEvent("rootRemoved") { $0.kind == .rootRemoved && $0.path == root }
            try await watch.waitForEnd()
            try check(watch.events.last?.kind == .rootRemoved, "events followed rootRemoved: \(watch.events.suffix(3))")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(24, "the root moved away: rootRemoved, and the sequence ends") { context in
            try context.tree.write("inside.txt", "x")
            let watch = try await context.watch()
            let root = context.tree.root
            try context.tree.rename(.root, to: "moved-root", to: .outside)
            try await watch.waitForEvent("rootRemoved") { $0.kind == .rootRemoved && $0.path == root }
            try await watch.waitForEnd()
            // Changes in the moved tree are no longer ours.
            try context.tree.write("moved-root/late.txt", "late", in: .outside)
            try check(watch.events.last?.kind == .rootRemoved, "events followed rootRemoved: \(watch.events.suffix(3))")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(108, "a directory above the roots renamed (a directory root, a file root): their paths no longer name them, rootRemoved, and the sequence ends",
                            runsUnprivileged: true) { context in
            // Nothing happens to the root itself, so neither it nor anything in it hears of
            // the rename: the path is what changed.
            // A file root is watched through its directory, which does not hear it either.
            try context.tree.makeDirectories("p/root/sub")
            try context.tree.write("p/root/sub/inside.txt", "x")
            try context.tree.makeDirectories("p/files")
            try context.tree.write("p/files/notes.txt", "n")
            let root = context.tree.path("p/root")
            let file = context.tree.path("p/files/notes.txt")
            let watch = try await context.watch { $0.roots = [root, file] }
            try context.tree.rename("p", to: "q")
            try await watch.waitForEvent("rootRemoved of the directory") { $0.kind == .rootRemoved && $0.path == root }
            try await watch.waitForEvent("rootRemoved of the file") { $0.kind == .rootRemoved && $0.path == file }
            try await watch.waitForEnd()
            try check(watch.events.last?.kind == .rootRemoved, "events followed rootRemoved: \(watch.events.suffix(3))")
            try watch.assertReplayMatchesDisk()
        },
    ]
}
