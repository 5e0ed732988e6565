/// A way of finding out what changed on disk. Host apps program against this protocol and pick
/// an implementation by name at run time (see `FileSystemEventBackend` in `FileSystemEvents`).
///
/// ## Implementing a source
///
/// A source is a value built from ``WatchOptions``; calling ``updates()`` starts one watch and
/// returns its ``FileSystemEventStream``. To write a backend:
///
/// 1. Create the stream with ``FileSystemEventStream/init(options:producer:)``, which rejects
///    options no source can honour with a typed error. The producer
///    runs on a thread of its own, so it may block in `poll`, `read` or a directory scan
///    without starving Swift's cooperative pool.
/// 2. Send ``FileSystemWatchUpdate/scanStarted(roots:)``, establish the initial state (for
///    kernel watches: add the watch *before* listing a directory, or a file created between
///    the listing and the watch is lost), then send ``FileSystemWatchUpdate/ready(roots:)``.
/// 3. Send batches of events. Each batch must keep the replay invariant documented on
///    ``FileSystemEvent``: whatever the kernel did not report (the contents of a directory that
///    appeared, everything after an overflow) is found by scanning and sent as synthetic events.
/// 4. Include ``FileSystemEventChannel/wakeupDescriptor`` in every blocking wait, and return
///    promptly once ``FileSystemEventChannel/isTerminated`` is true, closing every descriptor you
///    opened. That is how cancellation and ``FileSystemEventStream/stop()`` reach you.
/// 5. When ``FileSystemEventChannel/send(_:)`` reports the buffer full, stop reading until
///    ``FileSystemEventChannel/hasRoom`` (the wakeup descriptor fires when it changes). A kernel
///    queue will overflow meanwhile; recover with a rescan rather than buffering without bound.
/// 6. Fail with a ``FileSystemEventsError`` that tells the user what to do.
///
/// Then run the conformance suite (`FileSystemEventsConformance`) against your source: it is the
/// definition of "works".
public protocol FileSystemEventSource: Sendable {
    /// The backend's name as configuration spells it (`polling`, `inotify`, ...).
    var backendName: String { get }
    /// The options the source was made with; every watch it starts uses them.
    var options: WatchOptions { get }
    /// What the backend can and cannot do, for a host app choosing between backends.
    var capabilities: FileSystemEventSourceCapabilities { get }

    /// Starts a watch. Each call is an independent watch with its own descriptors.
    func updates() -> FileSystemEventStream

    /// Starts a watch whose updates go to `handler` as soon as the source has them, on the
    /// watch's own thread: no buffer and no hand-over to another thread between the kernel and
    /// your code. The returned stream yields no updates; iterate it (or ``FileSystemEventStream/stop()``
    /// it) to wait for the watch to end and to learn why it failed.
    ///
    /// For consumers that do little per update and want the lowest latency: a CLI printing
    /// lines, a bridge into another event loop. The handler runs while the watch waits, so a
    /// slow handler slows the watch, and a kernel queue that overflows meanwhile is recovered
    /// by a rescan, as with a stalled ``updates()`` consumer. The handler must not block on
    /// the stream it belongs to; it may call ``FileSystemEventStream/finish()``.
    ///
    /// A source that does not implement it gets a relay: its ``updates()`` read on a thread of
    /// its own, which calls the handler (one hand-over, the same updates in the same order).
    /// The built-in backends run the handler on their producer thread: conform to
    /// ``ProducerThreadEventSource`` and pass the handler to
    /// ``FileSystemEventStream/init(options:handler:producer:)``.
    func updates(deliveringTo handler: @escaping FileSystemEventHandler) -> FileSystemEventStream
}

/// Receives a watch's updates on the watch's own thread
/// (``FileSystemEventSource/updates(deliveringTo:)``).
public typealias FileSystemEventHandler = @Sendable (FileSystemWatchUpdate) -> Void

extension FileSystemEventSource {
    /// The relay: a thread of its own reads ``updates()`` and calls `handler` with each update,
    /// in order (one hand-over more than a source that runs the handler on its producer thread).
    public func updates(deliveringTo handler: @escaping FileSystemEventHandler) -> FileSystemEventStream {
        FileSystemEventStream(relaying: updates(), to: handler)
    }
}
