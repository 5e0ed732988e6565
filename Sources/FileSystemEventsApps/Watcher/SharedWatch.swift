import Dispatch
import FileSystemEventsCore
import Synchronization
import SystemPackage

/// One running source shared by every subscription of a ``FileSystemWatcher``, and the live
/// tree it keeps.
///
/// A dispatcher thread reads the source, applies each event to the ``LiveTree`` of its root,
/// and hands each subscription what it sees of it, all under one lock, so that a subscription
/// made at any moment starts from a copy of the tree that the very next event applies to.
final class SharedWatch: Sendable {
    struct State: ~Copyable {
        var trees: [LiveTree]?
        var subscriptions: [ObjectIdentifier: WatchSubscription] = [:]
        var failure: FileSystemEventsError?
        var isEnded = false
        /// Set when the last subscription left: this watch takes no more.
        var isStopping = false
        /// With settling on: the files written since they were last settled (and, until the
        /// source's own `settled` for them arrives, the files present at `ready`). A
        /// subscription made later is told at its `ready` that every other file in its
        /// subtrees is settled, as a source of its own would tell it.
        var unsettled: Set<FileIdentity> = []
    }

    let roots: [FilePath]
    private let rootPaths: [PathBuilder]
    /// The source reports `settled` (``WatchOptions/settleQuietPeriod``).
    private let settles: Bool
    /// What the backend's source can do, which its subscriptions report as theirs.
    let sourceCapabilities: FileSystemEventSourceCapabilities
    /// The source's batches are in the order things happened (an event-driven source), so a
    /// subscription may be cut off in the middle of one; see ``apply(_:)``.
    private var batchesAreTimeOrdered: Bool { sourceCapabilities.isEventDriven }
    private let state = Mutex(State())
    private let stream: FileSystemEventStream
    private let dispatcherDone = DispatchSemaphore(value: 0)
    /// Called once the last subscription has left (the watcher forgets this watch).
    private let onIdle: @Sendable (SharedWatch) -> Void

