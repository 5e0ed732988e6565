/// The scenarios that define "works" for a ``FileSystemEventSource``.
///
/// Every scenario asserts the replay invariant (start from the tree at `ready`, apply the
/// events in order, get the tree on disk) and, where the contract is specific, the exact
/// events. None of them sleeps: each waits for a marker file's event, or for a condition with
/// a deadline.
public enum ConformanceSuite {
    public static let scenarios: [ConformanceScenario] =
        basicScenarios + structureScenarios + renameScenarios + linkScenarios + rootScenarios
        + nameScenarios + burstScenarios + lifecycleScenarios + contentScenarios + randomMixScenarios
        + backPressureScenarios + cornerScenarios + settleScenarios + settleWriterScenarios + awaitingRootScenarios + followedFileLinkScenarios

    /// The scenarios to run again as an unprivileged user (see ``ConformanceScenario/runsUnprivileged``).
    public static var unprivilegedScenarios: [ConformanceScenario] { scenarios.filter(\.runsUnprivileged) }

    public static func scenario(_ number: Int) -> ConformanceScenario? {
        scenarios.first { $0.number == number }
    }
}
