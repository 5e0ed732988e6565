import FileSystemEvents
import FileSystemEventsConformance
import ConformanceTestSupport
import Foundation
import Testing

/// Every scenario against every backend. Serialized: scenario 29 counts the process's open
/// descriptors, and bursts of tens of thousands of files are best not run side by side on
/// two cores.
@Suite(.serialized)
struct ConformanceTests {
    /// All scenarios, or those listed in FILEWATCH_CONFORMANCE_ONLY: comma-separated numbers,
    /// or `unprivileged` for those worth a second run as an unprivileged user, which is how
    /// scripts/test.sh reruns them as `nobody`.
    static let scenarios: [ConformanceScenario] = {
        guard let only = ProcessInfo.processInfo.environment["FILEWATCH_CONFORMANCE_ONLY"] else {
            return ConformanceSuite.scenarios.filter { !openDefects.contains($0.number) || includesOpenDefects }
        }
        if only == "unprivileged" {
            return ConformanceSuite.unprivilegedScenarios.filter { !openDefects.contains($0.number) || includesOpenDefects }
        }
        let numbers = scenarioNumbers(in: only)
        return ConformanceSuite.scenarios.filter { numbers.contains($0.number) }
    }()

    /// Scenarios that still find a defect on a backend, out of the default run so that the
    /// rest guards against regressions; FILEWATCH_CONFORMANCE_OPEN=1 (or naming them in
    /// FILEWATCH_CONFORMANCE_ONLY) runs them. README lists them. None now; the last ones:
    /// - 98 (two writers) and 99 (three writers, the consumer held in every other round) failed
    ///   in about one run in ten on the inotify backends until the fixes of 2026-11-26 that
    ///   their traces led to (README, "Two and three writers"). Through a subscription, see
    ///   ``openDefectsInSubscriptions``.
    /// - 110 and 111 (bursts of random exchanges) broke about one burst in 300 to 900 on
    ///   2026-11-27, until the fixes of that day (README). They came back into the default run
    ///   on 2026-11-28, after 15,450 more bursts without a break that day: 150 seeds per filter
    ///   on all eight conformance runs in two processes side by side (7,200 bursts), and 111
    ///   alone in loops on polling (6,000) and on inotify (2,250). Stress them with
    ///   FILEWATCH_CONFORMANCE_ONLY=110,111 and FILEWATCH_CONFORMANCE_EXCHANGE_SEEDS=N.
    /// - 114, a hard link in view written through a name out of view (outside the tree, or in
    ///   an excluded directory), failed on the inotify backends: no watch heard the write.
    ///   Found by 113's stress run on 2026-11-28; back in the default run the same day with
    ///   the inode watch for each file whose link count exceeds its names in view (README,
    ///   "Hard links out of view").
    static let openDefects: Set<Int> = []

    /// What the layers above a backend (handler delivery, a shared watcher's subscription) run
    /// by default. Every backend runs the whole suite; a layer runs it too, less what only
    /// times the source's own work and reaches the layer as events like any other: for
    /// handler delivery the `settled` scenarios (72–83) and the waited-for roots (86–89); for
    /// subscriptions the two five-second writers (77, 78), whose `settled` the other settle
    /// scenarios carry through the subscription too. Scenario 99 (three writer threads, ten
    /// seconds or more a run) is not run through handler delivery, and through a subscription
    /// only over one backend, inotify: what it finds in a subscription is the shared watch's,
    /// the same over every source. FILEWATCH_CONFORMANCE_FULL=1 runs the
    /// whole suite on every layer (about two and a half minutes more).
    static let deliveryScenarios = layerScenarios(excluding: Set(72...83).union(86...89).union([99]))
    /// Scenarios that still find a defect through the shared watcher's subscription. None now:
    /// 99 failed there in about one run in fifty (and once in the fresh-clone CI of
    /// 2026-11-26) until 2026-11-27, when the inotify source's batches, logged in a loop, showed
    /// the shared watch cutting a batch for the held subscriber between the harness's marker
    /// and the corrections of a rescan that followed it (`SubscriptionUnderLoadTests`,
    /// "a batch with a rescan's corrections after a marker..."). It passed 120 of 120 runs in
    /// two loops side by side after the fix.
    static let openDefectsInSubscriptions: Set<Int> = []
    static let subscriptionScenarios = layerScenarios(excluding: includesOpenDefects ? [77, 78] : Set([77, 78]).union(openDefectsInSubscriptions))
    static let subscriptionScenariosBesideInotify = layerScenarios(excluding: [77, 78, 99])
    static let runsFullSuiteOnLayers = ProcessInfo.processInfo.environment["FILEWATCH_CONFORMANCE_FULL"] == "1"

