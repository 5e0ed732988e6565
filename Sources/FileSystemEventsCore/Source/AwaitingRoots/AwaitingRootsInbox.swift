import DequeModule
import Dispatch
import Synchronization

/// Where the threads reading an ``AwaitingRootsWatch``'s inner watches leave what they read,
/// for the watch's own thread to act on in order.
///
/// Bounded: a reader that finds it holding more than `capacity` events waits, so it stops
/// reading its inner stream, which stops reading the kernel; the kernel queue overflows and
/// the inner source rescans, as with any stalled consumer. Memory stays bounded.
final class AwaitingRootsInbox: Sendable {
    enum Message: Sendable {
        case update(FileSystemWatchUpdate)
        /// The inner stream ended, with its failure if it failed.
        case ended(FileSystemEventsError?)
    }

    private struct State: ~Copyable {
        var messages: Deque<(watch: Int, message: Message)> = []
        var weight = 0
        var blockedReaders: [DispatchSemaphore] = []
        var isClosed = false
        var liveReaders = 0
        var exitWaiter: DispatchSemaphore?
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let wakeupWriteEnd: CInt

    /// - Parameter wakeupWriteEnd: signalled (``Syscalls/signalWakeup(_:)``) when a message arrives.
    init(capacity: Int, wakeupWriteEnd: CInt) {
        self.capacity = max(1, capacity)
        self.wakeupWriteEnd = wakeupWriteEnd
    }

    /// Starts a thread that reads `stream` to its end into this inbox, tagged with `watch`.
    /// Returns `false` if the thread could not be made.
    func startReader(of stream: FileSystemEventStream, as watch: Int) -> Bool {
        state.withLock { $0.liveReaders += 1 }
        let started = ProducerThread.start { [self] in
            var iterator = stream.makeBlockingIterator()
            do throws(FileSystemEventsError) {
                while let update = try iterator.next() { post(.update(update), from: watch) }
                post(.ended(nil), from: watch)
            } catch {
                post(.ended(error), from: watch)
            }
            readerExited()
        }
        if !started { readerExited() }
        return started
    }

    /// Everything posted so far, in order; wakes readers waiting for room.
    func takeAll() -> [(watch: Int, message: Message)] {
        let (messages, readers) = state.withLock { state -> ([(watch: Int, message: Message)], [DispatchSemaphore]) in
            let messages = Array(state.messages)
            state.messages.removeAll()
            state.weight = 0
            defer { state.blockedReaders = [] }
            return (messages, state.blockedReaders)
        }
        for reader in readers { reader.signal() }
        return messages
    }

    /// Drops what is posted from now on and releases every waiting reader, so that each can
    /// read its (terminated) stream to the end and exit.
    func close() {
        let readers = state.withLock { state -> [DispatchSemaphore] in
            state.isClosed = true
            state.messages.removeAll()
            defer { state.blockedReaders = [] }
            return state.blockedReaders
        }
        for reader in readers { reader.signal() }
    }

    /// Returns once every reader has exited, that is once every inner watch has closed its
    /// descriptors (a blocking iterator ends only then).
    func waitForReaders() {
        let semaphore = DispatchSemaphore(value: 0)
        let waits = state.withLock { state -> Bool in
            guard state.liveReaders > 0 else { return false }
            state.exitWaiter = semaphore
            return true
        }
        if waits { semaphore.wait() }
    }

    private func post(_ message: Message, from watch: Int) {
        let weight: Int
        if case .update(.events(let events)) = message { weight = events.count } else { weight = 1 }
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            let posted = state.withLock { state -> Bool in
                if state.isClosed { return true }
                if state.weight > 0 && state.weight + weight > capacity {
                    state.blockedReaders.append(semaphore)
                    return false
                }
                state.messages.append((watch, message))
                state.weight += weight
                return true
            }
            if posted { break }
            Syscalls.signalWakeup(wakeupWriteEnd)
            semaphore.wait()
        }
        Syscalls.signalWakeup(wakeupWriteEnd)
    }

    private func readerExited() {
        let waiter = state.withLock { state -> DispatchSemaphore? in
            state.liveReaders -= 1
            guard state.liveReaders == 0 else { return nil }
            defer { state.exitWaiter = nil }
            return state.exitWaiter
        }
        waiter?.signal()
    }
}
