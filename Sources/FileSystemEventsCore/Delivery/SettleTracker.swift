public import SystemPackage
import HeapModule

/// Decides when a regular file has finished being written, for ``FileSystemEvent/Kind/settled``.
///
/// Every heuristic in use elsewhere (a modification date equal to "now", a size unchanged for
/// two seconds, a quiet period over the whole tree) is a guess that a slow writer defeats. A
/// kernel backend can do better: inotify reports each write and each close of a descriptor
/// that was open for writing (`IN_MODIFY`, `IN_CLOSE_WRITE`), so the tracker knows a writer
/// is at work from its first write until it closes, and settles a file only once it closed and
/// the quiet period passed with no further write. (`IN_OPEN` is not used: every directory
/// listing, the watcher's own included, would queue one, and a reader's open says nothing
/// about writing.) A backend without these events
/// events (polling) feeds only the changes it saw; the tracker then settles a file once it has
/// been unchanged for the quiet period, checked by a scan that found it unchanged.
///
/// State is kept only for files with a write session in progress, so the memory is proportional
/// to the files being written, not to the tree, and so is no step's time: the sessions that may
/// settle are kept by deadline (``due(now:)`` and ``nextDeadlineNanoseconds`` look at the
/// first), and a removal or rename looks through the sessions only when some are below it.
/// Looking through all of them on every wake-up and every removal made an unpack of 100,000
/// files with `--settle 5` cost 10.8 s of CPU where the watch without it cost 1.8, and 20,000
/// files removed while unsettled cost 20,000 passes over 20,000 sessions.
///
/// A backend that honours ``WatchOptions/settleQuietPeriod`` keeps one, on its producer thread:
///
/// ```swift
/// var settle = SettleTracker(quietPeriod: quietPeriod, usesOpenAndClose: false)
/// batcher.add(settle.presentAtReady(initialSnapshot, at: clock.now), at: clock.now)  // after `ready`
/// batcher.add(settle.observe(scanEvents, at: clock.now), at: clock.now)               // every batch
/// batcher.add(settle.due(at: clock.now), at: clock.now)                                // whenever it wakes
/// // …and it wakes by `settle.nextDeadline` at the latest.
/// ```
///
/// A kernel backend that sees writes and closes also calls ``wrote(_:at:)`` and
/// ``closedAfterWriting(_:at:)`` in kernel order, before it reports the batch they belong to.
public struct SettleTracker: Sendable {
    /// One file with a write session in progress (or descriptors open on it).
    private struct Session {
        /// 1 while a writer is at work (written, not yet closed), else 0.
        var openCount = 0
        /// Written (or created) since the last `settled`.
        var isDirty = false
        /// The consumer has heard of the file (a `created`, `modified` or `renamed` for it):
        /// opens and closes arrive before the backend has examined a new name, and a file is
        /// never settled before it was reported, nor under a name it never had for the consumer.
        var isKnown = false
        /// Monotonic nanoseconds of the last write, open or close.
        var lastActivity: UInt64 = 0
        var identity: FileIdentity?
        /// Present at `ready` and not written since: its `settled` is synthetic, like the
        /// ones for files present at `ready` that settle at once.
        var isPresentAtReady = false
        /// Moved in from outside the tree and not written since (``movedIn(_:now:)``).
        var isMovedIn = false
        /// A write or a writer's close was seen (``recordWriter(at:isAtWork:now:)``).
        var writerSeen = false
        /// Reported `created` with no write and no close seen: its creator may still be at
        /// work in one system call that the kernel reports only when it returns
        /// (`copy_file_range`, which `cp` uses within a file system, `sendfile`, `splice`).
        /// Such a session settles only once a look at the file (``due(now:looking:)``) finds
        /// it as the previous look found it, a quiet period apart.
        var awaitsCreator = false
        /// Whether the file has been looked at for ``awaitsCreator``, and what was found (`nil`
        /// where it could not be examined).
        var hasBeenLookedAt = false
        var lastLook: FileStatus?
    }

