import FileSystemEventsCore

extension ConformanceSuite {
    static let randomMixScenarios: [ConformanceScenario] = [
        ConformanceScenario(36, "a seeded random mix at full speed: 400 operations without a pause, 5 seeds", runsUnprivileged: true) { context in
            for seed in StressSettings.mixSeeds(101...105) {
                let watch = try await context.watch()
                var mix = RandomOperations(seed: seed, tree: context.tree)
                for _ in 0..<400 { try mix.step() }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("seed \(seed), last operations: \(mix.logForFailure)")
                await watch.stop()
            }
        },
        ConformanceScenario(37, "a seeded random mix while the consumer is held: 300 operations beneath queued events, 4 seeds",
                            runsUnprivileged: true) { context in
            for seed in StressSettings.mixSeeds(201...204) {
                let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
                try await watch.hold(queuing: 1_000)
                var mix = RandomOperations(seed: seed, tree: context.tree)
                for _ in 0..<300 { try mix.step() }
                watch.resume()
                try await watch.sync()
                try watch.assertReplayMatchesDisk("seed \(seed), last operations: \(mix.logForFailure)")
                await watch.stop()
            }
        },
        ConformanceScenario(113, "36's and 37's random mix under filters: directories named d1 excluded, only *.txt files included, a depth limit of 2; 250 operations at full speed and beneath a held consumer",
                            runsUnprivileged: true) { context in
            // The mix renames directories into and out of excluded ones (a `d1` renamed to a
            // fresh name brings its contents into view; a tree moved into a `d1` leaves it),
            // across the depth limit, and files and links past an include glob, beneath queued
            // events too: every filter's rescans and refilters against the same invariant.
            // `FILEWATCH_CONFORMANCE_FILTERED_MIX_SEEDS=N` runs N seeds per filter and pace
            // (1 by default) as a stress run.
            let filters: [(String, PathFilter)] = [
                ("excluding d1", PathFilter(exclude: [PathGlob("d1")])),
                // The harness's markers must get through to be waited for.
                ("including *.txt", PathFilter(include: [PathGlob("*.txt"), PathGlob(WatchSession.markerPrefix + "*")])),
                ("a depth limit of 2", PathFilter(maximumDepth: 2)),
            ]
            let seeds = StressSettings.positiveInteger("FILEWATCH_CONFORMANCE_FILTERED_MIX_SEEDS") ?? 1
            for (index, (label, filter)) in filters.enumerated() {
                for run in 0..<seeds {
                    for held in [false, true] {
                        let seed = UInt64(1_300 + 100 * index + 2 * run + (held ? 1 : 0)) + StressSettings.mixSeedOffset
                        let watch = try await context.watch {
                            $0.filter = filter
                            if held { $0.bufferLimit = backPressureBufferLimit }
                        }
                        if held { try await watch.hold(queuing: 1_000) }
                        var mix = RandomOperations(seed: seed, tree: context.tree)
                        for _ in 0..<250 { try mix.step() }
                        if held { watch.resume() }
                        try await watch.sync()
                        try watch.assertReplayMatchesDisk("\(label), \(held ? "held" : "full speed"), seed \(seed), last operations: \(mix.logForFailure)")
                        await watch.stop()
                    }
                }
            }
        },
        ConformanceScenario(98, "two writers at once: one fills directories while the other renames, exchanges and moves them out and back, 4 rounds",
                            runsUnprivileged: true) { context in
            // The builder's paths are aimed at directories the mover is moving at that very
            // moment, so creations land in a directory between its rename's two events, files
            // appear in trees on their way out of the root and back, and `mkdir -p` races an
            // exchange of its parent. Most operations of either writer fail some of the time
            // (the other moved their directory away): that is the point, and only what did
            // happen must be replayed. Rounds 3 and 4 hold the consumer, so it all happens
            // beneath queued events and a small buffer. It found defects on the kernel
            // backends, like 99 (README, "Two and three writers").
            let tree = context.tree
            for top in ["a/x", "b/y", "c/z"] { try tree.makeDirectories(RelativePath(top)) }
            for round in 1...4 {
                let held = round > 2
                let watch = try await context.watch { if held { $0.bufferLimit = backPressureBufferLimit } }
                if held { try await watch.hold(queuing: 1_000) }
                let seed = UInt64(300 + round)
                try await ConcurrentWriters.run([
                    { ConcurrentMix.build(tree, seed: seed, round: round) },
                    { ConcurrentMix.move(tree, seed: seed, round: round) },
                ])
                if held { watch.resume() }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("round \(round) (two writers; their interleaving is not reproducible by seed)")
                await watch.stop()
            }
        },
        ConformanceScenario(99, "three writers at once: 98's two and one that remakes trees, swaps symlinks, adds hard links and saves atomically, 6 rounds, every other one beneath a held consumer") { context in
            // It found defects on the kernel backends until 2026-11-26 (README, "Two and
            // three writers"): in some runs a directory renamed away and back while names
            // were reused went missing from the replay, or a file rewritten through a hard
            // link or an atomic save kept the content the consumer read before.
            let tree = context.tree
            for top in ["a/x", "b/y", "c/z"] { try tree.makeDirectories(RelativePath(top)) }
            for round in 1...6 {
                let held = round % 2 == 0
                let watch = try await context.watch { if held { $0.bufferLimit = backPressureBufferLimit } }
                if held { try await watch.hold(queuing: 1_000) }
                let seed = UInt64(900 + round)
                try await ConcurrentWriters.run([
                    { ConcurrentMix.build(tree, seed: seed, round: round) },
                    { ConcurrentMix.move(tree, seed: seed, round: round) },
                    { ConcurrentMix.wreck(tree, seed: seed, round: round) },
                ])
                if held { watch.resume() }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("round \(round) (three writers; their interleaving is not reproducible by seed)")
                await watch.stop()
            }
        },
    ]
}

