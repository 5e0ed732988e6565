import FileSystemEventsCore

extension ConformanceSuite {
    static let linkScenarios: [ConformanceScenario] = [
        ConformanceScenario(19, "a symlink, and symlink loops (no hang, not followed)") { context in
            try context.tree.makeDirectories("target/inner")
            try context.tree.write("target/inner/file.txt", "x")
            // Loops present before the watch starts: the initial scan must not follow them.
            try context.tree.symlink("target/inner/up", pointingTo: "../..")
            try context.tree.symlink("self", pointingTo: "self")
            let watch = try await context.watch()
            try context.tree.symlink("link", pointingTo: "target")
            try context.tree.symlink("ping", pointingTo: "pong")
            try context.tree.symlink("pong", pointingTo: "ping")
            try context.tree.symlink("dangling", pointingTo: "does/not/exist")
            try await watch.sync()
            for name in ["link", "ping", "pong", "dangling"] {
                try watch.expect(.created, RelativePath(name), type: .symlink)
            }
            try watch.expectNothing(within: "link/inner")
            try watch.assertReplayMatchesDisk()

            // Following links, a loop still terminates: the watch becomes ready and reports.
            let following = try await context.watch { $0.followsSymlinks = true }
            try context.tree.write("after-follow.txt", "y")
            try await following.sync()
            try following.expect(.created, "after-follow.txt")
        },
        ConformanceScenario(20, "a hard link") { context in
            try context.tree.write("original.txt", "shared content")
            let watch = try await context.watch()
            try context.tree.hardLink("alias.txt", to: "original.txt")
            try await watch.sync()
            try watch.expect(.created, "alias.txt", type: .file)
            try watch.expectNo(.removed, "original.txt")
            let index = watch.eventCount
            try context.tree.append("alias.txt", " edited through the alias")
            try await watch.sync()
            try watch.expect(.modified, "alias.txt", since: index)
            try watch.assertReplayMatchesDisk()
        },
    ]
}
