import PlatformLibc
import DequeModule
import Dispatch
public import SystemPackage
import Synchronization

/// The hand-over point between a backend's producer thread and the consumer of a
/// ``FileSystemEventStream``.
///
/// Why not `AsyncThrowingStream`: a watcher needs back-pressure that a kernel can feel. When
/// the consumer stalls, the producer must stop reading so the kernel queue overflows and the
/// backend recovers with a rescan, instead of buffering without bound. The channel therefore
/// counts buffered events against a limit and wakes the producer (through a pipe it can put in
/// its `poll` set) when the consumer has drained half of it, or when the consumer goes away.
public final class FileSystemEventChannel: Sendable {
    private struct State: ~Copyable {
        var buffer = Deque<FileSystemWatchUpdate>()
        var bufferedEvents = 0
        var waiter: CheckedContinuation<Result<FileSystemWatchUpdate?, FileSystemEventsError>, Never>?
        /// A thread blocked in ``nextBlocking()``.
        var blockedReader: DispatchSemaphore?
        var completion: Result<Void, FileSystemEventsError>?
        var isTerminated = false
        var isFinishRequested = false
        var producerWantsRoom = false
        var producerHasExited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
        var wakeupRead: CInt
        var wakeupWrite: CInt
        var initialState: [FileTreeSnapshot]?
        /// Run once when the consumer goes away, and when it asks for a graceful end: how a
        /// relaying stream reaches the stream it relays.
        var terminationHooks: [@Sendable () -> Void] = []
        var finishHooks: [@Sendable () -> Void] = []
    }

    private let state: Mutex<State>
    package let bufferLimit: Int
    /// Set for a stream made with a handler: every update goes to it on the producer's thread,
    /// inside ``send(_:)``, and nothing is buffered.
    private let handler: FileSystemEventHandler?
    /// Readable whenever the producer should look at the channel again: the consumer went
    /// away, ``FileSystemEventStream/stop()`` was requested, or room appeared in the buffer.
    /// Put it in every blocking wait (`poll`, `epoll`, a run loop source); read it empty with
    /// ``drainWakeups()``. The channel owns it: never close it.
    public var wakeupDescriptor: FileDescriptor { FileDescriptor(rawValue: wakeupReadEnd) }
    /// ``wakeupDescriptor``'s number, for the package's own `poll` calls.
    package let wakeupReadEnd: CInt

    /// What ``send(_:)`` tells the producer.
    public enum SendResult: Sendable, Equatable {
        /// Buffered; `hasRoom` is false once the limit is reached.
        case enqueued(hasRoom: Bool)
        /// Nobody is listening any more: clean up and return.
        case terminated
    }

    package init(bufferLimit: Int, handler: FileSystemEventHandler? = nil) throws(FileSystemEventsError) {
        let pipe: (read: CInt, write: CInt)
        switch Syscalls.pipe() {
        case .success(let fds): pipe = fds
        case .failure(let errno):
            throw .systemCallFailed(call: "pipe", path: nil, errno: errno)
        }
        self.bufferLimit = max(1, bufferLimit)
        self.handler = handler
        self.wakeupReadEnd = pipe.read
        self.state = Mutex(State(wakeupRead: pipe.read, wakeupWrite: pipe.write))
    }

    deinit {
        state.withLock { state in
            Self.closeWakeup(&state)
        }
    }

    // MARK: Producer side