    private let quietNanoseconds: UInt64
    private let usesOpenAndClose: Bool
    /// Keyed by the path's bytes. Changed only through ``store(_:at:)`` and ``take(_:)``, which
    /// keep the two indexes below in step.
    private var sessions: [[UInt8]: Session] = [:]
    /// A deadline for each session that may settle, pushed whenever one is stored with no
    /// writer at work; one made stale by a later store or a removal is dropped when it comes
    /// first (``isCurrent(_:)``).
    private var deadlines = Heap<Deadline>()
    /// How many sessions lie below each directory that holds any, so that a removal or a
    /// rename of a name with none below it (every file, most directories) costs nothing more.
    /// The keys are slices of the sessions' own keys.
    private var sessionsBelow: [ArraySlice<UInt8>: Int] = [:]

    private struct Deadline: Comparable {
        let nanoseconds: UInt64
        let key: [UInt8]

        static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }
        static func == (a: Deadline, b: Deadline) -> Bool { a.nanoseconds == b.nanoseconds && a.key == b.key }
    }

    /// - Parameters:
    ///   - quietPeriod: how long a file must see no write (and, with open/close events, no
    ///     open descriptor) before it is settled.
    ///   - usesOpenAndClose: the backend reports writes and closes (``wrote(_:at:)`` and
    ///     ``closedAfterWriting(_:at:)``); without them the quiet period alone decides.
    public init(quietPeriod: Duration, usesOpenAndClose: Bool) {
        self.quietNanoseconds = quietPeriod.saturatingNanoseconds
        self.usesOpenAndClose = usesOpenAndClose
    }

    /// No file is being written: nothing can settle until more events come.
    public var isIdle: Bool { sessions.isEmpty }

    /// Follows what the events say (writes start or extend a session, removals end it,
    /// renames carry it along) at an instant of ``MonotonicClock``: the events with the `settled`
    /// events they cause, each right after its cause.
    public mutating func observe(_ events: [FileSystemEvent], at instant: MonotonicClock.Instant) -> [FileSystemEvent] {
        observe(events, now: instant.nanoseconds)
    }

    /// The regular files present at `ready` in `snapshot` (the initial scan): returns the
    /// `settled` events of those unchanged for the quiet period already, in path order; the
    /// others may still have a writer at work and settle a quiet period after their last
    /// change (``nextDeadline``), like files written while watched.
    public mutating func presentAtReady(_ snapshot: FileTreeSnapshot, at instant: MonotonicClock.Instant) -> [FileSystemEvent] {
        presentAtReady(snapshot.rootSnapshot, paths: PathBuilder(root: snapshot.root), now: instant.nanoseconds)
    }

    /// The regular files of one root's initial scan; the finished ones are settled now, in
    /// the scan's (path) order.
    package mutating func presentAtReady(_ root: RootSnapshot, paths: PathBuilder, now: UInt64) -> [FileSystemEvent] {
        let wallNow = FileSystemEvent.Timestamp.now().nanosecondsSinceEpoch
        var settled: [FileSystemEvent] = []
        guard let tree = root.tree else {
            if root.status.itemType == .file,
               let event = presentAtReady(paths.bytes([]), identity: root.status.identity, changeTime: root.status.changeTime,
                                          wallNow: wallNow, now: now)
            {
                settled.append(event)
            }
            return settled
        }
        func walk(_ directory: SnapshotDirectory, _ relative: [UInt8]) {
            for entry in directory.entries {
                let path = relative.appendingComponent(entry.name)
                if let child = entry.directory {
                    walk(child, path)
                } else if entry.itemType == .file,
                          let event = presentAtReady(paths.bytes(path), identity: entry.status.identity,
                                                     changeTime: entry.status.changeTime, wallNow: wallNow, now: now)
                {
                    settled.append(event)
                }
            }
        }
        walk(tree, [])
        return settled
    }

    /// A file moved in from outside the tree (inotify `IN_MOVED_TO` with no `IN_MOVED_FROM`):
    /// complete as it stands, so it settles as soon as it is reported `created`, unless a write
    /// comes first.
    public mutating func movedIn(_ path: FilePath, at instant: MonotonicClock.Instant) {
        movedIn(path.bytes, now: instant.nanoseconds)
    }

    /// A write through a descriptor (inotify `IN_MODIFY`): a writer is at work until it closes.
    /// Fed in kernel order, before the events are translated.
    public mutating func wrote(_ path: FilePath, at instant: MonotonicClock.Instant) {
        wrote(path.bytes, now: instant.nanoseconds)
    }

    /// A descriptor open for writing was closed (`IN_CLOSE_WRITE`): the write session ends and
    /// the quiet period starts.
    public mutating func closedAfterWriting(_ path: FilePath, at instant: MonotonicClock.Instant) {
        closedAfterWriting(path.bytes, now: instant.nanoseconds)
    }

    /// The files settled by `instant`, as `settled` events in path order; their sessions end.
    public mutating func due(at instant: MonotonicClock.Instant) -> [FileSystemEvent] {
        due(now: instant.nanoseconds)
    }

    /// When the next file may settle, if any may: wake by then.
    public var nextDeadline: MonotonicClock.Instant? {
        nextDeadlineNanoseconds.map(MonotonicClock.Instant.init(nanoseconds:))
    }

    /// Follows what the events say: writes start or extend a session; removals end it without
    /// a `settled`; renames carry it to the new path (and settle a closed file at once under
    /// its final name, the way a download is renamed into place).
    ///
    /// Returns `events` with the `settled` events they cause, each right after its cause: a
    /// file renamed into place and written again in the same batch is settled, then
    /// modified, then settled again, never modified and then settled twice in a row (which
    /// would tell a consumer the second session was complete before it was).
    package mutating func observe(_ events: [FileSystemEvent], now: UInt64) -> [FileSystemEvent] {
        var result: [FileSystemEvent] = []
        result.reserveCapacity(events.count)
        for event in events {
            result.append(event)
            switch event.kind {
            case .created, .modified:
                guard event.itemType == .file else { continue }
                let key = event.path.bytes
                if event.kind == .created, let moved = sessions[key], moved.isMovedIn {
                    // Moved in complete, and no write came after the move (the backend reads
                    // every event queued before it reports the name): settled at once.
                    take(key)
                    result.append(FileSystemEvent(kind: .settled, path: event.path, itemType: .file, isSynthetic: false,
                                                      identity: event.identity))
                    continue
                }
                var session = sessions[key] ?? Session()
                if event.kind == .created && usesOpenAndClose && !session.writerSeen && session.openCount == 0 {
                    session.awaitsCreator = true
                }
                session.isDirty = true
                session.isKnown = true
                session.isPresentAtReady = false
                session.lastActivity = now
                session.identity = event.identity ?? session.identity
                store(session, at: key)
            case .removed, .rootRemoved:
                remove(under: event.path.bytes)
            case .renamed:
                guard let previous = event.previousPath else { continue }
                let from = previous.bytes
                let to = event.path.bytes
                if event.itemType == .directory {
                    move(under: from, to: to)
                    continue
                }
                take(to)
                guard event.itemType == .file else {
                    take(from)
                    continue
                }
                let session = take(from)
                if let session, session.openCount > 0 || session.awaitsCreator || (!usesOpenAndClose && session.isDirty) {
                    // Still being written (or, without open and close events, not known to be
                    // finished): settles later, under the new name.
                    var moved = session
                    moved.isKnown = true
                    moved.isDirty = true
                    store(moved, at: to)
                } else {
                    // Closed already: renamed into place, complete now under its final name.
                    result.append(FileSystemEvent(kind: .settled, path: event.path, itemType: .file, isSynthetic: false,
                                                      identity: event.identity ?? session?.identity))
                }
            case .exchanged:
                guard let other = event.previousPath else { continue }
                let a = event.path.bytes
                let b = other.bytes
                let first = take(a)
                let second = take(b)
                if let first { store(first, at: b) }
                if let second { store(second, at: a) }
                // A directory takes the sessions below it along, each way.
                exchange(under: a, and: b)
            case .overflow:
                // Opens and closes were lost: the counts cannot be trusted, writes can.
                for (key, session) in sessions where session.openCount != 0 {
                    var closed = session
                    closed.openCount = 0
                    store(closed, at: key)
                }
            case .attributesChanged, .settled:
                continue
            }
        }
        return result
    }

    /// A regular file that was already in the tree at `ready`: settled at once (the returned
    /// event) unless it changed within the quiet period, in which case a writer may still be at
    /// work and it settles a quiet period after that change (or after the writer it turns out
    /// to have closes), like any file written while watched.
    ///
    /// An app importing from an inbox wants what was dropped there while it was not running
    /// as much as what arrives later; without this it would have to list the tree itself and
    /// guess which of those files are complete.
    ///
    /// - Parameters:
    ///   - changeTime: the file's ctime (wall-clock nanoseconds), which every write moves.
    ///   - wallNow: the wall clock now, to compare with `changeTime`.
    package mutating func presentAtReady(
        _ path: [UInt8], identity: FileIdentity?, changeTime: Int64, wallNow: Int64, now: UInt64
    ) -> FileSystemEvent? {
        let age = wallNow &- changeTime
        if age >= 0 && UInt64(age) >= quietNanoseconds {
            return FileSystemEvent(kind: .settled, path: FilePath(bytes: path), itemType: .file, isSynthetic: true, identity: identity)
        }
        var session = Session()
        session.isDirty = true
        session.isKnown = true
        // Changed `age` ago: the quiet period counts from that change (a ctime in the future,
        // from clock skew on a network file system, counts as now).
        session.lastActivity = age > 0 ? now &- min(now, UInt64(age)) : now
        session.identity = identity
        session.isPresentAtReady = true
        store(session, at: path)
        return nil
    }

    /// A file was moved into the tree from outside (inotify `IN_MOVED_TO` with no
    /// `IN_MOVED_FROM`): complete as it stands unless a write follows, so it is settled as soon
    /// as the backend reports it `created`, unless ``wrote(_:now:)`` comes first.
    package mutating func movedIn(_ path: [UInt8], now: UInt64) {
        var session = Session()
        session.isMovedIn = true
        session.lastActivity = now
        store(session, at: path)
    }

    /// A file renamed inside the tree before the backend reported it under its old name (made
    /// and moved within one read, as `echo > a.tmp; mv a.tmp a` often is): it is reported
    /// `created` at `to`, so what is known of its writer goes there. A writer that wrote and
    /// closed it before the move left it complete, as a rename of a reported file or a file
    /// moved in from outside is: settled as soon as it is reported. One still at work goes on
    /// under the new name. With nothing known (no write seen), `created` starts a session as
    /// for any new file.
    package mutating func renamedBeforeReported(from: [UInt8], to: [UInt8], now: UInt64) {
        guard let session = take(from) else { return }
        if session.openCount > 0 {
            // Known to the consumer only once `to` is reported: a destination the filter
            // leaves out, or gone before it is examined, must never be settled.
            var carried = session
            carried.isKnown = false
            carried.isPresentAtReady = false
            store(carried, at: to)
        } else if session.isDirty || session.isMovedIn {
            movedIn(to, now: now)
        }
    }

    /// The file at `path` was written through a descriptor (inotify `IN_MODIFY`): a writer is
    /// at work until it closes. Fed in kernel order, before the events are translated.
    package mutating func wrote(_ path: [UInt8], now: UInt64) {
        recordWriter(at: path, isAtWork: true, now: now)
    }

    /// A descriptor that was open for writing on the file at `path` was closed
    /// (`IN_CLOSE_WRITE`): its write session ends, and the quiet period starts.
    package mutating func closedAfterWriting(_ path: [UInt8], now: UInt64) {
        recordWriter(at: path, isAtWork: false, now: now)
    }

    /// `paths` were found to be names of one file (a hard link made while watched): what a
    /// writer did through any of them, it did to the file, so each name takes on the latest
    /// writer state among them, and a writer still at work at one keeps them all from settling.
    ///
    /// A writer's events reach only the name the kernel reports them at, and until a new name
    /// is examined the backend cannot know it is another name of a file it has: `ln a b` and
    /// a write through `b` read in one batch noted the writer at `b` alone, and `a`, told
    /// `modified` once `b` was examined, was settled a quiet period later while the writer
    /// still held the file open. (A write through `a` in that batch likewise left `b` to
    /// settle on two looks at it, as a file whose creator was never seen.)
    package mutating func shareWriter(among paths: [[UInt8]]) {
        guard !sessions.isEmpty else { return }
        var latest: Session?
        var isAtWork = false
        for path in paths {
            guard let session = sessions[path], session.writerSeen else { continue }
            if session.openCount > 0 { isAtWork = true }
            if latest.map({ session.lastActivity > $0.lastActivity }) ?? true { latest = session }
        }
        guard let latest else { return }
        for path in paths {
            var session = sessions[path] ?? Session()
            let openCount = isAtWork ? 1 : 0
            if session.writerSeen && session.openCount == openCount && session.lastActivity >= latest.lastActivity { continue }
            session.openCount = openCount
            session.writerSeen = true
            session.awaitsCreator = false
            session.isDirty = true
            session.isPresentAtReady = false
            session.isMovedIn = false
            session.lastActivity = max(session.lastActivity, latest.lastActivity)
            store(session, at: path)
        }
    }

    /// A write or a writer's close: the file is dirty and no longer merely present at `ready`;
    /// a write (not a close) also means a moved-in file is being written after all.
    private mutating func recordWriter(at path: [UInt8], isAtWork: Bool, now: UInt64) {
        var session = sessions[path] ?? Session()
        session.openCount = isAtWork ? 1 : 0
        session.writerSeen = true
        session.awaitsCreator = false
        session.isDirty = true
        session.isPresentAtReady = false
        if isAtWork { session.isMovedIn = false }
        session.lastActivity = now
        store(session, at: path)
    }

    /// The files settled by `now`, as `settled` events; their sessions end.
    ///
    /// - Parameter looking: examines the file at a path (`statx`, not following a symlink),
    ///   `nil` where it cannot. A backend that reports writes and closes passes it, so that a
    ///   file reported `created` with neither seen since (``Session/awaitsCreator``) settles
    ///   only when two looks a quiet period apart find it unchanged: `cp` within a file system
    ///   writes the whole file in one `copy_file_range` call, whose `IN_MODIFY` the kernel
    ///   queues only when it returns, so the quiet period alone settled a 200 MiB copy half
    ///   written. Without it, the quiet period alone decides, as before.
    package mutating func due(now: UInt64, looking: ((_ path: [UInt8]) -> FileStatus?)? = nil) -> [FileSystemEvent] {
        guard !sessions.isEmpty else {
            deadlines = Heap()
            return []
        }
        var settled: [FileSystemEvent] = []
        // Looked at and found changing (or looked at for the first time): they wait another
        // quiet period, stored once the due ones are taken (with no quiet period, stored at
        // once they would be due again in this very loop).
        var lookedAgain: [([UInt8], Session)] = []
        while let first = deadlines.min, first.nanoseconds <= now {
            deadlines.removeMin()
            guard isCurrent(first), var session = take(first.key) else { continue }
            // Never reported under this name (renamed before it was examined, or filtered
            // out), or opened and closed without a write: nothing to say.
            guard session.isDirty && session.isKnown else { continue }
            if session.awaitsCreator, let looking {
                let found = looking(first.key)
                if !session.hasBeenLookedAt || found != session.lastLook {
                    session.hasBeenLookedAt = true
                    session.lastLook = found
                    session.lastActivity = now
                    lookedAgain.append((first.key, session))
                    continue
                }
            }
            settled.append(FileSystemEvent(kind: .settled, path: FilePath(bytes: first.key), itemType: .file,
                                           isSynthetic: session.isPresentAtReady, identity: session.identity))
        }
        for (key, session) in lookedAgain { store(session, at: key) }
        // A stable order for a batch settling together.
        settled.sort { $0.path.string < $1.path.string }
        return settled
    }

    /// Monotonic nanoseconds when the next file may settle, if any may. It may be earlier: a
    /// deadline made stale since (a write came, or the file went) is dropped by the next
    /// ``due(now:)``, and a caller that wakes for it finds nothing due.
    package var nextDeadlineNanoseconds: UInt64? {
        sessions.isEmpty ? nil : deadlines.min?.nanoseconds
    }

    /// When the session stored at `key` may settle: a quiet period after its last activity.
    private func deadline(of session: Session) -> UInt64 {
        let (sum, overflow) = session.lastActivity.addingReportingOverflow(quietNanoseconds)
        return overflow ? .max : sum
    }

    /// Whether `entry` is the deadline of the session now stored at its key.
    private func isCurrent(_ entry: Deadline) -> Bool {
        guard let session = sessions[entry.key] else { return false }
        return session.openCount == 0 && deadline(of: session) == entry.nanoseconds
    }

    /// Stores `session` at `key`, counted below each directory above the key, and with its
    /// deadline when no writer is at work.
    private mutating func store(_ session: Session, at key: [UInt8]) {
        if sessions.updateValue(session, forKey: key) == nil { countBelow(key, by: 1) }
        guard session.openCount == 0 else { return }
        deadlines.insert(Deadline(nanoseconds: deadline(of: session), key: key))
        // Stale deadlines are dropped as they come first; this keeps those that come late few.
        if deadlines.count > 2 * sessions.count + 64 {
            deadlines = Heap(sessions.compactMap { key, session in
                session.openCount == 0 ? Deadline(nanoseconds: deadline(of: session), key: key) : nil
            })
        }
    }

    /// Ends the session at `key`, if there is one, and returns it.
    @discardableResult
    private mutating func take(_ key: [UInt8]) -> Session? {
        guard let session = sessions.removeValue(forKey: key) else { return nil }
        countBelow(key, by: -1)
        return session
    }

    private mutating func countBelow(_ key: [UInt8], by change: Int) {
        for index in key.indices where index > 0 && key[index] == UInt8(ascii: "/") {
            let directory = key[..<index]
            let count = sessionsBelow[directory, default: 0] + change
            sessionsBelow[directory] = count > 0 ? count : nil
        }
    }

    /// The keys of the sessions below the directory `prefix`: looked for only where
    /// ``sessionsBelow`` counts some.
    private func keys(below prefix: [UInt8]) -> [[UInt8]] {
        sessionsBelow[prefix[...]] == nil ? [] : sessions.keys.filter { $0.isBelow(prefix) }
    }

    private mutating func remove(under prefix: [UInt8]) {
        take(prefix)
        for key in keys(below: prefix) { take(key) }
    }

    private mutating func move(under from: [UInt8], to: [UInt8]) {
        for key in keys(below: from) {
            guard let session = take(key) else { continue }
            store(session, at: to + key[from.count...])
        }
    }

    private mutating func exchange(under a: [UInt8], and b: [UInt8]) {
        let moved = keys(below: a).compactMap { key in take(key).map { (b + key[a.count...], $0) } }
            + keys(below: b).compactMap { key in take(key).map { (a + key[b.count...], $0) } }
        for (key, session) in moved { store(session, at: key) }
    }
}
