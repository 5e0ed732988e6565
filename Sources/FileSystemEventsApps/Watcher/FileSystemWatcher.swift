public import FileSystemEventsCore
import Synchronization
public import SystemPackage

/// One watch of a tree, shared by any number of subscribers in the process.
///
/// Every ``FileSystemEventSource/updates()`` call is an independent watch: its own inotify
/// instance, one kernel watch per directory, its own crawl and model. An app that shows three
/// views of one folder, follows a log in it and waits for uploads in a subfolder would pay for
/// the tree five times, and run into `fs.inotify.max_user_instances` (128 by default). A
/// watcher pays once: one source per watcher, started by the first subscription and stopped
/// (its descriptors closed) when the last one ends.
///
/// A subscription (``subscribe(to:filter:isRecursive:latency:bufferLimit:followsRenames:capturesInitialState:)``)
/// has the contract of a source's stream: `scanStarted`, `ready`, events that obey the replay
/// invariant for the subscribed subtree, diagnostics. Its `ready` comes from the watcher's
/// own copy of the tree, at once, with no crawl; each has its own latency window and buffer
/// limit, and one that falls behind gets `overflow` and reconciling events alone while the
/// others carry on. ``source(for:)`` wraps a subscription as a ``FileSystemEventSource``, so
/// everything built on that protocol (listings, followers) shares the watch too.
public final class FileSystemWatcher: Sendable {
    /// The source's options: the roots watched, recursion and symlinks for the whole tree.
    public let options: WatchOptions
    private let makeSource: @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource
    private let current = Mutex<SharedWatch?>(nil)

    /// - Parameters:
    ///   - options: what the shared source watches. Its filter, latency and buffer limit are
    ///     the source's; each subscription has its own on top.
    ///   - makeSource: makes the backend's source (see `FileSystemEventBackend.makeSource`).
    public init(
        options: WatchOptions,
        makeSource: @escaping @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource
    ) {
        var options = options
        options.capturesInitialState = true
        self.options = options
        self.makeSource = makeSource
    }

    /// Subscribes to `subtrees` (the watched roots when empty), which must lie within the
    /// watched roots.
    ///
    /// - Parameters:
    ///   - subtrees: absolute paths (or relative to the working directory) inside the roots.
    ///   - filter: applied to paths relative to each subscribed subtree.
    ///   - isRecursive: whole subtrees, or only the subscribed directories' children.
    ///   - latency: this subscription's own window for gathering events.
    ///   - bufferLimit: events this subscription buffers before it falls behind alone (it then
    ///     gets `overflow` and reconciling events from the shared model).
    ///   - followsRenames: a subscribed directory that is renamed is followed (later events
    ///     use its new path); without it, a rename away ends it with `rootRemoved`, as a
    ///     source's root does.
    ///   - capturesInitialState: hand the subscribed subtrees at `ready` to the stream's
    ///     ``FileSystemEventStream/initialState``.
    public func subscribe(
        to subtrees: [FilePath] = [],
        filter: PathFilter = .everything,
        isRecursive: Bool = true,
        latency: Duration = .zero,
        bufferLimit: Int = 65_536,
        followsRenames: Bool = true,
        capturesInitialState: Bool = false
    ) -> FileSystemEventStream {
        subscribe(to: subtrees, filter: filter, isRecursive: isRecursive, latency: latency, bufferLimit: bufferLimit,
                  followsRenames: followsRenames, capturesInitialState: capturesInitialState, handler: nil)
    }

    /// ``subscribe(to:filter:isRecursive:latency:bufferLimit:followsRenames:capturesInitialState:)``
    /// with the updates handed to `handler` on the subscription's thread
    /// (``FileSystemEventSource/updates(deliveringTo:)``).
    func subscribe(
        to subtrees: [FilePath], filter: PathFilter, isRecursive: Bool, latency: Duration, bufferLimit: Int,
        followsRenames: Bool, capturesInitialState: Bool, reportsDirectoryContentChanges: Bool = false,
        handler: FileSystemEventHandler?
    ) -> FileSystemEventStream {
        let subscription: WatchSubscription
        do {
            subscription = try makeSubscription(subtrees, filter: filter, isRecursive: isRecursive, latency: latency,
                                                bufferLimit: bufferLimit, followsRenames: followsRenames,
                                                capturesInitialState: capturesInitialState,
                                                reportsDirectoryContentChanges: reportsDirectoryContentChanges)
        } catch {
            return FileSystemEventStream(bufferLimit: 1) { channel in channel.finish(throwing: error) }
        }
        let watch: SharedWatch
        do {
            watch = try attach(subscription)
        } catch {
            return FileSystemEventStream(bufferLimit: 1) { channel in channel.finish(throwing: error) }
        }
        return FileSystemEventStream(bufferLimit: subscription.bufferLimit, handler: handler) { channel in
            subscription.run(channel: channel, watch: watch)
        }
    }

