import FileSystemEventsCore

extension ConformanceSuite {
    static let basicScenarios: [ConformanceScenario] = [
        ConformanceScenario(1, "create a file") { context in
            let watch = try await context.watch()
            try context.tree.write("a.txt", "hello")
            try await watch.sync()
            try watch.expect(.created, "a.txt", type: .file)
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(2, "append to a file") { context in
            try context.tree.write("log.txt", "first\n")
            let watch = try await context.watch()
            try context.tree.append("log.txt", "second\n")
            try await watch.sync()
            try watch.expect(.modified, "log.txt", type: .file)
            try watch.expectNo(.created, "log.txt")
            try watch.expectNo(.removed, "log.txt")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(3, "atomic save (write a temp file, rename it over the original)") { context in
            try context.tree.write("doc.txt", "version 1")
            let watch = try await context.watch()
            try context.tree.write(".doc.txt.swp", "version 2, longer")
            try context.tree.rename(".doc.txt.swp", to: "doc.txt")
            try await watch.sync()
            try watch.assertReplayMatchesDisk()
            let events = watch.scenarioEvents()
            let docPath = context.tree.path("doc.txt")
            try check(events.contains { $0.path == docPath && [.created, .renamed, .modified].contains($0.kind) },
                      "no event made doc.txt's new content known; got:\n  \(watch.describeEvents(since: 0))")
        },
        ConformanceScenario(4, "delete a file") { context in
            try context.tree.write("gone.txt", "x")
            let watch = try await context.watch()
            try context.tree.remove("gone.txt")
            try await watch.sync()
            try watch.expect(.removed, "gone.txt")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(5, "chmod") { context in
            try context.tree.write("mode.txt", "x")
            let watch = try await context.watch()
            try context.tree.changeMode("mode.txt", to: 0o600)
            try await watch.sync()
            try watch.expect(.attributesChanged, "mode.txt")
            try watch.expectNo(.modified, "mode.txt")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(6, "mkdir") { context in
            let watch = try await context.watch()
            try context.tree.makeDirectory("new")
            try await watch.sync()
            try watch.expect(.created, "new", type: .directory)
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(33, "a second write within the same second is seen") { context in
            try context.tree.write("twice.txt", "zero")
            let watch = try await context.watch()
            try context.tree.write("twice.txt", "one!")
            try await watch.sync()
            let afterFirst = watch.eventCount
            try watch.expect(.modified, "twice.txt")
            // Same size, same second: only the nanosecond timestamps tell this write apart.
            try context.tree.write("twice.txt", "two!")
            try await watch.sync()
            try watch.expect(.modified, "twice.txt", since: afterFirst)
            try watch.assertReplayMatchesDisk()
        },
    ]
}
