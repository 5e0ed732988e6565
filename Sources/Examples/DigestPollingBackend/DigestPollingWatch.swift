import FileSystemEvents
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One running watch of ``DigestPollingEventSource``: the loop on the stream's producer thread.
///
/// The shape every polling backend has: scan, send `ready`, then wait in `poll(2)` on the
/// channel's wake-up descriptor until the next scan or the end of a latency window, and never
/// scan while the consumer is behind (the differences wait in the file system itself, and the
/// next diff reports them all).
struct DigestPollingWatch {
    private let options: WatchOptions
    private let channel: FileSystemEventChannel
    private let clock = MonotonicClock()
    private var batcher: EventBatcher
    private var settle: SettleTracker?
    private var roots: [Root] = []
    private let digestLimit: Int

    private struct Root {
        var snapshot: FileTreeSnapshot
        var digests: ContentDigests
        /// A root that is a single file is watched by name: it may go (`removed`) and come back
        /// (`created`) while its directory stays.
        let isFile: Bool
        var isAbsent = false
        var reportedUnreadable: Set<FilePath> = []
        var reportedFailure: FileSystemEventsError?
    }

    init(options: WatchOptions, digestLimit: Int, channel: FileSystemEventChannel) {
        self.options = options
        self.channel = channel
        self.batcher = EventBatcher(latency: options.latency, bufferLimit: options.bufferLimit)
        // A file is only seen again a poll later: the quiet period is at least one interval.
        self.settle = options.settleQuietPeriod.map { SettleTracker(quietPeriod: max($0, options.pollInterval), usesOpenAndClose: false) }
        self.digestLimit = digestLimit
    }

    mutating func run() {
        channel.send(.scanStarted(roots: options.roots))
        for path in options.roots {
            let snapshot: FileTreeSnapshot
            do {
                snapshot = try FileTreeSnapshot.scan(path, options: options)
            } catch {
                channel.finish(throwing: error)
                return
            }
            var root = Root(snapshot: snapshot, digests: ContentDigests(limit: digestLimit), isFile: snapshot.rootItem.itemType != .directory)
            _ = root.digests.update(from: snapshot, reported: [])
            report(unreadable: snapshot.unreadableDirectories, for: &root)
            roots.append(root)
        }
        if options.capturesInitialState {
            // Snapshots are values: the consumer's copies stay as they are while ours move on.
            channel.setInitialState(roots.map(\.snapshot))
        }
        guard channel.send(.ready(roots: options.roots)) != .terminated else { return }
        if settle != nil {
            let now = clock.now
            for root in roots { batcher.add(settle!.presentAtReady(root.snapshot, at: now), at: now) }
        }

        var nextScan = clock.now.advanced(by: options.pollInterval)
        while !channel.isTerminated {
            if !channel.hasRoom && !channel.isFinishRequested && !channel.requestWakeupWhenRoom() {
                wait(timeout: -1)
                continue
            }
            if channel.isFinishRequested {
                // One last look, so nothing that happened before the request is lost.
                scanAll()
                sendAll()
                channel.finish()
                return
            }
            let now = clock.now
            var wait = now.duration(to: nextScan)
            if let due = batcher.timeUntilDue(at: now) { wait = min(wait, due) }
            if wait > .zero {
                self.wait(timeout: MonotonicClock.pollTimeout(wait))
                if channel.isTerminated { return }
                if channel.isFinishRequested { continue }
            }
            if clock.now >= nextScan {
                scanAll()
                nextScan = clock.now.advanced(by: options.pollInterval)
            }
            while let batch = batcher.takeIfDue(at: clock.now) {
                if channel.send(.events(batch)) == .terminated { return }
            }
            if roots.isEmpty {
                sendAll()
                channel.finish()
                return
            }
        }
    }

    /// Waits for the channel's wake-up (the consumer made room, stopped, or went away) or the
    /// timeout, in milliseconds (-1: none).
    private func wait(timeout: CInt) {
        var descriptor = pollfd(fd: channel.wakeupDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, timeout)  // EINTR: the loop looks again
        channel.drainWakeups()
    }

