public import FileSystemEventsCore

/// A backend under test: a name for reports and a way to make a source from options.
///
/// A third-party backend runs the suite by passing its own factory:
///
/// ```swift
/// @Test(arguments: ConformanceSuite.scenarios)
/// func conformance(_ scenario: ConformanceScenario) async throws {
///     try await scenario.run(against: ConformanceBackend(name: "mine") { MySource(options: $0) })
/// }
/// ```
public struct ConformanceBackend: Sendable, CustomStringConvertible {
    public var name: String
    public var makeSource: @Sendable (WatchOptions) throws -> any FileSystemEventSource

    public init(name: String, makeSource: @escaping @Sendable (WatchOptions) throws -> any FileSystemEventSource) {
        self.name = name
        self.makeSource = makeSource
    }

    public var description: String { name }
}
