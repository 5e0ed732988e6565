#if os(Linux)
import FileSystemEventsConformance
import Testing

/// Runs a conformance scenario against a backend made for one of this target's race tests: a
/// skip cancels the test case, a failure is recorded as an issue naming the backend.
func run(_ scenario: ConformanceScenario, against backend: ConformanceBackend) async throws {
    do {
        try await scenario.run(against: backend)
    } catch let skip as ConformanceSkip {
        try Test.cancel("\(backend.name), scenario \(scenario): \(skip.reason)")
    } catch let failure as ConformanceFailure {
        Issue.record("\(backend.name), scenario \(scenario): \(failure.message)")
    }
}
#endif
