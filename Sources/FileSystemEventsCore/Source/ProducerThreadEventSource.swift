/// A source whose watch runs on a producer thread of its own (``FileSystemEventStream/init(options:handler:producer:)``),
/// and which can therefore run a handler right there, with no hand-over: it makes its stream
/// once, in ``makeStream(handler:)``, and gets ``FileSystemEventSource/updates()`` and
/// ``FileSystemEventSource/updates(deliveringTo:)`` from it.
///
/// ```swift
/// struct MySource: ProducerThreadEventSource {
///     let options: WatchOptions
///     var backendName: String { "mine" }
///     var capabilities: FileSystemEventSourceCapabilities { ... }
///
///     func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
///         FileSystemEventStream(options: options, handler: handler) { channel in
///             MyWatch(options: options, channel: channel).run()
///         }
///     }
/// }
/// ```
public protocol ProducerThreadEventSource: FileSystemEventSource {
    /// Starts one watch. With a `handler`, every update goes to it on the watch's thread and
    /// the stream only ends (or throws) with the watch; pass it on to
    /// ``FileSystemEventStream/init(options:handler:producer:)``.
    func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream
}

extension ProducerThreadEventSource {
    /// ``makeStream(handler:)`` with no handler: updates wait in the stream's buffer (at most
    /// ``WatchOptions/bufferLimit`` events) for the task that iterates it.
    public func updates() -> FileSystemEventStream {
        makeStream(handler: nil)
    }

    /// The handler runs on the watch's producer thread: no hand-over at all.
    public func updates(deliveringTo handler: @escaping FileSystemEventHandler) -> FileSystemEventStream {
        makeStream(handler: handler)
    }
}