    private static func layerScenarios(excluding excluded: Set<Int>) -> [ConformanceScenario] {
        // Scenarios named in FILEWATCH_CONFORMANCE_ONLY run wherever they apply.
        guard !runsFullSuiteOnLayers, ProcessInfo.processInfo.environment["FILEWATCH_CONFORMANCE_ONLY"].map({ $0 == "unprivileged" }) ?? true else {
            return scenarios
        }
        return scenarios.filter { !excluded.contains($0.number) }
    }
    static let isUnprivilegedRerun = ProcessInfo.processInfo.environment["FILEWATCH_CONFORMANCE_ONLY"] == "unprivileged"
    static let includesOpenDefects = ProcessInfo.processInfo.environment["FILEWATCH_CONFORMANCE_OPEN"] == "1"

    @Test("polling backend", arguments: scenarios)
    func polling(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.polling)
    }

    @Test("inotify backend", .enabled(if: FileSystemEventBackend.inotify.buildAvailability.isAvailable), arguments: scenarios)
    func inotify(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.named(.inotify))
    }

    /// The same watch delivered to a handler on its own thread, as the CLI consumes it. Not in
    /// the unprivileged rerun: how updates are handed over does not depend on who reads.
    @Test("inotify backend, handler delivery", .enabled(if: FileSystemEventBackend.inotify.buildAvailability.isAvailable && !isUnprivilegedRerun),
          arguments: deliveryScenarios)
    func inotifyHandlerDelivery(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.handlerDelivered(.inotify))
    }

    /// A subscription of a shared watcher must pass exactly as a source does: the suite
    /// (``subscriptionScenarios``), through a `FileSystemWatcher` of each backend. Not in the unprivileged rerun: what the
    /// process may read is the backend's business, which that rerun checks on its own, and the
    /// three subscription runs would add four minutes to it.
    @Test("shared watcher subscription (inotify)", .enabled(if: FileSystemEventBackend.inotify.buildAvailability.isAvailable && !isUnprivilegedRerun),
          arguments: subscriptionScenarios)
    func sharedWatcher(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.shared(over: .inotify))
    }

    @Test("shared watcher subscription (polling)", .enabled(if: !isUnprivilegedRerun), arguments: subscriptionScenariosBesideInotify)
    func sharedWatcherPolling(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.shared(over: .polling))
    }

    @Test("shared watcher subscription (inotifytools)", .enabled(if: FileSystemEventBackend.inotifytools.buildAvailability.isAvailable && !isUnprivilegedRerun),
          arguments: subscriptionScenariosBesideInotify)
    func sharedWatcherInotifyTools(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.shared(over: .inotifytools))
    }

    /// The example third-party backend (Sources/Examples/DigestPollingBackend), made through
    /// its registration as configuration makes it, with the package's layers around it. It
    /// runs the whole suite, in the unprivileged rerun too, like a built-in backend.
    @Test("example third-party backend (digest-polling)", arguments: scenarios)
    func exampleThirdPartyBackend(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.digestPolling)
    }

    /// Runs when the package is built with the InotifyTools trait (scripts/test.sh does so
    /// whenever libinotifytools0-dev is installed or installable).
    @Test("inotifytools backend", .enabled(if: FileSystemEventBackend.inotifytools.buildAvailability.isAvailable), arguments: scenarios)
    func inotifytools(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.named(.inotifytools))
    }
}
