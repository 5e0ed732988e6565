import SystemPackage

/// The watch loop of an ``AwaitingRootsSource``: one inner watch per root, either of the root
/// itself or, while it is missing, of its nearest existing ancestor; runs on the stream's
/// producer thread, which alone changes this state.
final class AwaitingRootsWatch {
    /// What watches one root now.
    private enum Phase {
        /// Nothing (between an inner watch that ended and the next).
        case none
        /// The root is missing: `ancestor`, its nearest existing ancestor, is watched (its
        /// direct children only) for the next level to appear.
        case ancestor(watch: Int, path: FilePath, isReady: Bool)
        /// The root exists and is watched.
        case root(watch: Int, isReady: Bool)
    }

    private struct InnerWatch {
        let rootIndex: Int
        let isOfRoot: Bool
        let stream: FileSystemEventStream
    }

    private let options: WatchOptions
    private let makeSource: AwaitingRootsSource.SourceFactory
    private let channel: FileSystemEventChannel
    private var phases: [Phase]
    private var watches: [Int: InnerWatch] = [:]
    private var nextWatch = 0
    private var inbox: AwaitingRootsInbox?
    private var hasSentReady = false
    /// Updates of roots watched before `ready`, sent right after it.
    private var heldUntilReady: [FileSystemWatchUpdate] = []
    private var failure: FileSystemEventsError?
    private var isFinishing = false
    /// Per root: whether the consumer has the root (it existed at `ready`, or was reported
    /// created since, and not removed).
    private var rootIsReported: [Bool]
    /// Per root: its type when last seen (for a `removed` this watch has to make up).
    private var rootTypes: [FileItemType]

    init(options: WatchOptions, makeSource: @escaping AwaitingRootsSource.SourceFactory, channel: FileSystemEventChannel) {
        self.options = options
        self.makeSource = makeSource
        self.channel = channel
        self.phases = Array(repeating: .none, count: options.roots.count)
        self.rootIsReported = Array(repeating: false, count: options.roots.count)
        self.rootTypes = Array(repeating: .directory, count: options.roots.count)
    }

    func run() {
        let wakeup: (read: CInt, write: CInt)
        switch Syscalls.pipe() {
        case .success(let pipe): wakeup = pipe
        case .failure(let errno):
            channel.finish(throwing: .systemCallFailed(call: "pipe", path: nil, errno: errno))
            return
        }
        let inbox = AwaitingRootsInbox(capacity: options.bufferLimit, wakeupWriteEnd: wakeup.write)
        self.inbox = inbox
        defer {
            for watch in watches.values { watch.stream.terminate() }
            watches = [:]
            inbox.close()
            inbox.waitForReaders()
            _ = Syscalls.close(wakeup.read)
            _ = Syscalls.close(wakeup.write)
        }

        _ = channel.send(.scanStarted(roots: options.roots))
        for index in options.roots.indices { reconsider(index) }
        while failure == nil && !isReadyEverywhere {
            guard waitAndProcess(wakeup: wakeup.read, inbox: inbox) else { return }
            if isFinishing && watches.isEmpty && failure == nil {
                // Asked to end before every root was ready: nothing more will come.
                channel.finish()
                return
            }
        }
        if let failure {
            channel.finish(throwing: failure)
            return
        }
        if options.capturesInitialState {
            let snapshots = phases.compactMap { phase -> FileTreeSnapshot? in
                guard case .root(let watch, _) = phase else { return nil }
                return watches[watch]?.stream.initialState?.first
            }
            if snapshots.count == phases.count { channel.setInitialState(snapshots) }
        }
        hasSentReady = true
        _ = channel.send(.ready(roots: options.roots))
        for update in heldUntilReady { _ = channel.send(update) }
        heldUntilReady = []
        while true {
            guard waitAndProcess(wakeup: wakeup.read, inbox: inbox) else { return }
            if let failure {
                channel.finish(throwing: failure)
                return
            }
            if isFinishing && watches.isEmpty {
                channel.finish()
                return
            }
        }
    }

    private var isReadyEverywhere: Bool {
        phases.allSatisfy { phase in
            switch phase {
            case .none: return false
            case .ancestor(_, _, let isReady), .root(_, let isReady): return isReady
            }
        }
    }

