/// A source that gives every file and directory a persistent ID
/// (``WatchOptions/stampsStableIDs``), over any other source.
///
/// It reads each item's ID from the extended attribute `user.filewatch.id`
/// (``FileStableID/extendedAttributeName``) and stamps a random one where there is none: the
/// items of the tree at `ready`, then each item as it is created. Every event carries its
/// item's ID (``FileSystemEvent/stableID``); a renamed directory's items keep theirs without
/// being looked at again. An item created with an ID that an item still in the tree has is a
/// duplicate (``FileSystemEvent/duplicateOf``) and gets a fresh ID; one whose original has
/// gone (moved out and back) keeps it.
///
/// Stamping changes only the attribute (and so the change time), never the content or the
/// modification time, and only of items the process may already write; the event it causes
/// (`attributesChanged`, or `modified` from a poll that sees the change time move) is not
/// reported when the item still has the mode, owner, link count, size and modification time
/// it had just after the stamp (and, for a poll's, the change time): a `chmod` whose event
/// the kernel merged with the echo is reported. A read-only tree is watched without stamping.
/// A file system that refuses extended attributes gets IDs derived from device, inode and
/// birth time, with a diagnostic.
public struct StableIDSource: ProducerThreadEventSource {
    /// The watch as the consumer asked for it; the base source was made with options of its own.
    public let options: WatchOptions
    private let base: any FileSystemEventSource

    /// - Parameters:
    ///   - options: the watch, as the consumer asked for it.
    ///   - base: the source to add IDs to, made with ``WatchOptions/capturesInitialState``
    ///     (the tree at `ready` is the one it crawled; without it, the tree is scanned again).
    public init(options: WatchOptions, base: any FileSystemEventSource) {
        self.options = options
        self.base = base
    }

    /// The base source's: stable IDs are a layer over a backend, not a backend.
    public var backendName: String { base.backendName }
    /// The base source's, unchanged.
    public var capabilities: FileSystemEventSourceCapabilities { base.capabilities }


    /// Starts one watch of the base source and, on a producer thread of its own, reads and
    /// stamps IDs and puts them on the base source's updates.
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let options = self.options
        let base = self.base
        return FileSystemEventStream(options: options, handler: handler) { channel in
            let inner = base.updates()
            channel.link(onTerminate: { inner.terminate() }, onFinish: { inner.finish() })
            var tracker = StableIDTracker(roots: options.roots, writes: true)
            var iterator = inner.makeBlockingIterator()
            /// Sends the held events as they are (``StableIDTracker/releaseHeldEvents()``).
            func releaseHeld() { send([.events(tracker.releaseHeldEvents())], to: channel, inner: inner) }
            do throws(FileSystemEventsError) {
                while true {
                    // Events held for an item that had left its path when its creation was
                    // handled wait for the next batch, which tells where it went (the kernel
                    // had queued that before the item was looked for), and not much longer.
                    let next: FileSystemWatchUpdate?
                    if tracker.isHoldingEvents {
                        guard let arrived = try iterator.next(waitingAtMost: Self.heldEventsWait) else {
                            releaseHeld()
                            continue
                        }
                        next = arrived
                    } else {
                        next = try iterator.next()
                    }
                    guard let update = next else { break }
                    var outgoing: [FileSystemWatchUpdate] = []
                    switch update {
                    case .ready:
                        if let snapshots = inner.initialState {
                            tracker.load(snapshots)
                            if options.capturesInitialState { channel.setInitialState(snapshots) }
                        } else {
                            // No tree handed over (a root was missing at `ready`): the IDs of
                            // what is there now; the consumer gets no initial state, as from
                            // the inner source.
                            tracker.load(options.roots.compactMap { root in
                                try? FileTreeSnapshot.scan(root, isRecursive: options.isRecursive, followsSymlinks: options.followsSymlinks, filter: options.filter)
                            })
                        }
                        outgoing = tracker.takeDiagnostics().map { .diagnostic($0) } + [update]
                    case .events(let events):
                        let told = tracker.process(events)
                        outgoing = (told.isEmpty ? [] : [.events(told)]) + tracker.takeDiagnostics().map { .diagnostic($0) }
                    case .scanStarted, .diagnostic:
                        outgoing = [update]
                    }
                    send(outgoing, to: channel, inner: inner)
                }
                releaseHeld()
                channel.finish()
            } catch {
                releaseHeld()
                channel.finish(throwing: error)
            }
        }
    }

    /// How long events held for an item not yet found wait for the next batch of the base
    /// source (``StableIDTracker/isHoldingEvents``). The kernel backends deliver it within
    /// microseconds of the first; this bounds the wait where nothing follows.
    static var heldEventsWait: Duration { .milliseconds(200) }

    private func send(_ updates: [FileSystemWatchUpdate], to channel: FileSystemEventChannel, inner: FileSystemEventStream) {
        for update in updates {
            if case .events(let events) = update, events.isEmpty { continue }
            if case .terminated = channel.send(update) {
                inner.terminate()
            }
        }
        waitForRoom(channel)
    }

    /// Stops reading the inner stream while the consumer is behind (the inner source then lets
    /// its kernel queue overflow and rescans), until there is room or nobody listens.
    private func waitForRoom(_ channel: FileSystemEventChannel) {
        while !channel.hasRoom && !channel.isTerminated {
            if channel.requestWakeupWhenRoom() { continue }
            _ = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: -1)
            channel.drainWakeups()
        }
    }
}
