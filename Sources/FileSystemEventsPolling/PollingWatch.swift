import FileSystemEventsCore
import SystemPackage

/// One running polling watch: the producer loop behind ``PollingEventSource``.
struct PollingWatch {
    /// A scan this long holds a large tree. What changed is held twice, the old and the new,
    /// while they are diffed (the rest is shared as the scan goes); the old memory is freed
    /// after the diff but stays with the allocator, so the process's resident size would keep
    /// the peak; it is handed back after such a scan (a few milliseconds for a million entries,
    /// against a scan of seconds).
    static let trimAfterScansOfNanoseconds: UInt64 = 20_000_000

    private let options: WatchOptions
    private let channel: FileSystemEventChannel
    private let scanner: SnapshotScanner
    private var roots: [WatchedRoot] = []
    private var batcher: EventBatcher
    /// Decides `settled` when ``WatchOptions/settleQuietPeriod`` is set: a file is settled once
    /// a scan a quiet period (and at least one interval) after its last change found it
    /// unchanged.
    private var settle: SettleTracker?
    /// Set when a scan ran out of descriptors: what it could not list is unknown, and no later
    /// scan can be trusted to list it either, so the watch ends with the limit to raise.
    private var failure: FileSystemEventsError?

    private struct WatchedRoot {
        let paths: PathBuilder
        var snapshot: RootSnapshot
        /// Directories reported unreadable, so each is reported once until it recovers.
        var reportedUnreadable: Set<[UInt8]> = []
        /// A root that is a file is watched by name, like `tail -F`: it may disappear
        /// (`removed`) and appear again (`created`); the watch ends only with its directory.
        let isFile: Bool
        var isAbsent = false
        /// The root's own failure, reported once until a scan succeeds again (or the failure
        /// changes), as for directories below it.
        var reportedFailure: FileSystemEventsError?
    }

    init(options: WatchOptions, channel: FileSystemEventChannel) {
        self.options = options
        self.channel = channel
        self.scanner = SnapshotScanner(options: options)
        self.batcher = EventBatcher(latency: options.latency, bufferLimit: options.bufferLimit)
        self.settle = options.settleQuietPeriod.map {
            SettleTracker(quietPeriod: max($0, options.pollInterval), usesOpenAndClose: false)
        }
    }

    /// Hands a scan's events to the batcher, and to the settle tracker.
    private mutating func add(_ events: [FileSystemEvent], now: UInt64) {
        guard settle != nil else {
            batcher.add(events, now: now)
            return
        }
        // With the files renamed into place settled right after their renames.
        batcher.add(settle!.observe(events, now: now), now: now)
    }

    /// Hands the regular files of the initial scan to the settle tracker: the finished ones
    /// are settled now, in path order (the scan's order).
    private mutating func settlePresentFiles() {
        guard settle != nil else { return }
        let now = MonotonicClock.nanoseconds()
        var settled: [FileSystemEvent] = []
        for root in roots {
            settled += settle!.presentAtReady(root.snapshot, paths: root.paths, now: now)
        }
        if !settled.isEmpty { batcher.add(settled, now: now) }
    }