    /// Waits for messages (or, while the consumer is behind, for room) and acts on them.
    /// Returns `false` once the consumer has gone.
    private func waitAndProcess(wakeup: CInt, inbox: AwaitingRootsInbox) -> Bool {
        let status = channel.producerStatus
        if status.isTerminated { return false }
        if status.isFinishRequested && !isFinishing {
            beginFinishing()
            // Nothing left to hear from (every root was waited for): end now.
            if watches.isEmpty { return true }
        }
        if !status.hasRoom && !channel.requestWakeupWhenRoom() {
            // The consumer is behind: leave the messages in the inbox, whose readers stop
            // reading their streams once it is full.
            _ = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: -1)
            channel.drainWakeups()
            return true
        }
        switch Syscalls.pollReadable(channel.wakeupReadEnd, wakeup, timeoutMilliseconds: -1) {
        case .success(let ready):
            if ready.first { channel.drainWakeups() }
            if ready.second { Syscalls.drainWakeups(wakeup) }
        case .failure(let errno):
            failure = .systemCallFailed(call: "poll", path: nil, errno: errno)
            return true
        }
        if channel.isTerminated { return false }
        for (watch, message) in inbox.takeAll() {
            process(message, from: watch)
            if failure != nil { break }
        }
        return true
    }

    private func beginFinishing() {
        isFinishing = true
        for (id, watch) in watches {
            if watch.isOfRoot {
                watch.stream.finish()
            } else {
                retire(id)
                phases[watch.rootIndex] = .none
            }
        }
    }

    // MARK: Messages

    private func process(_ message: AwaitingRootsInbox.Message, from id: Int) {
        // A retired watch's last words do not count.
        guard let watch = watches[id] else { return }
        let index = watch.rootIndex
        switch message {
        case .update(let update):
            if watch.isOfRoot {
                rootUpdate(update, of: watch, id: id)
            } else if case .ready = update {
                if case .ancestor(id, let path, _) = phases[index] { phases[index] = .ancestor(watch: id, path: path, isReady: true) }
                reconsider(index)
            } else if case .events = update {
                reconsider(index)
            }
        case .ended(let error):
            watches[id] = nil
            phases[index] = .none
            if let error, !Self.meansMissing(error) {
                failure = error
                return
            }
            if watch.isOfRoot && rootIsReported[index] && !isFinishing,
               case .failure = Syscalls.status(options.roots[index], followSymlinks: true)
            {
                // The root's watch ended without saying the root went (it failed to see it
                // go): the consumer still has it, and must not keep it.
                rootIsReported[index] = false
                send(.events([FileSystemEvent(kind: .removed, path: options.roots[index], itemType: rootTypes[index], isSynthetic: true)]))
            }
            if !isFinishing { reconsider(index) }
        }
    }

    private func rootUpdate(_ update: FileSystemWatchUpdate, of watch: InnerWatch, id: Int) {
        switch update {
        case .scanStarted:
            break
        case .ready:
            phases[watch.rootIndex] = .root(watch: id, isReady: true)
            // A root that appeared after `ready`: its crawl becomes `created` events.
            if hasSentReady { send(.events(appearance(of: watch))) }
            rootIsReported[watch.rootIndex] = true
            if let type = watch.stream.initialState?.first?.rootItem.itemType { rootTypes[watch.rootIndex] = type }
        case .events(let events):
            let index = watch.rootIndex
            if rootTypes[index] != .directory,
               let back = events.firstIndex(where: { $0.kind == .created && $0.path == options.roots[index] && $0.itemType == .directory }) {
                // A root watched as a file is back as a directory, which that watch cannot look
                // into: the kernel backends told `created` for the root and nothing of what was
                // made in it, then or later. It is watched anew, as a directory, whose start
                // reports it and its contents (``appearance(of:)``); what the batch said after
                // that is in the new watch's first listing.
                send(.events(followingRootPresence(Array(events[..<back]), of: index)))
                retireWatch(of: index)
                reconsider(index)
                return
            }
            send(.events(followingRootPresence(events, of: index)))
        case .diagnostic:
            send(update)
        }
    }

    private func send(_ update: FileSystemWatchUpdate) {
        if case .events(let events) = update, events.isEmpty { return }
        if hasSentReady {
            _ = channel.send(update)
        } else {
            heldUntilReady.append(update)
        }
    }

    /// The root and everything in it, as `created` events: what a consumer needs to add the
    /// root's tree to its own.
    private func appearance(of watch: InnerWatch) -> [FileSystemEvent] {
        let root = options.roots[watch.rootIndex]
        let snapshot = watch.stream.initialState?.first
            ?? (try? FileTreeSnapshot.scan(root, isRecursive: options.isRecursive, followsSymlinks: options.followsSymlinks, filter: options.filter))
        guard let snapshot else { return [] }
        let timestamp = FileSystemEvent.Timestamp.now()
        return ([snapshot.rootItem] + snapshot.items).map { item in
            FileSystemEvent(kind: .created, path: item.path, itemType: item.itemType, isSynthetic: true, identity: item.identity, timestamp: timestamp)
        }
    }

    /// `events` as this watch reports them: the inner watch's `rootRemoved` becomes a plain
    /// `removed` (this watch goes on, waiting for the root to come back), or nothing if the
    /// consumer was told of the root's removal already (a file root's directory removed
    /// after the file: `removed`, then `rootRemoved`). Keeps track of whether the consumer
    /// has the root.
    private func followingRootPresence(_ events: [FileSystemEvent], of index: Int) -> [FileSystemEvent] {
        let root = options.roots[index]
        var result: [FileSystemEvent] = []
        result.reserveCapacity(events.count)
        for event in events {
            switch event.kind {
            case .rootRemoved:
                guard rootIsReported[index] else { continue }
                rootIsReported[index] = false
                var removed = event
                removed.kind = .removed
                result.append(removed)
                continue
            case .created where event.path == root:
                rootIsReported[index] = true
            case .removed where event.path == root:
                rootIsReported[index] = false
            case .renamed, .exchanged:
                if event.path == root { rootIsReported[index] = true }
                if event.kind == .renamed && event.previousPath == root { rootIsReported[index] = false }
            default:
                break
            }
            result.append(event)
        }
        return result
    }

    private static func meansMissing(_ error: FileSystemEventsError) -> Bool {
        switch error {
        case .rootNotFound, .notADirectory: return true
        default: return false
        }
    }

    // MARK: Choosing what to watch

    /// Looks at the disk and makes root `index` watched the right way: the root itself if it
    /// exists, else its nearest existing ancestor. Called whenever something may have changed
    /// along the path, and once an ancestor's watch is ready (a level made before that
    /// is seen here, not lost).
    private func reconsider(_ index: Int) {
        let root = options.roots[index]
        let existing: FilePath
        switch Self.nearestExisting(root) {
        case .success(let path): existing = path
        case .failure(let error):
            failure = error
            return
        }
        if existing == root {
            if case .root = phases[index] { return }
            retireWatch(of: index)
            var rootOptions = options
            rootOptions.roots = [root]
            rootOptions.waitsForMissingRoots = false
            rootOptions.capturesInitialState = true
            if let id = start(rootOptions, for: index, isOfRoot: true) {
                phases[index] = .root(watch: id, isReady: false)
                return
            }
            guard failure == nil else { return }
            // Gone again before its watch could start: wait in its directory, whose events
            // (or whose watch's `ready`) bring the next look.
            var parent = root
            parent.removeLastComponent()
            guard case .success(let directory) = Self.nearestExisting(parent) else { return }
            watchAncestor(directory, of: index)
        } else {
            watchAncestor(existing, of: index)
        }
    }

    /// Makes `ancestor` (its direct children) the watch of root `index` while it is missing.
    private func watchAncestor(_ ancestor: FilePath, of index: Int) {
        if case .ancestor(_, ancestor, _) = phases[index] { return }
        retireWatch(of: index)
        let ancestorOptions = WatchOptions(
            roots: [ancestor], isRecursive: false, pollInterval: options.pollInterval, bufferLimit: 1024, logger: options.logger
        )
        if let id = start(ancestorOptions, for: index, isOfRoot: false) {
            phases[index] = .ancestor(watch: id, path: ancestor, isReady: false)
        }
    }

    private func start(_ options: WatchOptions, for index: Int, isOfRoot: Bool) -> Int? {
        let source: any FileSystemEventSource
        do throws(FileSystemEventsError) {
            source = try makeSource(options)
        } catch {
            // Gone between the look and the watch: the next look (the ancestor's events, or
            // its `ready`) decides again.
            if !Self.meansMissing(error) { failure = error }
            return nil
        }
        let stream = source.updates()
        nextWatch += 1
        let id = nextWatch
        watches[id] = InnerWatch(rootIndex: index, isOfRoot: isOfRoot, stream: stream)
        guard let inbox, inbox.startReader(of: stream, as: id) else {
            stream.terminate()
            watches[id] = nil
            failure = .systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable)
            return nil
        }
        return id
    }

    private func retireWatch(of index: Int) {
        switch phases[index] {
        case .none: break
        case .ancestor(let id, _, _), .root(let id, _): retire(id)
        }
        phases[index] = .none
    }

    /// Ends an inner watch; its reader finishes on its own, and its messages are ignored.
    private func retire(_ id: Int) {
        watches.removeValue(forKey: id)?.stream.terminate()
    }

    /// `path` if it exists, else its nearest existing ancestor. Symlinks are followed: a root
    /// that is a dangling link is missing (its watch would fail at once, again and again), and
    /// waits in the link's directory, where re-pointing the link is seen. A level that cannot
    /// be searched is a permission error: waiting would never end.
    private static func nearestExisting(_ path: FilePath) -> Result<FilePath, FileSystemEventsError> {
        var candidate = path
        while true {
            switch Syscalls.status(candidate, followSymlinks: true) {
            case .success:
                return .success(candidate)
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory), .failure(.tooManySymbolicLinkLevels):
                guard !candidate.removingRoot().isEmpty else { return .failure(.rootNotFound(path)) }
                candidate.removeLastComponent()
            case .failure(.permissionDenied):
                return .failure(.permissionDenied(candidate, operation: "search"))
            case .failure(let errno):
                return .failure(.systemCallFailed(call: "lstat", path: candidate, errno: errno))
            }
        }
    }
}