extension ConcurrentMix {
    /// The third writer of scenario 99, aimed at the same places as the other two.
    static func wreck(_ tree: ScratchTree, seed: UInt64, round: Int) {
        var generator = SplitMix64(seed: seed &* 77)
        for step in 0..<300 {
            let place = places[Int(generator.next() % UInt64(places.count))]
            let tag = "w\(round)-\(step)"
            switch generator.next() % 5 {
            case 0:
                try? tree.removeTree(place / "a")
                try? tree.makeDirectories(place / "a/b/c")
                try? tree.write(place / "a/b/c/f", tag)
            case 1:
                try? tree.symlink(place / RelativePath("l\(tag)"), pointingTo: "x")
                try? tree.rename(place / RelativePath("l\(tag)"), to: place / "link")
            case 2:
                try? tree.write(place / "hard", tag)
                try? tree.hardLink(place / RelativePath("h\(tag)"), to: place / "hard")
            case 3:
                try? tree.rename(place, to: RelativePath("top\(tag)"))
                try? tree.rename(RelativePath("top\(tag)"), to: place)
            default:
                try? tree.write(place / "save.tmp", tag)
                try? tree.rename(place / "save.tmp", to: place / "save")
            }
        }
    }
}

/// The writers of scenarios 98 and 99. Every operation may fail because the other writer moved
/// its directory; failures are ignored.
private enum ConcurrentMix {
    static let places: [RelativePath] = ["a", "b", "c", "a/x", "b/y", "c/z"]

    static func build(_ tree: ScratchTree, seed: UInt64, round: Int) {
        var generator = SplitMix64(seed: seed)
        for step in 0..<300 {
            let place = places[Int(generator.next() % UInt64(places.count))]
            let tag = "r\(round)-\(step)"
            switch generator.next() % 4 {
            case 0:
                let deep = place / RelativePath("n\(tag)/p/q")
                if (try? tree.makeDirectories(deep)) != nil { try? tree.write(deep / "f", tag) }
            case 1:
                try? tree.write(place / RelativePath("g\(tag)"), tag)
            case 2:
                let directory = place / RelativePath("m\(tag)")
                if (try? tree.makeDirectory(directory)) != nil { try? tree.write(directory / "h", tag) }
            default:
                let earlier = Int(generator.next() % UInt64(step + 1))
                try? tree.remove(place / RelativePath("gr\(round)-\(earlier)"))
            }
        }
    }

    static func move(_ tree: ScratchTree, seed: UInt64, round: Int) {
        var generator = SplitMix64(seed: seed &* 31)
        for step in 0..<300 {
            let tag = "r\(round)-\(step)"
            switch generator.next() % 6 {
            case 0:
                let temporary = RelativePath("t\(tag)")
                if (try? tree.rename("a", to: temporary)) != nil { try? tree.rename(temporary, to: "a") }
            case 1:
                try? tree.exchange("a", "b")
            case 2:
                let away = RelativePath("c\(tag)")
                if (try? tree.rename("c", to: away, to: .outside)) != nil { try? tree.rename(away, to: "c", from: .outside) }
            case 3:
                if (try? tree.rename("a/x", to: "b/x")) != nil { try? tree.rename("b/x", to: "a/x") }
            case 4:
                try? tree.exchange("b/y", "c/z")
            default:
                let inside = RelativePath("c/z/b\(tag)")
                if (try? tree.rename("b", to: inside)) != nil { try? tree.rename(inside, to: "b") }
            }
        }
    }
}