    /// Buffers an update for the consumer. Never drops: the producer decides what to do when
    /// `hasRoom` turns false.
    ///
    /// On a stream made with a handler, the handler runs here, on the calling (producer)
    /// thread, before `send` returns: back-pressure is then the handler's own speed, and the
    /// result always has room.
    @discardableResult
    public func send(_ update: FileSystemWatchUpdate) -> SendResult {
        if case .events(let events) = update, events.isEmpty { return .enqueued(hasRoom: hasRoom) }
        if let handler {
            let isOpen = state.withLock { !$0.isTerminated && $0.completion == nil }
            guard isOpen else { return .terminated }
            handler(update)
            return .enqueued(hasRoom: true)
        }
        // Wake-ups happen after the lock is released: a woken consumer's first move is to take
        // this lock, and spinning on it while the producer finishes a futex call cost tens of
        // microseconds per event (seen in perf as _MutexHandle._lockSlow).
        let (result, waiter, reader) = state.withLock { state -> (SendResult, CheckedContinuation<Result<FileSystemWatchUpdate?, FileSystemEventsError>, Never>?, DispatchSemaphore?) in
            guard !state.isTerminated, state.completion == nil else { return (.terminated, nil, nil) }
            if let waiter = state.waiter, state.buffer.isEmpty {
                state.waiter = nil
                return (.enqueued(hasRoom: state.bufferedEvents < bufferLimit), waiter, nil)
            }
            state.buffer.append(update)
            state.bufferedEvents += Self.weight(of: update)
            let reader = state.blockedReader
            state.blockedReader = nil
            return (.enqueued(hasRoom: state.bufferedEvents < bufferLimit), nil, reader)
        }
        reader?.signal()
        waiter?.resume(returning: .success(update))
        return result
    }

    /// Ends the stream after what is buffered, with `error` if the watch failed.
    public func finish(throwing error: FileSystemEventsError? = nil) {
        let (waiter, reader) = state.withLock { state -> (CheckedContinuation<Result<FileSystemWatchUpdate?, FileSystemEventsError>, Never>?, DispatchSemaphore?) in
            guard state.completion == nil else { return (nil, nil) }
            state.completion = error.map { .failure($0) } ?? .success(())
            let reader = state.blockedReader
            state.blockedReader = nil
            guard state.buffer.isEmpty, let waiter = state.waiter else { return (nil, reader) }
            state.waiter = nil
            return (waiter, reader)
        }
        reader?.signal()
        if let waiter {
            waiter.resume(returning: error.map { .failure($0) } ?? .success(nil))
            if error != nil { state.withLock { $0.completion = .success(()) } }
        }
    }

    /// What a producer loop checks each time round, read under one lock acquisition instead
    /// of three (the consumer contends for the same lock on every delivery).
    public struct ProducerStatus: Sendable {
        /// See ``FileSystemEventChannel/isTerminated``.
        public var isTerminated: Bool
        /// See ``FileSystemEventChannel/isFinishRequested``.
        public var isFinishRequested: Bool
        /// See ``FileSystemEventChannel/hasRoom``.
        public var hasRoom: Bool
    }

    /// ``isTerminated``, ``isFinishRequested`` and ``hasRoom`` at one instant.
    public var producerStatus: ProducerStatus {
        state.withLock { state in
            ProducerStatus(isTerminated: state.isTerminated, isFinishRequested: state.isFinishRequested,
                           hasRoom: state.bufferedEvents < bufferLimit)
        }
    }

    /// True once the consumer has gone away or asked the source to stop.
    public var isTerminated: Bool { state.withLock { $0.isTerminated } }

    /// Hands over the tree as the source has it, one snapshot per root in the order of
    /// ``WatchOptions/roots``, when ``WatchOptions/capturesInitialState`` asks for it. Call it
    /// before sending ``FileSystemWatchUpdate/ready(roots:)``: it is the state the events after
    /// `ready` apply to, so it must be the model the source built, not a later walk.
    public func setInitialState(_ snapshots: [FileTreeSnapshot]) {
        state.withLock { $0.initialState = snapshots }
    }

    /// What ``setInitialState(_:)`` handed over.
    package var initialState: [FileTreeSnapshot]? { state.withLock { $0.initialState } }

    /// True once the consumer asked for a graceful end: deliver what has been observed
    /// (flush the latency window; a polling source scans once more), then ``finish(throwing:)``.
    public var isFinishRequested: Bool { state.withLock { $0.isFinishRequested } }

