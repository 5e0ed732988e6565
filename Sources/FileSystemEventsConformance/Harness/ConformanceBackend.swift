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
    /// How reports name the backend.
    public var name: String
    /// Makes the source of each watch a scenario starts, from the options the scenario chose;
    /// what it throws fails the scenario.
    public var makeSource: @Sendable (WatchOptions) throws -> any FileSystemEventSource

    /// Takes the name and the factory as given.
    public init(name: String, makeSource: @escaping @Sendable (WatchOptions) throws -> any FileSystemEventSource) {
        self.name = name
        self.makeSource = makeSource
    }

    /// The ``name``.
    public var description: String { name }
}
