/// A source whose roots need not exist yet: a missing root is waited for and picked up when it
/// appears, and a root that goes away is waited for again, instead of the watch failing with
/// ``FileSystemEventsError/rootNotFound(_:)`` or ending with `rootRemoved`
/// (``WatchOptions/waitsForMissingRoots``).
///
/// It is built on the protocol alone, so it works over any backend. While a root is missing it
/// watches the nearest existing ancestor, not recursively, moving down as each level of the
/// path appears (one kernel watch, not a watch of the whole ancestor's tree). When the root
/// appears, a watch of the root starts, and its crawl is reported as synthetic `created`
/// events (the root first, then every level), so a consumer that replays the events has the
/// root's tree. When the root goes, it gets `removed` for the root (not `rootRemoved`: the
/// watch goes on), and the waiting starts again.
///
/// The replay invariant holds with a missing root counting as an empty tree: the tree at
/// `ready` lacks it, the `created` events add it with its contents, `removed` takes it away.
/// ``FileSystemEventStream/initialState`` is delivered only when every root existed at `ready`.
public struct AwaitingRootsSource: ProducerThreadEventSource {
    /// Makes the source that watches one root or ancestor (the options have one root, and
    /// ``WatchOptions/waitsForMissingRoots`` off).
    public typealias SourceFactory = @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource

    /// The roots to watch, existing or not, and how.
    public let options: WatchOptions
    /// The name of the backend that `makeSource` makes, as given to the initialiser.
    public let backendName: String
    /// That backend's capabilities, as given to the initialiser.
    public let capabilities: FileSystemEventSourceCapabilities
    private let makeSource: SourceFactory

    /// - Parameters:
    ///   - options: the roots to watch, existing or not, and how.
    ///   - backendName: the name of the backend `makeSource` makes.
    ///   - capabilities: that backend's capabilities.
    ///   - makeSource: makes the source of one root or ancestor.
    public init(options: WatchOptions, backendName: String, capabilities: FileSystemEventSourceCapabilities, makeSource: @escaping SourceFactory) {
        self.options = options
        self.backendName = backendName
        self.capabilities = capabilities
        self.makeSource = makeSource
    }


    /// Starts one watch: on its producer thread, it starts an inner watch of each root that
    /// exists, and of the nearest existing ancestor of each root that does not.
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let options = self.options
        let makeSource = self.makeSource
        return FileSystemEventStream(options: options, handler: handler) { channel in
            AwaitingRootsWatch(options: options, makeSource: makeSource, channel: channel).run()
        }
    }
}
