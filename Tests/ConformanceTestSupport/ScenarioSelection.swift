import Foundation
public import FileSystemEventsConformance

/// The scenarios whose numbers the environment variable `variable` lists (comma-separated),
/// or those numbered `defaults` when it is not set: how a test target lets one run name the
/// scenarios it wants (FILEWATCH_CONFORMANCE_ONLY=98, FILEWATCH_CREATION_RACE_ONLY=37).
public func scenarios(numberedIn variable: String, default defaults: [Int]) -> [ConformanceScenario] {
    let numbers = ProcessInfo.processInfo.environment[variable].map(scenarioNumbers(in:)) ?? Set(defaults)
    return ConformanceSuite.scenarios.filter { numbers.contains($0.number) }
}

/// The scenario numbers in a comma-separated list (`"38,39"`); anything else in it is ignored.
public func scenarioNumbers(in list: String) -> Set<Int> {
    Set(list.split(separator: ",").compactMap { Int($0) })
}