    private mutating func scanAll() {
        let now = clock.now
        var remaining: [Root] = []
        for var root in roots {
            let path = root.snapshot.root
            if root.isAbsent {
                // A file root that went: back when something stands at its name again.
                guard let snapshot = try? FileTreeSnapshot.scan(path, options: options) else {
                    if !Self.isDirectory(path.removingLastComponent()) { add([rootRemoved(root)], at: now) } else { remaining.append(root) }
                    continue
                }
                root.snapshot = snapshot
                root.isAbsent = false
                _ = root.digests.update(from: snapshot, reported: [])
                add([FileSystemEvent(kind: .created, path: path, itemType: snapshot.rootItem.itemType, isSynthetic: true,
                                     identity: snapshot.rootItem.identity)], at: now)
                remaining.append(root)
                continue
            }
            var events: [FileSystemEvent]
            do {
                events = try root.snapshot.update()
            } catch {
                if case .rootNotFound = error {
                    if root.isFile && Self.isDirectory(path.removingLastComponent()) {
                        root.isAbsent = true
                        add([FileSystemEvent(kind: .removed, path: path, itemType: root.snapshot.rootItem.itemType, isSynthetic: true,
                                             identity: root.snapshot.rootItem.identity)], at: now)
                        remaining.append(root)
                    } else {
                        add([rootRemoved(root)], at: now)
                    }
                    continue
                }
                if root.reportedFailure != error {
                    root.reportedFailure = error
                    send(FileSystemWatchDiagnostic(problem: .unreadableDirectory, path: path, message: error.description))
                }
                remaining.append(root)
                continue
            }
            root.reportedFailure = nil
            if events.contains(where: { $0.kind == .rootRemoved }) {
                // Replaced by another item, or a directory by a file: this watch is over.
                add(events, at: now)
                continue
            }
            let reported = Set(events.lazy.filter { $0.kind == .created || $0.kind == .modified || $0.kind == .renamed }.map(\.path))
            events += root.digests.update(from: root.snapshot, reported: reported, unchanged: events.isEmpty)
            add(events, at: now)
            report(unreadable: root.snapshot.unreadableDirectories, for: &root)
            remaining.append(root)
        }
        roots = remaining
        if settle != nil {
            let settled = settle!.due(at: now)
            if !settled.isEmpty { batcher.add(settled, at: now) }
        }
    }

    /// A scan's events go to the settle tracker first, which puts each `settled` it decides
    /// right after its cause, then into the latency window.
    private mutating func add(_ events: [FileSystemEvent], at now: MonotonicClock.Instant) {
        guard !events.isEmpty else { return }
        if settle != nil {
            batcher.add(settle!.observe(events, at: now), at: now)
        } else {
            batcher.add(events, at: now)
        }
    }

    /// Sends everything held, window by window (none larger than the buffer limit), for the
    /// last delivery of the watch: every window still open is due one latency from now.
    private mutating func sendAll() {
        let end = clock.now.advanced(by: options.latency)
        while let batch = batcher.takeIfDue(at: end) {
            if channel.send(.events(batch)) == .terminated { return }
        }
    }

    private func rootRemoved(_ root: Root) -> FileSystemEvent {
        FileSystemEvent(kind: .rootRemoved, path: root.snapshot.root, itemType: root.snapshot.rootItem.itemType, isSynthetic: true,
                        identity: root.snapshot.rootItem.identity)
    }

    /// Each unreadable directory once, until it can be read again.
    private func report(unreadable: [FilePath], for root: inout Root) {
        let current = Set(unreadable)
        for path in unreadable where !root.reportedUnreadable.contains(path) {
            send(FileSystemWatchDiagnostic(problem: .unreadableDirectory, path: path,
                                           message: "cannot list \(path); its contents are not watched until it becomes readable"))
        }
        root.reportedUnreadable = current
    }

    private func send(_ diagnostic: FileSystemWatchDiagnostic) {
        options.logger?.warning("\(diagnostic.message)")
        channel.send(.diagnostic(diagnostic))
    }

    private static func isDirectory(_ path: FilePath) -> Bool {
        var info = stat()
        return path.withPlatformString { stat($0, &info) } == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
