import FileSystemEventsCore

extension ConformanceSuite {
    static let randomMixScenarios: [ConformanceScenario] = [
        ConformanceScenario(36, "a seeded random mix at full speed: 400 operations without a pause, 5 seeds", runsUnprivileged: true) { context in
            for seed in 101...105 {
                let watch = try await context.watch()
                var mix = RandomOperations(seed: UInt64(seed), tree: context.tree)
                for _ in 0..<400 { try mix.step() }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("seed \(seed), last operations: \(mix.log.suffix(80).joined(separator: "; "))")
                await watch.stop()
            }
        },
        ConformanceScenario(37, "a seeded random mix while the consumer is held: 300 operations beneath queued events, 4 seeds",
                            runsUnprivileged: true) { context in
            for seed in 201...204 {
                let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
                try await watch.hold(queuing: 1_000)
                var mix = RandomOperations(seed: UInt64(seed), tree: context.tree)
                for _ in 0..<300 { try mix.step() }
                watch.resume()
                try await watch.sync()
                try watch.assertReplayMatchesDisk("seed \(seed), last operations: \(mix.log.suffix(80).joined(separator: "; "))")
                await watch.stop()
            }
        },
    ]
}
