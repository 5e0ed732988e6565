import FileSystemEventsCore

extension ConformanceSuite {
    static let burstScenarios: [ConformanceScenario] = [
        ConformanceScenario(27, "10,000 files created across 10 directories in a burst") { context in
            let watch = try await context.watch()
            for directory in 0..<10 {
                try context.tree.makeDirectory(RelativePath("burst\(directory)"))
            }
            for file in 0..<10_000 {
                try context.tree.write(RelativePath("burst\(file % 10)/file\(file).dat"), "\(file)")
            }
            try await watch.sync()
            let created = watch.scenarioEvents().filter { $0.kind == .created && $0.itemType == .file }.count
            try check(created == 10_000, "expected 10000 created files, got \(created)")
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(28, "a seeded random mix of every operation, paced by the watcher, 20 seeds", runsUnprivileged: true) { context in
            for seed in StressSettings.mixSeeds(1...20) {
                let watch = try await context.watch()
                var mix = RandomOperations(seed: seed, tree: context.tree)
                // Paced: every few operations, wait until the watcher has caught up (scenario 36
                // runs the same mix without a pause).
                for step in 1...60 {
                    try mix.step()
                    if step % 6 == 0 { try await watch.sync() }
                }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("seed \(seed), operations: \(mix.log.suffix(60).joined(separator: "; "))")
                await watch.stop()
            }
        },
        ConformanceScenario(32, "a stalled consumer and a burst beyond the kernel queue: nothing lost", runsUnprivileged: true) { context in
            let watch = try await context.watch { $0.bufferLimit = 64 }
            watch.pause()
            let count = Self.kernelQueueLimit() + 4_000
            for directory in 0..<4 { try context.tree.makeDirectory(RelativePath("flood\(directory)")) }
            for file in 0..<count {
                try context.tree.write(RelativePath("flood\(file % 4)/f\(file)"), "")
            }
            try context.tree.removeTree("flood3")
            try context.tree.rename("flood2", to: "flood2-renamed")
            watch.resume()
            try await watch.sync()
            // Where batches are kernel reads (event-driven), the burst must have overflowed a
            // queue and been reported. A source that batches by scanning hands a stalled
            // subscriber whole scans, never cut (a shared watch's rule): whether it is held back
            // with an overflow depends on how many scans the pause spans, so there only the
            // replay below says whether anything was lost.
            let capabilities = watch.source.capabilities
            if capabilities.canOverflow && capabilities.isEventDriven {
                try check(watch.events.contains { $0.kind == .overflow },
                          "\(count) events with a stalled consumer should overflow the kernel queue; no overflow was reported")
            }
            try watch.assertReplayMatchesDisk()
            // And the watch keeps working afterwards.
            try context.tree.write("flood2-renamed/after.txt", "a")
            try await watch.sync()
            try watch.expect(.created, "flood2-renamed/after.txt")
            try watch.assertReplayMatchesDisk("after recovery")
        },
        ConformanceScenario(126, "a subtree of more directories than the kernel queue holds, moved out of the tree and back: no overflow, nothing lost") { context in
            // Unwatching the subtree removes a watch per directory, and the kernel queues an
            // `IN_IGNORED` for each: all at once, they overflowed the queue, and a plain `mv`
            // cost a rescan of the whole tree (and an overflow told to the consumer).
            let count = Self.kernelQueueLimit() + 2_000
            guard count <= 70_000 else {
                throw ConformanceSkip("fs.inotify.max_queued_events is \(Self.kernelQueueLimit()): a subtree beyond it takes too long to make here")
            }
            try context.tree.makeDirectory("big")
            for index in 0..<count { try context.tree.makeDirectory(RelativePath("big/d\(index)")) }
            try context.tree.write("big/d0/file.txt", "f")
            try context.tree.makeDirectory("away", in: .outside)
            let watch = try await context.watch()
            try context.tree.rename("big", to: "away/big", to: .outside)
            try await watch.sync()
            try watch.expect(.removed, "big")
            // Moved back in: watched again, the watches just released taken back or added anew.
            try context.tree.rename("away/big", to: "back", from: .outside)
            try context.tree.write("back/d1/inside.txt", "i")
            try await watch.sync()
            try watch.expectCreated(endingAt: "back/d1/inside.txt")
            let capabilities = watch.source.capabilities
            if capabilities.canOverflow && capabilities.isEventDriven {
                try check(!watch.events.contains { $0.kind == .overflow },
                          "moving \(count) watched directories out of the tree overflowed the kernel queue: the watches' own removal queued an event each")
            }
            try watch.assertReplayMatchesDisk()
        },
    ]

    /// `fs.inotify.max_queued_events`, or its default where there is no such file.
    static func kernelQueueLimit() -> Int {
        InotifyLimits.current("max_queued_events") ?? 16_384
    }
}
