import Dispatch
public import FileSystemEventsCore
import Synchronization

/// A watch for code that is not built around `for try await`: `start()` returns once the
/// source is watching (or throws why it cannot), ``stop()`` is synchronous, and the updates go
/// to a handler on the thread or queue you chose.
///
/// The `AsyncSequence` of ``FileSystemEventSource/updates()`` stays the primary API. This is
/// what an app's view controller, a daemon's run loop or a C host wants instead: an object
/// that starts and stops like a timer and calls back. The guarantees it adds are the ones such
/// code otherwise gets wrong by hand:
///
/// - **Nothing after stop.** Once ``stop()`` returns, the handlers are not called again, not
///   even with an update that was already queued. If a handler is running on another thread
///   when ``stop()`` is called, ``stop()`` waits for it to return; called from inside a
///   handler, it returns at once and that handler is the last.
/// - **Descriptors closed.** Unless called from the thread that delivers the source's updates
///   (a ``Delivery/watchThread`` handler), ``stop()`` returns after the watch has closed every
///   descriptor it opened.
/// - **Why it ended.** When the watch ends by itself, `ended` is called once with the reason
///   (every root removed, a failure) and ``endReason`` keeps it; after ``stop()`` it is
///   ``EndReason/stopped`` and `ended` is not called.
/// - **Restartable.** `start()` after ``stop()`` (or after the watch ended) starts a new
///   watch from the same source, with a new `ready`.
///
/// The handler sees every update of the stream in order: `scanStarted`, `ready`, batches of
/// events, diagnostics. To start from the tree at `ready` without listing it yourself, make
/// the source with ``WatchOptions/capturesInitialState`` and read ``initialState`` once
/// `start()` has returned. A ``FileSystemWatcher``'s ``FileSystemWatcher/source(for:)``
/// makes the observer one more subscriber of a shared watch.
///
/// ```swift
/// let observer = FileSystemObserver(source: source, delivery: .queue(.main)) { update in
///     if case .events(let events) = update { model.apply(events) }
/// } ended: { reason in
///     showBanner("Stopped watching: \(reason)")
/// }
/// try observer.start()          // returns once watching; the tree is `observer.initialState`
/// ...
/// observer.stop()               // no callback after this line
/// ```
public final class FileSystemObserver: Sendable {
    /// Receives every update of the watch, in order, where ``delivery`` says.
    public typealias UpdateHandler = @Sendable (FileSystemWatchUpdate) -> Void
    /// Called once when the watch ends by itself, with the reason; not after ``stop()``, and not
    /// when `start()` throws.
    public typealias EndHandler = @Sendable (EndReason) -> Void

    /// The source each `start()` starts a watch of.
    public let source: any FileSystemEventSource
    /// Where the handlers run.
    public let delivery: Delivery
    private let handleUpdate: UpdateHandler
    private let handleEnd: EndHandler
    private let gate = ObserverDeliveryGate()
    private let state = Mutex<State>(State())

    private struct State: ~Copyable {
        var run: ObservedWatch?
        var endReason: EndReason?
    }

    /// - Parameters:
    ///   - source: what to watch; each `start()` calls its
    ///     ``FileSystemEventSource/updates(deliveringTo:)``.
    ///   - delivery: where `update` and `ended` run. Use a serial queue: the order of the
    ///     updates is the order in which they must be applied.
    ///   - update: receives every update of the watch, in order.
    ///   - ended: called once when the watch ends by itself, with the reason; not after
    ///     ``stop()``, and not when `start()` throws.
    public init(
        source: any FileSystemEventSource,
        delivery: Delivery = .watchThread,
        update: @escaping UpdateHandler,
        ended: @escaping EndHandler = { _ in }
    ) {
        self.source = source
        self.delivery = delivery
        self.handleUpdate = update
        self.handleEnd = ended
    }