    /// A source whose every ``FileSystemEventSource/updates()`` is a subscription of this
    /// watcher to `options.roots`, with that subscription's filter, recursion, latency and
    /// buffer limit.
    ///
    /// `settled` events come from the shared source, with the watcher's quiet period: the
    /// source's ``FileSystemEventSource/options`` say so (``WatchOptions/settleQuietPeriod``
    /// is the watcher's, whatever `options` asked for).
    public func source(for options: WatchOptions) -> some FileSystemEventSource {
        var options = options
        options.settleQuietPeriod = self.options.settleQuietPeriod
        return SharedWatchSource(watcher: self, options: options)
    }

    /// How many subscriptions are running (for tests and diagnostics).
    public var subscriptionCount: Int {
        current.withLock { $0?.subscriptionCount ?? 0 }
    }

    /// The capabilities of the backend's source while a watch runs, else `nil`.
    var runningSourceCapabilities: FileSystemEventSourceCapabilities? {
        current.withLock { $0?.sourceCapabilities }
    }

    // MARK: Internals

    private func makeSubscription(
        _ subtrees: [FilePath], filter: PathFilter, isRecursive: Bool, latency: Duration, bufferLimit: Int,
        followsRenames: Bool, capturesInitialState: Bool, reportsDirectoryContentChanges: Bool
    ) throws(FileSystemEventsError) -> WatchSubscription {
        guard !options.roots.isEmpty else { throw .invalidOptions("a watcher needs at least one root to watch") }
        let builders = options.roots.map(PathBuilder.init(root:))
        var roots: [SubscriptionScope.Root] = []
        for subtree in subtrees.isEmpty ? options.roots : subtrees.map(WatchOptions.absolute) {
            guard let (index, relative) = builders.enumerated().lazy.compactMap({ index, builder in
                builder.relative(subtree).map { (index, $0) }
            }).first else {
                throw .invalidOptions("cannot subscribe to \(subtree): it is not inside the watched roots (\(options.roots.map(\.string).joined(separator: ", "))); make the watcher watch a tree that contains it")
            }
            roots.append(SubscriptionScope.Root(watcherRoot: index, relative: relative, path: subtree, isFile: false))
        }
        var scope = SubscriptionScope(roots: roots, filter: filter, isRecursive: isRecursive, followsRenames: followsRenames)
        scope.reportsDirectoryContentChanges = reportsDirectoryContentChanges
        return try WatchSubscription(scope: scope, bufferLimit: bufferLimit, latency: latency, capturesInitialState: capturesInitialState)
    }

    /// Adds `subscription` to the running shared watch, starting one if there is none.
    private func attach(_ subscription: WatchSubscription) throws(FileSystemEventsError) -> SharedWatch {
        let result = current.withLock { current -> Result<SharedWatch, FileSystemEventsError> in
            if let watch = current, watch.add(subscription) { return .success(watch) }
            let source: any FileSystemEventSource
            // Directories whose entries changed are always reported to the shared model, for
            // the subscriptions that ask (a listing shows directories' times); the others
            // never see them.
            var sourceOptions = options
            sourceOptions.reportsDirectoryContentChanges = true
            do throws(FileSystemEventsError) {
                source = try makeSource(sourceOptions)
            } catch {
                return .failure(error)
            }
            let watch = SharedWatch(source: source) { [weak self] idle in
                self?.current.withLock { current in
                    if current === idle { current = nil }
                }
            }
            current = watch
            _ = watch.add(subscription)
            return .success(watch)
        }
        return try result.get()
    }
}

/// A ``FileSystemWatcher`` subscription as a ``FileSystemEventSource``.
struct SharedWatchSource: FileSystemEventSource {
    let watcher: FileSystemWatcher
    let options: WatchOptions

    var backendName: String { "shared" }

    /// How the backend finds changes, once the shared watch runs: a subscription over polling
    /// scans (and sees remote changes) as its backend does, and hands a stalled subscriber
    /// whole scans. It can always overflow (a subscriber that falls behind alone is told so)
    /// and pairs renames (the shared model does). It settles on the last close where the
    /// backend does: a subscription hands on the backend's own `settled`, and a file moved
    /// across the subscription's boundary inside the shared watch is settled as one moved in
    /// from outside is. Before any watch runs, an event-driven backend is assumed.
    var capabilities: FileSystemEventSourceCapabilities {
        let backend = watcher.runningSourceCapabilities
        return FileSystemEventSourceCapabilities(
            isEventDriven: backend?.isEventDriven ?? true, pairsRenames: true,
            needsPollInterval: backend?.needsPollInterval ?? false, canOverflow: true,
            usesPerDirectoryWatches: backend?.usesPerDirectoryWatches ?? false,
            seesRemoteChanges: backend?.seesRemoteChanges ?? false, seesOpenDescriptors: backend?.seesOpenDescriptors ?? false
        )
    }

    func updates() -> FileSystemEventStream {
        subscribe(handler: nil)
    }

    func updates(deliveringTo handler: @escaping FileSystemEventHandler) -> FileSystemEventStream {
        subscribe(handler: handler)
    }

    private func subscribe(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        watcher.subscribe(
            to: options.roots, filter: options.filter, isRecursive: options.isRecursive, latency: options.latency,
            bufferLimit: options.bufferLimit, followsRenames: false, capturesInitialState: options.capturesInitialState,
            reportsDirectoryContentChanges: options.reportsDirectoryContentChanges, handler: handler
        )
    }
}
