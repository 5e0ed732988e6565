import FileSystemEventsCore
#if canImport(Glibc)
import Glibc
#endif

extension ConformanceSuite {
    static let exchangeBurstScenarios: [ConformanceScenario] = [
        ConformanceScenario(110, "bursts of renameat2 exchanges between random files and directories at several depths, with appends, mkdir -p and renames onto a few names: no filter, and a depth limit of 1",
                            runsUnprivileged: true) { context in
            // A race hunt's workload (2026-11-27): a crawl of a directory made a moment ago
            // could list the result of an exchange still queued, and the exchange then swapped
            // the model's items wrongly (about one run in 25 of 60 operations, before). The
            // window is a few microseconds, so no seed fails every time: this is the invariant
            // checked over many random bursts. `FILEWATCH_CONFORMANCE_EXCHANGE_SEEDS=N` runs
            // N seeds per filter (3 by default) as a stress run.
            try await ExchangeBurst.run(context, filters: [
                ("no filter", nil),
                ("a depth limit of 1", PathFilter(maximumDepth: 1)),
            ])
        },
        ConformanceScenario(111, "110's bursts of exchanges under a glob over whole paths (build/**): items move into and out of what the glob leaves out",
                            runsUnprivileged: true) { context in
            // Polling's diff once told, about one burst in 300, an item moved from a path cut
            // short: a torn scan dropped with its subtrees still shared (README, "Polling's
            // scans race the writer").
            try await ExchangeBurst.run(context, filters: [("excluding build/**", PathFilter(exclude: [PathGlob("build/**")]))])
        },
    ]
}

/// The operations of scenario 110, on paths picked at random from the tree as it is: most
/// are exchanges, which fail harmlessly where one side is inside the other.
package struct ExchangeBurst {
    let tree: ScratchTree
    var generator: SplitMix64
    package private(set) var log: [String] = []

    package init(tree: ScratchTree, seed: UInt64) {
        self.tree = tree
        generator = SplitMix64(seed: seed)
    }

    static var seedsPerFilter: Int { StressSettings.positiveInteger("FILEWATCH_CONFORMANCE_EXCHANGE_SEEDS") ?? 3 }

    /// `FILEWATCH_CONFORMANCE_EXCHANGE_SEED`: one seed, run ``seedsPerFilter`` times, to
    /// reproduce a stress run's failure (its message names the seed; the timing still varies).
    static var onlySeed: Int? { StressSettings.positiveInteger("FILEWATCH_CONFORMANCE_EXCHANGE_SEED") }

    /// The same small tree for every seed (a tree left to grow makes each step's look at it
    /// slower, and a stress run of many seeds crawls).
    /// Scenarios 110 and 111: for each filter, a watch per seed over the same small tree.
    static func run(_ context: ConformanceContext, filters: [(String, PathFilter?)]) async throws {
        let tree = context.tree
        for (label, filter) in filters where runsFilter(label) {
            for run in 1...seedsPerFilter {
                let seed = onlySeed ?? run
                try resetTree(tree)
                let watch = try await context.watch { if let filter { $0.filter = filter } }
                var burst = ExchangeBurst(tree: tree, seed: UInt64(seed * 7_919))
                for step in 0..<60 { burst.step(step) }
                try await watch.sync()
                try watch.assertReplayMatchesDisk("\(label), seed \(seed): \(burst.log.joined(separator: "; "))")
                await watch.stop()
            }
        }
    }

    /// `FILEWATCH_CONFORMANCE_EXCHANGE_FILTERS`: a comma-separated choice of `none`, `depth`
    /// and `exclude` (all three by default), for a stress run of one of them.
    static func runsFilter(_ label: String) -> Bool {
        guard let value = getenv("FILEWATCH_CONFORMANCE_EXCHANGE_FILTERS") else { return true }
        let chosen = String(cString: value).split(separator: ",")
        let key = label.hasPrefix("no filter") ? "none" : label.hasPrefix("a depth") ? "depth" : "exclude"
        return chosen.contains { $0 == key }
    }

    package static func resetTree(_ tree: ScratchTree) throws {
        let disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: false) { _, _ in true }
        // The harness's markers go too: no watch runs between seeds, and a tree that kept them
        // would grow with every seed (each step reads the whole tree).
        for path in disk.items.keys where path != .root {
            try tree.removeTree(path)
        }
        for directory in ["top/t1", "a/lim/deep", "a/b", "build/out/o", "c/build/x"] {
            try tree.makeDirectories(RelativePath(directory))
        }
        for file in ["top/t1/f", "top/g", "a/lim/h", "a/lim/deep/i", "build/j", "build/out/k", "c/l", "file1", "a/file2"] {
            try tree.write(RelativePath(file), "x")
        }
    }

    package mutating func step(_ step: Int) {
        let disk = DiskTree.read(root: tree.absolute(.root, in: .root), recursive: true) { _, _ in true }
        let paths = disk.items.keys.filter { $0 != .root && !WatchSession.isMarkerName($0.bytes) }.sorted()
        guard !paths.isEmpty else { return }
        let a = paths[Int(generator.next() % UInt64(paths.count))]
        let b = paths[Int(generator.next() % UInt64(paths.count))]
        let isDirectory = disk.items[a]?.type == .directory
        switch generator.next() % 10 {
        case 0..<7:
            log.append("exchange \(a) \(b)")
            try? tree.exchange(a, b)
        case 7:
            let file = isDirectory ? a / RelativePath("n\(step)") : a
            log.append("append \(file)")
            try? tree.append(file, "y")
        case 8:
            guard isDirectory else { return }
            log.append("mkdir -p \(a)/m\(step)/q")
            try? tree.makeDirectories(a / RelativePath("m\(step)/q"))
        default:
            let target: RelativePath = ["build", "top", "a/lim", "zz"][Int(generator.next() % 4)]
            log.append("mv \(a) \(target)")
            try? tree.rename(a, to: target)
        }
    }
}