    /// An observer whose handlers run on the main actor (through the main queue), for UI code.
    /// The main queue must be serviced: an app's run loop, `dispatchMain()`, or a SwiftUI or
    /// AppKit main.
    public convenience init(
        source: any FileSystemEventSource,
        onMainActor update: @escaping @MainActor (FileSystemWatchUpdate) -> Void,
        ended: @escaping @MainActor (EndReason) -> Void = { _ in }
    ) {
        self.init(
            source: source,
            delivery: .queue(.main),
            update: { value in MainActor.assumeIsolated { update(value) } },
            ended: { reason in MainActor.assumeIsolated { ended(reason) } }
        )
    }

    deinit {
        stop()
    }

    /// Starts watching and returns once the source is watching (its `ready` was handed to the
    /// delivery), or throws the typed error that kept it from starting. Blocks the calling
    /// thread for the initial scan; from async code, `await` the async overload instead.
    ///
    /// Does nothing if the observer is running. If ``stop()`` is called before the watch is
    /// ready, returns without an error and ``endReason`` is ``EndReason/stopped``.
    public func start() throws(FileSystemEventsError) {
        guard let run = begin() else { return }
        try run.waitUntilReady().get()
    }

    /// Starts watching and returns once the source is watching, without holding a thread
    /// while the initial scan runs. Cancelling the calling task stops the observer.
    public func start() async throws(FileSystemEventsError) {
        guard let run = begin() else { return }
        let result = await withTaskCancellationHandler {
            await run.ready()
        } onCancel: {
            run.terminate()
        }
        if Task.isCancelled {
            stop()
            return
        }
        try result.get()
    }

    /// Stops watching. After it returns, the handlers are not called again; unless called from
    /// the watch's own thread (inside a ``Delivery/watchThread`` handler), every descriptor of
    /// the watch is closed too. Safe to call at any time, from any thread, any number of times.
    public func stop() {
        let run = state.withLock { state -> ObservedWatch? in
            let run = state.run
            state.run = nil
            if run != nil { state.endReason = .stopped }
            // Under the lock `begin()` opens the gate with: a start() racing this stop either
            // came first (and is stopped here) or opens a generation this cannot close.
            gate.invalidate()
            return run
        }
        gate.waitForRunningDeliveries()
        guard let run else { return }
        run.terminate()
        if !run.isDeliveringOnCurrentThread { run.waitUntilEnded() }
    }

    /// Ends the watch gracefully: the source delivers what it has already seen (a polling
    /// source scans once more), then `ended` is called with ``EndReason/finished``.
    public func finish() {
        state.withLock { $0.run }?.finish()
    }

    /// Whether a watch started by `start()` is running (it may still be scanning).
    public var isRunning: Bool {
        state.withLock { $0.run != nil }
    }

    /// Why the last watch ended; `nil` while running or before the first start.
    public var endReason: EndReason? {
        state.withLock { $0.run == nil ? $0.endReason : nil }
    }

    /// The watched tree at `ready`, one snapshot per root, when the source was made with
    /// ``WatchOptions/capturesInitialState``; `nil` otherwise and before `ready`.
    public var initialState: [FileTreeSnapshot]? {
        state.withLock { $0.run }?.initialState
    }

    // MARK: Internals

    /// Starts a watch unless one is running; returns it.
    private func begin() -> ObservedWatch? {
        let started = state.withLock { state -> (ObservedWatch, ObserverDeliveryGate.Admission)? in
            guard state.run == nil else { return nil }
            let run = ObservedWatch()
            state.run = run
            state.endReason = nil
            return (run, self.gate.open())
        }
        guard let (run, admission) = started else { return nil }
        let delivery = self.delivery
        let gate = self.gate
        let handleUpdate = self.handleUpdate
        run.start(source: source, deliver: { update in
            gate.deliver(admission, on: delivery) { handleUpdate(update) }
        }, ended: { [weak self] run, reason, wasReady in
            guard let self else { return }
            let isCurrent = self.state.withLock { state -> Bool in
                guard state.run === run else { return false }
                state.run = nil
                state.endReason = reason
                return true
            }
            // A watch that never became ready made start() throw instead.
            if isCurrent && wasReady {
                let handleEnd = self.handleEnd
                gate.deliver(admission, on: delivery) { handleEnd(reason) }
            }
        })
        return run
    }
}
