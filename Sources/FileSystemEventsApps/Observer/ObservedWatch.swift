import PlatformLibc
import Dispatch
import FileSystemEventsCore
import Synchronization
import SystemPackage

/// One watch started by `start()`: its stream, whether it is ready yet,
/// and a monitor thread that waits for it to end and says why.
///
/// The stream's handler and the monitor keep this object alive while the watch runs (a
/// cycle through the stream), and the monitor breaks the cycle when the watch has ended, so
/// an observer dropped without ``FileSystemObserver/stop()`` still ends its watch: its
/// `deinit` stops it.
final class ObservedWatch: Sendable {
    typealias Ended = @Sendable (ObservedWatch, FileSystemObserver.EndReason, _ wasReady: Bool) -> Void

    private enum Readiness {
        case waiting
        case ready
        case failed(FileSystemEventsError)
        /// Ended (stopped or finished) before `ready`.
        case endedEarly
    }

    private struct Progress: ~Copyable {
        var stream: FileSystemEventStream?
        var readiness: Readiness = .waiting
        var readyWaiters: [DispatchSemaphore] = []
        var asyncReadyWaiters: [CheckedContinuation<Void, Never>] = []
        var hasEnded = false
        var endWaiters: [DispatchSemaphore] = []
        var isTerminationRequested = false
        var isFinishRequested = false
        /// The thread that calls the stream's handler (the source's producer, or its relay).
        var handlerThread: pthread_t?
        var removedRoots: [FilePath] = []
    }

    private let progress = Mutex<Progress>(Progress())

    /// Starts the source's watch and the monitor that reports its end to `ended`.
    func start(source: any FileSystemEventSource, deliver: @escaping @Sendable (FileSystemWatchUpdate) -> Void, ended: @escaping Ended) {
        let stream = source.updates(deliveringTo: { update in self.received(update, deliver: deliver) })
        let (terminate, finish) = progress.withLock { progress in
            progress.stream = stream
            return (progress.isTerminationRequested, progress.isFinishRequested)
        }
        if terminate { stream.terminate() } else if finish { stream.finish() }
        let started = ProducerThread.start {
            var iterator = stream.makeBlockingIterator()
            var failure: FileSystemEventsError?
            do throws(FileSystemEventsError) {
                while try iterator.next() != nil {}
            } catch {
                failure = error
            }
            self.didEnd(failure: failure, ended: ended)
        }
        if !started {
            stream.terminate()
            didEnd(failure: .systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable), ended: ended)
        }
    }

    /// Tells the watch to end, without waiting.
    func terminate() {
        let stream = progress.withLock { progress in
            progress.isTerminationRequested = true
            return progress.stream
        }
        stream?.terminate()
    }

    /// Asks the watch to deliver what it has seen and end.
    func finish() {
        let stream = progress.withLock { progress in
            progress.isFinishRequested = true
            return progress.stream
        }
        stream?.finish()
    }

    /// Whether the calling thread is the one that delivers the stream's updates: waiting there
    /// for the watch to end would wait for ourselves.
    var isDeliveringOnCurrentThread: Bool {
        let me = pthread_self()
        return progress.withLock { progress in
            progress.handlerThread.map { pthread_equal($0, me) != 0 } ?? false
        }
    }

    var initialState: [FileSystemEventsCore.FileTreeSnapshot]? {
        progress.withLock { $0.stream }?.initialState
    }

    /// Blocks until the watch is ready or has ended; the error that ended it before `ready`.
    func waitUntilReady() -> Result<Void, FileSystemEventsError> {
        let semaphore = DispatchSemaphore(value: 0)
        let waits = progress.withLock { progress -> Bool in
            guard case .waiting = progress.readiness else { return false }
            progress.readyWaiters.append(semaphore)
            return true
        }
        if waits { semaphore.wait() }
        return readinessResult()
    }

    /// Waits until the watch is ready or has ended; the error that ended it before `ready`.
    func ready() async -> Result<Void, FileSystemEventsError> {
        await withCheckedContinuation { continuation in
            let waits = progress.withLock { progress -> Bool in
                guard case .waiting = progress.readiness else { return false }
                progress.asyncReadyWaiters.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
        return readinessResult()
    }

    /// Blocks until the watch has ended and closed its descriptors.
    func waitUntilEnded() {
        let semaphore = DispatchSemaphore(value: 0)
        let waits = progress.withLock { progress -> Bool in
            guard !progress.hasEnded else { return false }
            progress.endWaiters.append(semaphore)
            return true
        }
        if waits { semaphore.wait() }
    }

    // MARK: Internals

    private func readinessResult() -> Result<Void, FileSystemEventsError> {
        progress.withLock { progress in
            if case .failed(let error) = progress.readiness { return .failure(error) }
            return .success(())
        }
    }

    private func received(_ update: FileSystemWatchUpdate, deliver: (FileSystemWatchUpdate) -> Void) {
        let me = pthread_self()
        let removed: [FilePath]
        if case .events(let events) = update {
            removed = events.lazy.filter { $0.kind == .rootRemoved }.map(\.path)
        } else {
            removed = []
        }
        progress.withLock { progress in
            if progress.handlerThread == nil { progress.handlerThread = me }
            progress.removedRoots += removed
        }
        deliver(update)
        if case .ready = update {
            resolveReadiness(.ready)
        }
    }

    private func resolveReadiness(_ readiness: Readiness) {
        let (waiters, asyncWaiters) = progress.withLock { progress -> ([DispatchSemaphore], [CheckedContinuation<Void, Never>]) in
            guard case .waiting = progress.readiness else { return ([], []) }
            progress.readiness = readiness
            defer {
                progress.readyWaiters = []
                progress.asyncReadyWaiters = []
            }
            return (progress.readyWaiters, progress.asyncReadyWaiters)
        }
        for waiter in waiters { waiter.signal() }
        for waiter in asyncWaiters { waiter.resume() }
    }

    private func didEnd(failure: FileSystemEventsError?, ended: Ended) {
        let (wasReady, reason, waiters) = progress.withLock { progress -> (Bool, FileSystemObserver.EndReason, [DispatchSemaphore]) in
            progress.hasEnded = true
            // The stream is done with its handler: drop it, and the cycle through it.
            progress.stream = nil
            let wasReady: Bool
            if case .ready = progress.readiness { wasReady = true } else { wasReady = false }
            let reason: FileSystemObserver.EndReason
            if let failure {
                reason = .failed(failure)
            } else if progress.isTerminationRequested {
                reason = .stopped
            } else if !progress.removedRoots.isEmpty && !progress.isFinishRequested {
                reason = .rootsRemoved(progress.removedRoots)
            } else {
                reason = .finished
            }
            defer { progress.endWaiters = [] }
            return (wasReady, reason, progress.endWaiters)
        }
        for waiter in waiters { waiter.signal() }
        ended(self, reason, wasReady)
        // Last, so that a start() that throws finds the observer stopped.
        resolveReadiness(failure.map { .failed($0) } ?? .endedEarly)
    }
}
