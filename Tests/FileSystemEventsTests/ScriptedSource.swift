import Dispatch
import FileSystemEvents
import Synchronization

/// A source that reports what a test hands it, batch by batch, as an event-driven backend
/// reports its kernel reads: for the shared watcher's handling of batches whose shape a real
/// backend produces only under races (a rescan's corrections read together with later events).
/// It hands over no initial state, so the shared watcher scans the tree at `ready`.
struct ScriptedSource: FileSystemEventSource {
    final class Script: Sendable {
        private let batches = Mutex<[[FileSystemEvent]]>([])
        private let added = DispatchSemaphore(value: 0)

        func send(_ batch: [FileSystemEvent]) {
            batches.withLock { $0.append(batch) }
            added.signal()
        }

        /// The next batch, or `nil` once `timeout` has passed without one.
        func next(waiting timeout: DispatchTimeInterval) -> [FileSystemEvent]? {
            guard added.wait(timeout: .now() + timeout) == .success else { return nil }
            return batches.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }

    let options: WatchOptions
    let script: Script
    var backendName: String { "scripted" }
    var capabilities: FileSystemEventSourceCapabilities {
        FileSystemEventSourceCapabilities(isEventDriven: true, pairsRenames: true, needsPollInterval: false,
                                          canOverflow: true, usesPerDirectoryWatches: true, seesRemoteChanges: false)
    }

    func updates() -> FileSystemEventStream {
        FileSystemEventStream(options: options) { [options, script] channel in
            _ = channel.send(.scanStarted(roots: options.roots))
            _ = channel.send(.ready(roots: options.roots))
            // Woken every 20 ms to notice a stop: a producer must end when its stream does.
            while !channel.isTerminated {
                if let batch = script.next(waiting: .milliseconds(20)) { _ = channel.send(.events(batch)) }
            }
            channel.finish()
        }
    }
}
