import PlatformLibc

/// The environment variables that turn a scenario into a stress run (more seeds, one seed, a
/// larger copy), read in one way: a positive integer, or nothing.
enum StressSettings {
    /// `name`'s value as a positive integer; `nil` when unset, not a number, or not above 0,
    /// so the scenario keeps its default.
    static func positiveInteger(_ name: String) -> Int? {
        guard let value = getenv(name), let parsed = Int(String(cString: value)), parsed > 0 else { return nil }
        return parsed
    }

    /// Added to every seed of the random mixes (28, 36, 37, 113; `FILEWATCH_CONFORMANCE_MIX_SEED_OFFSET`),
    /// so a stress run explores seeds the default run never tried, and a failure found that way
    /// is replayed by giving the same offset again. 0 (the default run's seeds) when unset.
    static var mixSeedOffset: UInt64 { UInt64(positiveInteger("FILEWATCH_CONFORMANCE_MIX_SEED_OFFSET") ?? 0) }

    /// A random mix's default seeds, moved by ``mixSeedOffset``.
    static func mixSeeds(_ seeds: ClosedRange<Int>) -> [UInt64] {
        seeds.map { UInt64($0) + mixSeedOffset }
    }

    /// Whether a broken replay is written to a directory (`FILEWATCH_CONFORMANCE_TRACE`,
    /// ``WatchSession/traceFailure(label:problems:)``).
    static var tracesFailures: Bool { getenv("FILEWATCH_CONFORMANCE_TRACE") != nil }
}
