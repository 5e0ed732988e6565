/// The updates of one watch, as an `AsyncSequence`.
///
/// The watch runs while the stream is alive: cancelling the task that iterates it, dropping
/// every reference to it, or calling ``stop()`` ends the watch and closes its descriptors.
/// Iteration throws ``FileSystemEventsError`` when the watch cannot start or fails.
///
/// A stream has one consumer, like `AsyncStream`: iterators may follow one another, but a
/// task that asks for the next update while another task is already waiting for one gets
/// ``FileSystemEventsError/concurrentIteration`` (the waiting task is not disturbed). Each
/// call of ``FileSystemEventSource/updates()`` makes an independent stream for another consumer.
public struct FileSystemEventStream: AsyncSequence, Sendable {
    /// Lifecycle milestones, event batches and diagnostics (``FileSystemWatchUpdate``).
    public typealias Element = FileSystemWatchUpdate
    /// Iteration throws nothing but ``FileSystemEventsError``.
    public typealias Failure = FileSystemEventsError

    /// Owns the channel for the stream and all its iterators; the last one to go ends the watch.
    final class Storage: Sendable {
        let channel: FileSystemEventChannel?
        let startupError: FileSystemEventsError?

        init(channel: FileSystemEventChannel?, startupError: FileSystemEventsError?) {
            self.channel = channel
            self.startupError = startupError
        }

        deinit { channel?.terminate() }
    }

    let storage: Storage

    /// Starts `producer` on a thread of its own and returns the stream it feeds.
    ///
    /// - Parameters:
    ///   - bufferLimit: events buffered before ``FileSystemEventChannel/send(_:)`` reports no room.
    ///   - producer: the backend's watch loop; see ``FileSystemEventSource`` for its duties.
    public init(bufferLimit: Int, producer: @escaping @Sendable (FileSystemEventChannel) -> Void) {
        self.init(bufferLimit: bufferLimit, handler: nil, producer: producer)
    }