    /// True while the consumer keeps up (fewer buffered events than the limit).
    public var hasRoom: Bool { state.withLock { $0.bufferedEvents < bufferLimit } }

    /// Asks to be woken (via ``wakeupDescriptor``) when room appears. Returns `true` if there
    /// is room already, so the producer should not wait.
    public func requestWakeupWhenRoom() -> Bool {
        state.withLock { state in
            if state.isTerminated || state.bufferedEvents < bufferLimit / 2 + 1 { return true }
            state.producerWantsRoom = true
            return false
        }
    }

    /// Empties the wakeup pipe after the producer was woken.
    public func drainWakeups() {
        Syscalls.drainWakeups(wakeupReadEnd)
    }

    // MARK: Consumer side

    package func next() async -> Result<FileSystemWatchUpdate?, FileSystemEventsError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Result<FileSystemWatchUpdate?, FileSystemEventsError>? in
                    // One consumer at a time: a second waiter would replace the first, which
                    // would then wait forever. The newcomer fails instead, as documented.
                    if state.waiter != nil || state.blockedReader != nil { return .failure(.concurrentIteration) }
                    if let ready = Self.takeNext(&state, bufferLimit: bufferLimit) { return ready }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            terminate()
        }
    }

    /// The next buffered update if one is already waiting, else `nil` at once (never the end of
    /// the stream): for consumers that merge whatever has piled up into one delivery, as a
    /// directory listing turns a burst into one update.
    package func nextIfBuffered() -> FileSystemWatchUpdate? {
        state.withLock { state in
            guard !state.isTerminated, !state.buffer.isEmpty else { return nil }
            if case .success(let update)? = Self.takeNext(&state, bufferLimit: bufferLimit) { return update }
            return nil
        }
    }

    /// Asks the producer to deliver what it has observed and end the stream; idempotent.
    package func requestFinish() {
        let hooks = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isFinishRequested else { return [] }
            state.isFinishRequested = true
            Self.wake(&state)
            return state.finishHooks
        }
        for hook in hooks { hook() }
    }

    /// Runs `onTerminate` when the consumer goes away (at once if it has) and `onFinish` when
    /// it asks for a graceful end: a stream that relays another passes both on to it.
    package func link(onTerminate: @escaping @Sendable () -> Void, onFinish: @escaping @Sendable () -> Void) {
        let (terminated, finishing) = state.withLock { state in
            state.terminationHooks.append(onTerminate)
            state.finishHooks.append(onFinish)
            return (state.isTerminated, state.isFinishRequested)
        }
        if terminated { onTerminate() }
        if finishing { onFinish() }
    }

    /// The blocking counterpart of ``next()``, for threads outside Swift concurrency.
    package func nextBlocking() -> Result<FileSystemWatchUpdate?, FileSystemEventsError> {
        // Without a deadline the wait ends only with an update or the end.
        nextBlocking(waitingAtMost: nil) ?? .success(nil)
    }

    /// ``nextBlocking()``, giving up after `timeout`: `nil` if nothing came by then.
    package func nextBlocking(waitingAtMost timeout: Duration?) -> Result<FileSystemWatchUpdate?, FileSystemEventsError>? {
        let deadline = timeout.map { DispatchTime.now() + .nanoseconds(Int(clamping: $0.saturatingNanoseconds)) }
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            let immediate = state.withLock { state -> Result<FileSystemWatchUpdate?, FileSystemEventsError>? in
                if state.waiter != nil || state.blockedReader != nil { return .failure(.concurrentIteration) }
                if state.isTerminated && !state.producerHasExited {
                    // The end, but only once the producer has closed its descriptors: a
                    // thread that relays this stream must not end before it does.
                    state.blockedReader = semaphore
                    return nil
                }
                if let ready = Self.takeNext(&state, bufferLimit: bufferLimit) { return ready }
                if state.producerHasExited { return .success(nil) }
                state.blockedReader = semaphore
                return nil
            }
            if let immediate { return immediate }
            guard let deadline else {
                semaphore.wait()
                continue
            }
            if semaphore.wait(timeout: deadline) == .success { continue }
            // Timed out, unless an update took the reader off meanwhile: its signal is then on
            // its way, and is taken before looking again.
            let withdrawn = state.withLock { state -> Bool in
                guard state.blockedReader === semaphore else { return false }
                state.blockedReader = nil
                return true
            }
            if withdrawn { return nil }
            semaphore.wait()
        }
    }

    /// Tells the producer nobody listens any more; idempotent.
    package func terminate() {
        let (waiter, reader, hooks) = state.withLock { state -> (CheckedContinuation<Result<FileSystemWatchUpdate?, FileSystemEventsError>, Never>?, DispatchSemaphore?, [@Sendable () -> Void]) in
            guard !state.isTerminated else { return (nil, nil, []) }
            state.isTerminated = true
            state.buffer.removeAll()
            state.bufferedEvents = 0
            Self.wake(&state)
            let waiter = state.waiter
            state.waiter = nil
            let reader = state.blockedReader
            state.blockedReader = nil
            return (waiter, reader, state.terminationHooks)
        }
        for hook in hooks { hook() }
        reader?.signal()
        waiter?.resume(returning: .success(nil))
    }

    /// Called once, by the thread that ran the producer, after the producer returned.
    package func producerDidExit() {
        let (waiters, consumer, reader) = state.withLock { state in
            state.producerHasExited = true
            Self.closeWakeup(&state)
            if state.completion == nil { state.completion = .success(()) }
            let waiters = state.exitWaiters
            state.exitWaiters = []
            var consumer: CheckedContinuation<Result<FileSystemWatchUpdate?, FileSystemEventsError>, Never>?
            let reader = state.blockedReader
            state.blockedReader = nil
            if state.buffer.isEmpty {
                consumer = state.waiter
                state.waiter = nil
            }
            return (waiters, consumer, reader)
        }
        reader?.signal()
        consumer?.resume(returning: .success(nil))
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the producer has returned and closed its descriptors.
    package func waitForProducerExit() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.producerHasExited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: Helpers

    /// What a consumer gets right now: the next buffered update, the end of the stream (or its
    /// error, once), or `nil` when it has to wait. Wakes a producer waiting for room.
    private static func takeNext(_ state: inout State, bufferLimit: Int) -> Result<FileSystemWatchUpdate?, FileSystemEventsError>? {
        if state.isTerminated { return .success(nil) }
        if let update = state.buffer.popFirst() {
            state.bufferedEvents -= weight(of: update)
            if state.producerWantsRoom && state.bufferedEvents <= bufferLimit / 2 {
                state.producerWantsRoom = false
                wake(&state)
            }
            return .success(update)
        }
        switch state.completion {
        case .some(.success):
            return .success(nil)
        case .some(.failure(let error)):
            state.completion = .success(())
            return .failure(error)
        case .none:
            return nil
        }
    }

    private static func weight(of update: FileSystemWatchUpdate) -> Int {
        if case .events(let events) = update { return events.count }
        return 1
    }

    /// One byte into the pipe. A full pipe already means "wake up", so `EAGAIN` is fine.
    private static func wake(_ state: inout State) {
        guard state.wakeupWrite >= 0 else { return }
        Syscalls.signalWakeup(state.wakeupWrite)
    }

    private static func closeWakeup(_ state: inout State) {
        if state.wakeupWrite >= 0 {
            Syscalls.close(state.wakeupWrite)
            state.wakeupWrite = -1
        }
        if state.wakeupRead >= 0 {
            Syscalls.close(state.wakeupRead)
            state.wakeupRead = -1
        }
    }
}
