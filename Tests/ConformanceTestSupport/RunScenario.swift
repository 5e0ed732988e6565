public import FileSystemEventsConformance
import Testing

/// Runs a conformance scenario inside a Swift Testing test: a skip cancels the test case, a
/// failure is recorded as an issue naming the backend and the scenario. Shared by the
/// conformance suite's own test target and the inotify race tests.
public func run(_ scenario: ConformanceScenario, against backend: ConformanceBackend) async throws {
    do {
        try await scenario.run(against: backend)
    } catch let skip as ConformanceSkip {
        try Test.cancel("\(backend.name), scenario \(scenario): \(skip.reason)")
    } catch let failure as ConformanceFailure {
        Issue.record("\(backend.name), scenario \(scenario): \(failure.message)")
    }
}
