/// The scenarios that define "works" for a ``FileSystemEventSource``.
///
/// Every scenario asserts the replay invariant (start from the tree at `ready`, apply the
/// events in order, get the tree on disk) and, where the contract is specific, the exact
/// events. None of them sleeps: each waits for a marker file's event, or for a condition with
/// a deadline.
public enum ConformanceSuite {
    /// Every scenario of the suite, group by group (basic, structure, renames, links, roots and
    /// so on).
    public static let scenarios: [ConformanceScenario] =
        basicScenarios + structureScenarios + renameScenarios + linkScenarios + rootScenarios
        + nameScenarios + burstScenarios + lifecycleScenarios + contentScenarios + randomMixScenarios
        + backPressureScenarios + cornerScenarios + settleScenarios + settleWriterScenarios + awaitingRootScenarios + followedFileLinkScenarios
        + exchangeBurstScenarios

    /// The scenarios to run again as an unprivileged user (see ``ConformanceScenario/runsUnprivileged``).
    public static var unprivilegedScenarios: [ConformanceScenario] { scenarios.filter(\.runsUnprivileged) }

    /// The scenario numbered `number`, or `nil` if the suite has none.
    public static func scenario(_ number: Int) -> ConformanceScenario? {
        scenarios.first { $0.number == number }
    }
}
