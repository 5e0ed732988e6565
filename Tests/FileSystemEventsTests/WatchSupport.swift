import ConformanceTestSupport
import FileSystemEvents
import Foundation
import Testing

/// What a test saw of one watch.
struct Observed: Sendable {
    var batches: [[FileSystemEvent]] = []
    var diagnostics: [FileSystemWatchDiagnostic] = []
    var events: [FileSystemEvent] { batches.flatMap { $0 } }
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
            switch update {
            case .ready:
                try onReady()
            case .events(let events):
                observed.batches.append(events)
            case .diagnostic(let diagnostic):
                observed.diagnostics.append(diagnostic)
            case .scanStarted:
                break
            }
            if done(observed) { return observed }
        }
        return observed
    }
    if stopping { await stream.stop() }
    guard let outcome else { throw WatchTimeout(description: "the watch did not reach its condition within \(timeout)") }
    return outcome
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