    mutating func run() {
        channel.send(.scanStarted(roots: options.roots))
        for root in options.roots {
            do {
                let result = try scanner.scan(root: root, abandoning: { [channel] in channel.isTerminated })
                if result.isAbandoned { return }
                var watched = WatchedRoot(paths: PathBuilder(root: root), snapshot: result.snapshot, isFile: result.snapshot.tree == nil)
                if let shortage = Self.descriptorShortage(in: result.unreadable, paths: watched.paths) {
                    channel.finish(throwing: shortage)
                    return
                }
                report(unreadable: result.unreadable, for: &watched)
                roots.append(watched)
            } catch {
                channel.finish(throwing: error)
                return
            }
        }
        if options.capturesInitialState {
            // The diff consumes old trees: the consumer gets copies.
            channel.setInitialState(roots.map { root in
                FileTreeSnapshot(root: root.paths.root,
                                 snapshot: RootSnapshot(status: root.snapshot.status, tree: root.snapshot.tree?.deepCopy(parent: nil)),
                                 options: options, recordsAttributes: true)
            })
        }
        guard channel.send(.ready(roots: options.roots)) != .terminated else { return }
        settlePresentFiles()

        let interval = options.pollInterval.saturatingNanoseconds
        var nextScan = MonotonicClock.nanoseconds() &+ interval
        while !channel.isTerminated {
            let now = MonotonicClock.nanoseconds()
            if !channel.hasRoom && !channel.isFinishRequested {
                // The consumer is behind: scanning now would only pile up more. Differences
                // accumulate in the file system itself and the next diff reports them all.
                if !channel.requestWakeupWhenRoom() {
                    _ = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: -1)
                    channel.drainWakeups()
                    continue
                }
            }
            if channel.isFinishRequested {
                // One last look, so nothing that happened before the request is lost.
                scanAll(now: now, isFinalLook: true)
                sendHeld()
                channel.finish(throwing: failure)
                return
            }
            var timeout = MonotonicClock.pollTimeout(from: now, until: nextScan)
            let batchDue = batcher.millisecondsUntilDue(now: now)
            if batchDue >= 0 { timeout = min(timeout, batchDue) }
            if timeout > 0 {
                _ = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: timeout)
                channel.drainWakeups()
                if channel.isTerminated { return }
                if channel.isFinishRequested { continue }
            }
            let afterWait = MonotonicClock.nanoseconds()
            if afterWait >= nextScan {
                scanAll(now: afterWait, isFinalLook: false)
                if let failure {
                    sendHeld()
                    channel.finish(throwing: failure)
                    return
                }
                let scanned = MonotonicClock.nanoseconds()
                if scanned &- afterWait >= Self.trimAfterScansOfNanoseconds { MemoryRelease.returnFreedPages() }
                nextScan = MonotonicClock.nanoseconds() &+ interval
            }
            // A window that reached the buffer limit closed early; several may be due at once.
            while let batch = batcher.takeIfDue(now: MonotonicClock.nanoseconds()) {
                if channel.send(.events(batch)) == .terminated { return }
            }
            if roots.isEmpty {
                sendHeld()
                channel.finish()
                return
            }
        }
    }

    /// Scans every root and hands on what changed.
    ///
    /// A scan stops at the next directory once the consumer has gone (nothing of it would be
    /// told) or, unless it is the final look itself, once a stop was asked for: the final look
    /// scans again anyway, and a graceful stop of a million-entry watch then takes one scan,
    /// not the rest of the one under way and another.
    private mutating func scanAll(now: UInt64, isFinalLook: Bool) {
        let abandoning: () -> Bool = { [channel] in
            let status = channel.producerStatus
            return status.isTerminated || (status.isFinishRequested && !isFinalLook)
        }
        var remaining: [WatchedRoot] = []
        for var root in roots {
            let timestamp = FileSystemEvent.Timestamp.now()
            let result: SnapshotScanner.Result
            do {
                // This watch alone holds the previous tree, and diffs against it next: the
                // scan shares what did not change, so the cycle's peak is one tree, not two.
                result = try scanner.scan(root: root.paths.root, sharingWith: root.isAbsent ? nil : root.snapshot,
                                          abandoning: abandoning)
            } catch {
                if case .rootNotFound = error {
                    if root.isFile, case .success(let parent) = Syscalls.status(atPath: root.paths.root.removingLastComponent().bytes, followSymlinks: true),
                       parent.itemType == .directory
                    {
                        if !root.isAbsent {
                            root.isAbsent = true
                            add([FileSystemEvent(kind: .removed, path: root.paths.root, itemType: root.snapshot.status.itemType,
                                                         isSynthetic: true, identity: root.snapshot.status.identity, timestamp: timestamp)], now: now)
                        }
                        remaining.append(root)
                        continue
                    }
                    add([rootRemoved(root, timestamp: timestamp)], now: now)
                    continue
                }
                if root.reportedFailure != error {
                    root.reportedFailure = error
                    send(diagnostic: FileSystemWatchDiagnostic(problem: .unreadableDirectory, path: root.paths.root, message: error.description))
                }
                remaining.append(root)
                continue
            }
            if failure == nil, let shortage = Self.descriptorShortage(in: result.unreadable, paths: root.paths) {
                // What it did list is told (the diff is right for that); what it could not,
                // the watch cannot promise to see, and it ends.
                failure = shortage
            }
            if result.isAbandoned {
                // Nothing of this scan is told. The roots keep their trees, which are whole
                // (what the scan shared with them is equal to what they held), but led up into
                // the dropped scan's directories: led back before the final look diffs them.
                for kept in roots { kept.snapshot.tree?.reattachSubtrees() }
                return
            }
            let old = root.snapshot
            let new = result.snapshot
            if root.isAbsent {
                root.isAbsent = false
                root.snapshot = new
                add([FileSystemEvent(kind: .created, path: root.paths.root, itemType: new.status.itemType,
                                             isSynthetic: true, identity: new.status.identity, timestamp: timestamp)], now: now)
                remaining.append(root)
                continue
            }
            switch SnapshotDiff.rootChange(from: old, to: new, path: root.paths.root, timestamp: timestamp) {
            case .replaced:
                add([rootRemoved(root, timestamp: timestamp)], now: now)
                continue
            case .directory(let oldTree, let newTree):
                let reportsTimes = options.reportsDirectoryContentChanges
                var events = SnapshotDiff.events(ofRootDirectory: old.status, to: new.status, root: root.paths, timestamp: timestamp,
                                                 reportsDirectoryTimes: reportsTimes)
                events += SnapshotDiff.events(from: oldTree, to: newTree, root: root.paths, timestamp: timestamp,
                                              reportsDirectoryTimes: reportsTimes)
                add(events, now: now)
            case .file(let events):
                add(events, now: now)
            }
            root.snapshot = new
            root.reportedFailure = nil
            report(unreadable: result.unreadable, for: &root)
            remaining.append(root)
        }
        roots = remaining
        if settle != nil {
            let settled = settle!.due(now: now)
            if !settled.isEmpty { batcher.add(settled, now: now) }
        }
    }

    /// Sends everything held, window by window, for a final flush.
    private mutating func sendHeld() {
        while let batch = batcher.takeIfDue(now: .max) {
            if channel.send(.events(batch)) == .terminated { return }
        }
    }

    private func rootRemoved(_ root: WatchedRoot, timestamp: FileSystemEvent.Timestamp) -> FileSystemEvent {
        FileSystemEvent(
            kind: .rootRemoved,
            path: root.paths.root,
            itemType: root.snapshot.status.itemType,
            isSynthetic: true,
            identity: root.snapshot.status.identity,
            timestamp: timestamp
        )
    }

    /// The error for a directory a scan could not open for want of a descriptor, if any.
    /// Reported as unreadable, it was left unwatched while the watch went on: under a fixed
    /// limit (`prlimit --nofile=16`, or a chain of directories deeper than the limit allows),
    /// for good, and nothing said but a warning.
    private static func descriptorShortage(in unreadable: [(relativePath: [UInt8], errno: Errno)], paths: PathBuilder) -> FileSystemEventsError? {
        guard let (relativePath, errno) = unreadable.first(where: { FileSystemEventsError.isDescriptorShortage($0.errno) }) else { return nil }
        return .systemCallFailed(call: "open", path: paths.path(relativePath), errno: errno)
    }

    private func report(unreadable: [(relativePath: [UInt8], errno: Errno)], for root: inout WatchedRoot) {
        var current: Set<[UInt8]> = []
        for (relativePath, errno) in unreadable {
            current.insert(relativePath)
            if root.reportedUnreadable.contains(relativePath) { continue }
            let path = root.paths.path(relativePath)
            send(
                diagnostic: FileSystemWatchDiagnostic(
                    problem: .unreadableDirectory,
                    path: path,
                    errno: errno,
                    message: "cannot list \(path) (\(errno)); its contents are not watched until it becomes readable"
                )
            )
        }
        root.reportedUnreadable = current
    }

    private func send(diagnostic: FileSystemWatchDiagnostic) {
        options.logger?.warning("\(diagnostic.message)")
        channel.send(.diagnostic(diagnostic))
    }
}