    init(source: any FileSystemEventSource, onIdle: @escaping @Sendable (SharedWatch) -> Void) {
        self.roots = source.options.roots
        self.rootPaths = source.options.roots.map(PathBuilder.init(root:))
        self.settles = source.options.settleQuietPeriod != nil
        self.sourceCapabilities = source.capabilities
        self.onIdle = onIdle
        self.stream = source.updates()
        let started = ProducerThread.start { [self] in
            dispatch()
            dispatcherDone.signal()
        }
        if !started {
            state.withLock { $0.failure = .systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable) }
            dispatcherDone.signal()
        }
    }

    // MARK: Subscriptions

    /// Registers `subscription`; it starts from the current tree (at once, if the source is
    /// ready already) and receives every event applied after that. Returns `false` if this
    /// watch is stopping (its last subscription has just left).
    func add(_ subscription: WatchSubscription) -> Bool {
        let added = state.withLock { state -> Bool in
            guard !state.isStopping else { return false }
            state.subscriptions[ObjectIdentifier(subscription)] = subscription
            if let failure = state.failure {
                subscription.inbox.withLock { $0.failure = failure }
            } else if state.isEnded {
                subscription.inbox.withLock { $0.isEnded = true }
            } else if let trees = state.trees {
                Self.start(subscription, trees: trees, settledExcept: settles ? state.unsettled : nil)
            }
            return true
        }
        if added { subscription.signal() }
        return added
    }

    /// Called by a subscription's thread as it leaves. The last one out stops the source and
    /// waits until its descriptors are closed.
    func remove(_ subscription: WatchSubscription) {
        let isLast = state.withLock { state -> Bool in
            state.subscriptions[ObjectIdentifier(subscription)] = nil
            if state.subscriptions.isEmpty { state.isStopping = true }
            return state.isStopping && state.subscriptions.isEmpty
        }
        guard isLast else { return }
        onIdle(self)
        stop()
    }

    /// Ends the source and waits for the dispatcher (and so the source) to finish.
    func stop() {
        stream.terminate()
        dispatcherDone.wait()
        dispatcherDone.signal()  // for any other waiter
    }

    var subscriptionCount: Int { state.withLock { $0.subscriptions.count } }

    /// For a subscription that fell behind and has caught up: `overflow`, then the events from
    /// what it had been told to the tree as it is now. It receives every event after this.
    func reconcile(_ subscription: WatchSubscription) -> [FileSystemEvent] {
        state.withLock { state in
            guard let trees = state.trees else { return [] }
            return subscription.inbox.withLock { inbox -> [FileSystemEvent] in
                // What it was told before it fell behind goes first: the difference starts
                // where those events end, and delivered after it they would undo it.
                guard let stalled = inbox.stalledAt, inbox.events.isEmpty else { return [] }
                inbox.stalledAt = nil
                var events: [FileSystemEvent] = []
                for (index, root) in inbox.scope.roots.enumerated() where !root.isRemoved {
                    events.append(FileSystemEvent(kind: .overflow, path: root.path, itemType: root.isFile ? .file : .directory, isSynthetic: false))
                    let now = inbox.scope.view(of: trees[root.watcherRoot], root: index)
                    switch (stalled.views[index], now) {
                    case (let before?, let after?):
                        if let old = before.tree, let new = after.tree {
                            events += SnapshotDiff.events(from: old, to: new, root: PathBuilder(root: root.path))
                        } else {
                            events += SnapshotDiff.events(fromFile: before.status, to: after.status, path: root.path)
                        }
                    case (_?, nil):
                        inbox.scope.roots[index].isRemoved = true
                        events.append(FileSystemEvent(kind: .rootRemoved, path: root.path, itemType: root.isFile ? .file : .directory, isSynthetic: true))
                    default:
                        break
                    }
                }
                // The difference says what changed, not which of the files settled since: those
                // written while it was behind (created or modified in the difference) and those
                // still being written when it fell behind, settled by now, are told so after it,
                // so that no `settled` is lost to its overflow.
                if settles {
                    var told = Set<FilePath>()
                    var settled: [FileSystemEvent] = []
                    for event in events where (event.kind == .created || event.kind == .modified) && event.itemType == .file {
                        guard let identity = event.identity, !state.unsettled.contains(identity), told.insert(event.path).inserted else { continue }
                        settled.append(FileSystemEvent(kind: .settled, path: event.path, itemType: .file, isSynthetic: false, identity: identity))
                    }
                    let settledMeanwhile = stalled.unsettled.subtracting(state.unsettled)
                    if !settledMeanwhile.isEmpty {
                        // A fresh view: the difference above re-links what it was given.
                        for (index, root) in inbox.scope.roots.enumerated() where !root.isRemoved {
                            guard let directory = inbox.scope.view(of: trees[root.watcherRoot], root: index)?.tree else { continue }
                            let paths = PathBuilder(root: root.path)
                            directory.forEachItem { relative, entry in
                                guard entry.status.itemType == .file, settledMeanwhile.contains(entry.status.identity) else { return }
                                let path = paths.path(relative)
                                guard told.insert(path).inserted else { return }
                                settled.append(FileSystemEvent(kind: .settled, path: path, itemType: .file, isSynthetic: false, identity: entry.status.identity))
                            }
                        }
                    }
                    events += settled
                }
                if inbox.scope.isEnded { inbox.isEnded = true }
                return events
            }
        }
    }

    /// Hands `subscription` its starting state (a filtered copy of its subtrees).
    ///
    /// - Parameter settledExcept: for a subscription made after the source settled its files
    ///   present at `ready`: every regular file in its subtrees except these is settled, and
    ///   it is told so right after its `ready`.
    private static func start(_ subscription: WatchSubscription, trees: [LiveTree], settledExcept unsettled: Set<FileIdentity>?) {
        subscription.inbox.withLock { inbox in
            var snapshots: [FileTreeSnapshot] = []
            var settled: [FileSystemEvent] = []
            for (index, root) in inbox.scope.roots.enumerated() {
                guard let view = inbox.scope.view(of: trees[root.watcherRoot], root: index) else {
                    inbox.failure = .rootNotFound(root.path)
                    return
                }
                if view.tree == nil { inbox.scope.roots[index].isFile = true }
                snapshots.append(FileTreeSnapshot(root: root.path, snapshot: view, options: WatchOptions(roots: [root.path]), recordsAttributes: false))
                if let unsettled {
                    settled += settledFiles(in: view, at: root.path, except: unsettled)
                }
            }
            inbox.initialState = snapshots
            inbox.events += settled
        }
    }

    /// `settled` for the regular files of `view` whose identity is not in `unsettled`.
    private static func settledFiles(in view: RootSnapshot, at root: FilePath, except unsettled: Set<FileIdentity>) -> [FileSystemEvent] {
        func settled(_ path: FilePath, _ status: FileStatus) -> FileSystemEvent? {
            guard status.itemType == .file, !unsettled.contains(status.identity) else { return nil }
            return FileSystemEvent(kind: .settled, path: path, itemType: .file, isSynthetic: true, identity: status.identity)
        }
        guard let tree = view.tree else { return settled(root, view.status).map { [$0] } ?? [] }
        let paths = PathBuilder(root: root)
        var events: [FileSystemEvent] = []
        tree.forEachItem { relative, entry in
            if let event = settled(paths.path(relative), entry.status) { events.append(event) }
        }
        return events
    }

    /// Keeps ``State/unsettled`` up to date with one event of the source.
    private static func track(_ event: FileSystemEvent, unsettled: inout Set<FileIdentity>) {
        guard event.itemType == .file, let identity = event.identity else { return }
        switch event.kind {
        case .created, .modified: unsettled.insert(identity)
        case .settled, .removed: unsettled.remove(identity)
        default: break
        }
    }

    // MARK: The dispatcher

    private func dispatch() {
        var iterator = stream.makeBlockingIterator()
        var failure: FileSystemEventsError?
        do {
            while let update = try iterator.next() {
                switch update {
                case .scanStarted:
                    continue
                case .ready:
                    becomeReady(stream.initialState)
                case .events(let events):
                    apply(events)
                case .diagnostic(let diagnostic):
                    forward(diagnostic)
                }
            }
        } catch {
            failure = error
        }
        let subscriptions = state.withLock { state -> [WatchSubscription] in
            state.isEnded = true
            state.failure = failure
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions {
            subscription.inbox.withLock { inbox in
                if let failure { inbox.failure = failure } else { inbox.isEnded = true }
            }
            subscription.signal()
        }
    }

    private func becomeReady(_ initial: [FileTreeSnapshot]?) {
        var trees: [LiveTree] = []
        for (index, root) in roots.enumerated() {
            if let initial, index < initial.count {
                // A private copy: the snapshot handed over may be read by others.
                let snapshot = initial[index].rootSnapshot
                trees.append(LiveTree(root: root, snapshot: RootSnapshot(status: snapshot.status, tree: snapshot.tree?.deepCopy(parent: nil))))
            } else if let scanned = try? FileTreeSnapshot.scan(root) {
                // A backend that hands over no state: the best that can be done is a walk now.
                trees.append(LiveTree(root: root, snapshot: scanned.rootSnapshot))
            } else {
                trees.append(LiveTree(root: root, snapshot: RootSnapshot(status: FileStatus(device: 0, inode: 0, mode: 0o040000), tree: SnapshotDirectory(parent: nil, name: []))))
            }
        }
        var unsettled: Set<FileIdentity> = []
        if settles {
            // Until the source says otherwise (its `settled` for the files present at `ready`
            // follows), every file may still be being written.
            for tree in trees {
                if let directory = tree.snapshot.tree {
                    directory.forEachItem { _, entry in
                        if entry.status.itemType == .file { unsettled.insert(entry.status.identity) }
                    }
                } else if tree.snapshot.status.itemType == .file {
                    unsettled.insert(tree.snapshot.status.identity)
                }
            }
        }
        let subscriptions = state.withLock { state -> [WatchSubscription] in
            state.trees = trees
            state.unsettled = unsettled
            // These subscriptions start with the source: its own `settled` events reach them.
            for subscription in state.subscriptions.values { Self.start(subscription, trees: trees, settledExcept: nil) }
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions { subscription.signal() }
    }

    private func apply(_ events: [FileSystemEvent]) {
        let woken = state.withLock { state -> [WatchSubscription] in
            guard var trees = state.trees else { return [] }
            let subscriptions = Array(state.subscriptions.values)
            // A subscriber at its buffer limit stops receiving: it keeps what it was told so
            // far, and is reconciled (`overflow`, then the difference) once it has caught up.
            // The limit is checked before each batch and, where the batch is in the order
            // things happened, before each event of it. A scan's batch (polling, or the
            // reconciliation after an overflow) is one consistent look at the tree, ordered by
            // path, not by time: cut at the limit, its first part described no tree that ever
            // was, and a subscriber that saw its own marker file in it took the rest for
            // already told. Such a batch is never cut, and an inbox then holds at most the
            // limit plus one batch of the source. An event-driven source's batch, which can
            // hold its whole buffer limit (a burst read while the kernel had more), is cut at
            // the subscriber's limit, so a stalled subscriber holds no more than it asked for,
            // but never before its last synthetic event (a `settled` aside): a rescan's
            // corrections (a move the model missed, looked at once the queue drained) come
            // after events read before them, yet tell of changes made earlier, such as before
            // a marker file among those events. Cut between the two, a subscriber was told the
            // marker with a tree that never was (scenario 99 through a subscription).
            let cutsWithinBatch = batchesAreTimeOrdered && !events.contains { $0.kind == .overflow }
            let firstCuttable = cutsWithinBatch
                ? (events.lastIndex { $0.isSynthetic && $0.kind != .settled }.map { $0 + 1 } ?? 0) : events.count
            var skipped: [Bool] = []
            var queued: [Int] = []
            for subscription in subscriptions {
                let (isSkipped, count) = subscription.inbox.withLock { inbox -> (Bool, Int) in
                    (inbox.stalledAt != nil || inbox.isEnded || inbox.isClosed, inbox.events.count)
                }
                skipped.append(isSkipped)
                queued.append(count)
            }
            var stalledViews = [WatchSubscription.StalledState?](repeating: nil, count: subscriptions.count)
            var outputs = [[FileSystemEvent]](repeating: [], count: subscriptions.count)
            var scopes = subscriptions.map { subscription in subscription.inbox.withLock { $0.scope } }
            for index in subscriptions.indices where !skipped[index] && queued[index] >= subscriptions[index].bufferLimit {
                // What it has been told is the tree as it stands before this batch.
                // Marked stalled below, under the inbox's lock, in one step with its events.
                stalledViews[index] = Self.stalledState(of: scopes[index], trees: trees, unsettled: state.unsettled)
                skipped[index] = true
            }
            for (position, event) in events.enumerated() {
                if position >= firstCuttable {
                    for index in subscriptions.indices where !skipped[index] && !scopes[index].isEnded
                        && queued[index] + outputs[index].count >= subscriptions[index].bufferLimit {
                        // What it has been told is the tree as it stands before this event.
                        stalledViews[index] = Self.stalledState(of: scopes[index], trees: trees, unsettled: state.unsettled)
                        skipped[index] = true
                    }
                }
                let (rootIndex, relative) = locate(event.path)
                let previous = event.previousPath.flatMap { path in rootIndex.flatMap { rootPaths[$0].relative(path) } }
                if let rootIndex { trees[rootIndex].apply(event, relative: relative, previous: previous) }
                if settles { Self.track(event, unsettled: &state.unsettled) }
                for index in subscriptions.indices where !skipped[index] {
                    if let rootIndex {
                        scopes[index].translate(event, relative: relative, previous: previous, watcherRoot: rootIndex, tree: trees[rootIndex], into: &outputs[index])
                    } else if event.kind == .overflow {
                        for watcherRoot in roots.indices {
                            scopes[index].translate(event, relative: nil, previous: nil, watcherRoot: watcherRoot, tree: trees[watcherRoot], into: &outputs[index])
                        }
                    }
                }
            }
            state.trees = trees
            var woken: [WatchSubscription] = []
            for (index, subscription) in subscriptions.enumerated() where !skipped[index] || stalledViews[index] != nil {
                let scope = scopes[index]
                let output = outputs[index]
                let stalled = stalledViews[index]
                subscription.inbox.withLock { inbox in
                    inbox.scope = scope
                    inbox.events += output
                    if let stalled { inbox.stalledAt = stalled }
                    if scope.isEnded { inbox.isEnded = true }
                }
                if !output.isEmpty || scope.isEnded || stalled != nil { woken.append(subscription) }
            }
            return woken
        }
        for subscription in woken { subscription.signal() }
    }

    /// What a subscriber that falls behind now has been told: its view of `trees`, and the
    /// files still being written.
    private static func stalledState(of scope: SubscriptionScope, trees: [LiveTree], unsettled: Set<FileIdentity>) -> WatchSubscription.StalledState {
        let views = scope.roots.indices.map { scope.view(of: trees[scope.roots[$0].watcherRoot], root: $0) }
        return WatchSubscription.StalledState(views: views, unsettled: unsettled)
    }

    /// Which root holds `path`, and the path relative to it.
    private func locate(_ path: FilePath) -> (Int?, [UInt8]?) {
        for (index, paths) in rootPaths.enumerated() {
            if let relative = paths.relative(path) { return (index, relative) }
        }
        return (nil, nil)
    }

    private func forward(_ diagnostic: FileSystemWatchDiagnostic) {
        let subscriptions = state.withLock { Array($0.subscriptions.values) }
        for subscription in subscriptions {
            subscription.inbox.withLock { $0.diagnostics.append(diagnostic) }
            subscription.signal()
        }
    }
}