    /// Starts `producer` on a thread of its own, handing every update it sends to `handler` on
    /// that thread; the stream itself then yields nothing and only ends (or throws) with the
    /// watch. See ``FileSystemEventSource/updates(deliveringTo:)``.
    public init(bufferLimit: Int, handler: FileSystemEventHandler?, producer: @escaping @Sendable (FileSystemEventChannel) -> Void) {
        let channel: FileSystemEventChannel
        do {
            channel = try FileSystemEventChannel(bufferLimit: bufferLimit, handler: handler)
        } catch {
            storage = Storage(channel: nil, startupError: error)
            return
        }
        let started = ProducerThread.start {
            producer(channel)
            channel.producerDidExit()
        }
        if !started {
            channel.producerDidExit()
            storage = Storage(channel: nil, startupError: .systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable))
            return
        }
        storage = Storage(channel: channel, startupError: nil)
    }

    /// Checks `options` (``WatchOptions/validate()``), then starts `producer` as
    /// ``init(bufferLimit:producer:)`` does. Options no source can honour (no roots, a zero poll
    /// interval, a duration out of range) end the stream at once with their
    /// ``FileSystemEventsError/invalidOptions(_:)``, before any thread or descriptor exists.
    public init(options: WatchOptions, producer: @escaping @Sendable (FileSystemEventChannel) -> Void) {
        self.init(options: options, handler: nil, producer: producer)
    }

    /// ``init(options:producer:)`` with a handler: what a source's
    /// ``FileSystemEventSource/updates(deliveringTo:)`` returns.
    public init(options: WatchOptions, handler: FileSystemEventHandler?, producer: @escaping @Sendable (FileSystemEventChannel) -> Void) {
        do {
            try options.validate()
        } catch {
            self.init(storage: Storage(channel: nil, startupError: error))
            return
        }
        self.init(bufferLimit: options.bufferLimit, handler: handler, producer: producer)
    }

    /// A stream that hands `relayed`'s updates to `handler`, from a thread of its own: the
    /// default ``FileSystemEventSource/updates(deliveringTo:)`` for a source that cannot run
    /// the handler on its own thread. Stopping or finishing it stops or finishes `relayed`.
    public init(relaying relayed: FileSystemEventStream, to handler: @escaping FileSystemEventHandler) {
        self.init(bufferLimit: 1, handler: handler) { channel in
            var iterator = relayed.makeBlockingIterator()
            do throws(FileSystemEventsError) {
                while let update = try iterator.next() {
                    if case .terminated = channel.send(update) {
                        relayed.terminate()
                    }
                }
                channel.finish()
            } catch {
                channel.finish(throwing: error)
            }
        }
        storage.channel?.link(onTerminate: { relayed.terminate() }, onFinish: { relayed.finish() })
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Ends the watch gracefully: the source delivers what it has already observed (a polling
    /// source scans once more), then the sequence ends. For a clean exit on SIGINT.
    public func finish() {
        storage.channel?.requestFinish()
    }

    /// Waits for the watch to end, discarding whatever the stream yields, and throws its
    /// failure: for a stream whose updates go to a handler
    /// (``FileSystemEventSource/updates(deliveringTo:)``). Cancelling the waiting task ends the
    /// watch, as it does for any iteration.
    public func run() async throws(FileSystemEventsError) {
        var iterator = makeAsyncIterator()
        while try await iterator.next() != nil {}
    }

    /// Ends the watch at once, dropping undelivered updates, and returns once its producer
    /// has closed every descriptor.
    public func stop() async {
        guard let channel = storage.channel else { return }
        channel.terminate()
        await channel.waitForProducerExit()
    }

    /// Tells the source to end at once, without waiting for it: for a consumer on a thread of
    /// its own, which then reads the stream to its end (the blocking iterator returns `nil`
    /// once the producer has closed its descriptors).
    package func terminate() {
        storage.channel?.terminate()
    }

    /// The next update if the source has one buffered already, without waiting; `nil` otherwise
    /// (including at the end of the stream, which the iterator then reports).
    package func nextIfBuffered() -> FileSystemWatchUpdate? {
        storage.channel?.nextIfBuffered()
    }

    /// The watched tree at the instant of `ready`, one snapshot per root, once `ready` has been
    /// delivered; `nil` unless ``WatchOptions/capturesInitialState`` was set (or the backend
    /// cannot). Start from it and apply the events that follow `ready`: that is the replay
    /// invariant, made something a consumer can do without listing the tree itself.
    public var initialState: [FileTreeSnapshot]? {
        storage.channel?.initialState
    }

    /// An iterator that blocks the calling thread, for code outside Swift concurrency (a plain
    /// thread, a C host, a benchmark harness). Never use it from async code: it would hold a
    /// thread of the cooperative pool.
    public func makeBlockingIterator() -> BlockingIterator {
        BlockingIterator(storage: storage)
    }

    /// Made by ``makeBlockingIterator()``: its `next()` blocks the calling thread, under the same
    /// one-consumer rule as the async iterator.
    public struct BlockingIterator {
        let storage: Storage
        var reportedStartupError = false

        /// The next update, blocking until there is one; `nil` once the watch has ended.
        public mutating func next() throws(FileSystemEventsError) -> FileSystemWatchUpdate? {
            guard let channel = storage.channel else {
                if let error = storage.startupError, !reportedStartupError {
                    reportedStartupError = true
                    throw error
                }
                return nil
            }
            return try channel.nextBlocking().get()
        }

        /// ``next()``, waiting `timeout` at most: `.none` if nothing came by then, `.some(nil)`
        /// once the watch has ended.
        package mutating func next(waitingAtMost timeout: Duration) throws(FileSystemEventsError) -> FileSystemWatchUpdate?? {
            guard let channel = storage.channel else { return .some(try next()) }
            guard let result = channel.nextBlocking(waitingAtMost: timeout) else { return .none }
            return .some(try result.get())
        }
    }

    /// Every iterator reads the stream's one watch: iterators may follow one another, not
    /// wait at once.
    public func makeAsyncIterator() -> Iterator {
        Iterator(storage: storage)
    }

    /// Reads the stream's watch; cancelling the task waiting in `next` ends the watch.
    public struct Iterator: AsyncIteratorProtocol {
        let storage: Storage
        var reportedStartupError = false

        /// The next update, waiting until the watch has one; `nil` once it has ended. Throws
        /// why the watch failed or could not start, or ``FileSystemEventsError/concurrentIteration``.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(FileSystemEventsError) -> FileSystemWatchUpdate? {
            guard let channel = storage.channel else {
                if let error = storage.startupError, !reportedStartupError {
                    reportedStartupError = true
                    throw error
                }
                return nil
            }
            return try await channel.next().get()
        }

        /// The same as ``next(isolation:)``, on no actor.
        public mutating func next() async throws(FileSystemEventsError) -> FileSystemWatchUpdate? {
            try await next(isolation: nil)
        }
    }
}
