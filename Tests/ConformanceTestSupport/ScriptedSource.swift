import Dispatch
public import FileSystemEventsCore
import Synchronization

/// A source that reports what a test hands it, batch by batch, after a `ready` at once: for the
/// consumers of sources (the shared watcher, the listing) where a real backend produces the
/// batch in question only under races (a rescan's corrections read together with later
/// events; a polling scan that missed a state that came and went).
///
/// Event-driven by default, as a kernel backend; with `isEventDriven: false` it stands for a
/// source that compares scans, and hands over `firstScan` at `ready` when the options ask for
/// the initial state, as polling does.
public struct ScriptedSource: FileSystemEventSource {
    public final class Script: Sendable {
        private let batches = Mutex<[[FileSystemEvent]]>([])
        private let added = DispatchSemaphore(value: 0)

        public init() {}

        public func send(_ batch: [FileSystemEvent]) {
            batches.withLock { $0.append(batch) }
            added.signal()
        }

        /// The next batch, or `nil` once `timeout` has passed without one.
        func next(waiting timeout: DispatchTimeInterval) -> [FileSystemEvent]? {
            guard added.wait(timeout: .now() + timeout) == .success else { return nil }
            return batches.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }

    public let options: WatchOptions
    let script: Script
    let isEventDriven: Bool
    let firstScan: FileTreeSnapshot?

    public init(options: WatchOptions, script: Script, isEventDriven: Bool = true, firstScan: FileTreeSnapshot? = nil) {
        self.options = options
        self.script = script
        self.isEventDriven = isEventDriven
        self.firstScan = firstScan
    }

    public var backendName: String { "scripted" }
    public var capabilities: FileSystemEventSourceCapabilities {
        FileSystemEventSourceCapabilities(isEventDriven: isEventDriven, pairsRenames: true, needsPollInterval: !isEventDriven,
                                          canOverflow: isEventDriven, usesPerDirectoryWatches: isEventDriven,
                                          seesRemoteChanges: !isEventDriven)
    }

    public func updates() -> FileSystemEventStream {
        FileSystemEventStream(options: options) { [options, script, firstScan] channel in
            _ = channel.send(.scanStarted(roots: options.roots))
            if options.capturesInitialState, let firstScan { channel.setInitialState([firstScan]) }
            _ = channel.send(.ready(roots: options.roots))
            // Woken every 20 ms to notice a stop: a producer must end when its stream does.
            while !channel.isTerminated {
                if let batch = script.next(waiting: .milliseconds(20)) { _ = channel.send(.events(batch)) }
            }
            channel.finish()
        }
    }
}
