import PlatformLibc
import FileSystemEventsCore
import Synchronization
import SystemPackage

/// One subscriber of a ``SharedWatch``: the shared dispatcher fills its inbox, and a thread of
/// its own moves the inbox through its latency window into its stream, so a slow subscriber
/// holds up nobody else.
///
/// When the inbox passes the subscriber's buffer limit, the dispatcher stops filling it and
/// keeps a copy of what the subscriber had been told so far; once the subscriber has caught
/// up, it gets `overflow` and the events that turn that copy into the shared tree as it is
/// then: the same recovery a kernel backend makes after its queue overflowed.
final class WatchSubscription: Sendable {
    struct Inbox: ~Copyable {
        var scope: SubscriptionScope
        var events: [FileSystemEvent] = []
        var diagnostics: [FileSystemWatchDiagnostic] = []
        /// The subscriber's starting state, set by the dispatcher once the tree is known.
        var initialState: [FileTreeSnapshot]?
        /// What the subscriber had been told when it fell behind, per subscribed root.
        var stalledAt: StalledState?
        var failure: FileSystemEventsError?
        var isEnded = false
        /// Set once the subscriber's thread has left: nothing more is delivered.
        var isClosed = false
    }

    /// Copies of the subscribed subtrees, private to the subscription (only touched under the
    /// shared watch's lock, hence `@unchecked Sendable`), and the files still being written
    /// then: those that have settled by the reconciliation are told so after it.
    struct StalledState: @unchecked Sendable {
        var views: [RootSnapshot?]
        var unsettled: Set<FileIdentity> = []
    }

    let inbox: Mutex<Inbox>
    let bufferLimit: Int
    let latency: Duration
    let capturesInitialState: Bool
    let rootPaths: [FilePath]
    private let wakeRead: CInt
    private let wakeWrite: CInt

    init(scope: SubscriptionScope, bufferLimit: Int, latency: Duration, capturesInitialState: Bool) throws(FileSystemEventsError) {
        switch Syscalls.pipe() {
        case .success(let fds):
            wakeRead = fds.read
            wakeWrite = fds.write
        case .failure(let errno):
            throw .systemCallFailed(call: "pipe", path: nil, errno: errno)
        }
        self.inbox = Mutex(Inbox(scope: scope))
        self.bufferLimit = max(1, bufferLimit)
        self.latency = latency
        self.capturesInitialState = capturesInitialState
        self.rootPaths = scope.roots.map(\.path)
    }

    /// Wakes the subscriber's thread (never once it has closed its pipe, whose descriptor
    /// number may belong to someone else by then).
    func signal() {
        inbox.withLock { inbox in
            if !inbox.isClosed { Syscalls.signalWakeup(wakeWrite) }
        }
    }

    /// The subscriber's thread: runs until the consumer goes away or the subscription ends.
    func run(channel: FileSystemEventChannel, watch: SharedWatch) {
        defer {
            inbox.withLock { inbox in
                inbox.isClosed = true
                Syscalls.close(wakeRead)
                Syscalls.close(wakeWrite)
            }
            watch.remove(self)
        }
        channel.send(.scanStarted(roots: rootPaths))
        // Wait for the shared tree.
        while true {
            let (state, failure, ended) = inbox.withLock { ($0.initialState, $0.failure, $0.isEnded) }
            if let failure {
                channel.finish(throwing: failure)
                return
            }
            if let state {
                if capturesInitialState { channel.setInitialState(state) }
                break
            }
            if ended || channel.isTerminated {
                channel.finish()
                return
            }
            _ = Syscalls.pollReadable(wakeRead, channel.wakeupReadEnd, timeoutMilliseconds: -1)
            Syscalls.drainWakeups(wakeRead)
            channel.drainWakeups()
        }
        guard channel.send(.ready(roots: rootPaths)) != .terminated else { return }

        var batcher = EventBatcher(latency: latency)
        while true {
            let status = channel.producerStatus
            if status.isTerminated { return }
            let now = MonotonicClock.nanoseconds()
            let taken = inbox.withLock { inbox -> (events: [FileSystemEvent], diagnostics: [FileSystemWatchDiagnostic], stalled: Bool, ended: Bool, failure: FileSystemEventsError?) in
                // Only as much as the consumer has room for: the rest waits here, and past the
                // buffer limit the dispatcher stops adding (see `stalledAt`).
                var events: [FileSystemEvent] = []
                if status.hasRoom && !inbox.events.isEmpty {
                    swap(&events, &inbox.events)
                }
                let diagnostics = inbox.diagnostics
                inbox.diagnostics = []
                return (events, diagnostics, inbox.stalledAt != nil, inbox.isEnded, inbox.failure)
            }
            for diagnostic in taken.diagnostics { channel.send(.diagnostic(diagnostic)) }
            if !taken.events.isEmpty { batcher.add(taken.events, now: now) }
            if taken.stalled && status.hasRoom && batcher.isEmpty {
                let reconciled = watch.reconcile(self)
                if !reconciled.isEmpty { batcher.add(reconciled, now: now) }
            }
            let finishing = taken.ended || taken.failure != nil || status.isFinishRequested
            if finishing {
                let rest = inbox.withLock { inbox -> [FileSystemEvent] in
                    defer { inbox.events = [] }
                    return inbox.events
                }
                if !rest.isEmpty { batcher.add(rest, now: now) }
            }
            let due = finishing ? (batcher.isEmpty ? nil : batcher.takeAll()) : batcher.takeIfDue(now: MonotonicClock.nanoseconds())
            if let due, !due.isEmpty {
                if channel.send(.events(due)) == .terminated { return }
            }
            if finishing {
                channel.finish(throwing: taken.failure)
                return
            }
            var timeout = batcher.millisecondsUntilDue(now: MonotonicClock.nanoseconds())
            if !channel.hasRoom {
                if channel.requestWakeupWhenRoom() { continue }
                timeout = -1
            } else {
                // Work that no wake-up will announce: events left in the inbox because the
                // consumer made room only after this pass looked, or a stalled subscription
                // whose reconciliation waited for the batch just sent. The dispatcher signals
                // only new events (and none to a stalled subscription), so waiting here could
                // wait forever on a quiet tree.
                let isBatcherEmpty = batcher.isEmpty
                if inbox.withLock({ !$0.events.isEmpty || ($0.stalledAt != nil && isBatcherEmpty) }) { continue }
            }
            _ = Syscalls.pollReadable(wakeRead, channel.wakeupReadEnd, timeoutMilliseconds: timeout)
            Syscalls.drainWakeups(wakeRead)
            channel.drainWakeups()
        }
    }
}
