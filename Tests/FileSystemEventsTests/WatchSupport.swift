import ConformanceTestSupport
import FileSystemEvents
import Foundation
import Testing

/// What a test saw of one watch.
struct Observed: Sendable {
    /// Every event, in order.
    private(set) var events: [FileSystemEvent] = []
    var diagnostics: [FileSystemWatchDiagnostic] = []
    /// Where the events of the latest update start in ``events``.
    private var firstNew = 0

    /// The events the latest update brought (none for any other update): what a condition
    /// looking for one event tests, so that each event is tested once (see
    /// ``observe(_:timeout:stopping:onReady:untilEvent:)``).
    var newEvents: ArraySlice<FileSystemEvent> { events[firstNew...] }

    mutating func record(_ update: FileSystemWatchUpdate) {
        firstNew = events.count
        switch update {
        case .events(let batch): events += batch
        case .diagnostic(let diagnostic): diagnostics.append(diagnostic)
        case .ready, .scanStarted: break
        }
    }
}

struct WatchTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Runs `stream` until `done` says the observation is complete, calling `onReady` once the
/// watch is established. Fails at the deadline (never sleeps to synchronise: the deadline is
/// only the bound of a wait for a condition).
///
/// - Parameter stopping: stop the stream afterwards (otherwise it keeps running, unread).
func observe(
    _ stream: FileSystemEventStream,
    timeout: Duration = .seconds(30),
    stopping: Bool = true,
    onReady: @escaping @Sendable () throws -> Void = {},
    until done: @escaping @Sendable (Observed) -> Bool
) async throws -> Observed {
    let outcome = try await untilDeadline(timeout) {
        var observed = Observed()
        for try await update in stream {
            if case .ready = update { try onReady() }
            observed.record(update)
            if done(observed) { return observed }
        }
        return observed
    }
    if stopping { await stream.stop() }
    guard let outcome else { throw WatchTimeout(description: "the watch did not reach its condition within \(timeout)") }
    return outcome
}

/// ``observe(_:timeout:stopping:onReady:until:)`` until an event that `awaited` accepts:
/// each event is tested once, as it arrives.
///
/// Why not `until: { $0.events.contains(where: awaited) }`: that tests every event again after
/// each update, and a watch that keeps up with a loaded writer sends one update per event.
/// A thousand events, each update scanned from the start with `FilePath` accessors (slow in
/// a debug build), kept the test's own consumer busy past its 30-second deadline
/// (`StableIDTests`' burst on the inotify backend beside the conformance suite's deep-path
/// scenarios), while the watch had told everything within half a second.
func observe(
    _ stream: FileSystemEventStream,
    timeout: Duration = .seconds(30),
    stopping: Bool = true,
    onReady: @escaping @Sendable () throws -> Void = {},
    untilEvent awaited: @escaping @Sendable (FileSystemEvent) -> Bool
) async throws -> Observed {
    try await observe(stream, timeout: timeout, stopping: stopping, onReady: onReady) { observed in
        observed.newEvents.contains(where: awaited)
    }
}

/// The backends that run here, `auto` aside.
let availableBackends: [FileSystemEventBackend] = FileSystemEventBackend.allCases.filter {
    $0 != .auto && $0.buildAvailability.isAvailable
}

/// What `body` returns, or `nil` once `timeout` has passed (the bound of a wait for a
/// condition, never a sleep to synchronise); `body` is cancelled then.
func untilDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Descriptors of the kinds a watch opens (its wakeup pipe, an inotify instance,
/// directories): the runtime's own timers and event loops come and go on their own, so a
/// count of every descriptor would flag them.
func watchDescriptorCount() -> Int {
    openDescriptors().filter { $0.target.hasPrefix("pipe:") || $0.target.contains("inotify") || ($0.target.hasPrefix("/") && $0.target != "/dev/null") }.count
}

/// The descriptors of the kinds `watchDescriptorCount()` counts, as "number→target": compare
/// two of these sets to find exactly what one watch opened.
func watchDescriptors() -> Set<String> {
    Set(openDescriptors().filter { $0.target.hasPrefix("pipe:") || $0.target.contains("inotify") }.map { "\($0.number)→\($0.target)" })
}

/// Every open descriptor and what it refers to, for a failure message.
func describeDescriptors() -> String {
    openDescriptors().map { "\($0.number)→\($0.target)" }.joined(separator: " ")
}

private func openDescriptors() -> [(number: String, target: String)] {
    #if os(Linux)
    openDescriptorLinks()
    #else
    []
    #endif
}
