import FileSystemEvents
import FileSystemEventsConformance
import Testing

/// Every scenario against every backend. Serialized: scenario 29 counts the process's open
/// descriptors, and bursts of tens of thousands of files are best not run side by side on
/// two cores.
@Suite(.serialized)
struct ConformanceTests {
    @Test("polling backend", arguments: ConformanceSuite.scenarios)
    func polling(_ scenario: ConformanceScenario) async throws {
        try await run(scenario, against: ConformanceBackends.polling)
    }
}

func run(_ scenario: ConformanceScenario, against backend: ConformanceBackend) async throws {
    do {
        try await scenario.run(against: backend)
    } catch let skip as ConformanceSkip {
        try Test.cancel("\(backend.name), scenario \(scenario): \(skip.reason)")
    } catch let failure as ConformanceFailure {
        Issue.record("\(backend.name), scenario \(scenario): \(failure.message)")
    }
}
