import FileSystemEventsCore
import SystemPackage
import Synchronization

/// Looks at the followed path, from the watch's own thread as each batch of events arrives
/// and from the follower's task before it reads, and opens every new file it finds there at
/// once.
///
/// The follower reads in its own task, which can fall behind: a consumer that writes slowly
/// (a full pipe, a disk stalled on writeback) holds it up for hundreds of milliseconds, while
/// the writer rotates on. A file that stood at the path only during that time (created,
/// written, renamed to `app.log.1`, and replaced there by the next rotation) would never be
/// seen, and its bytes would be lost. Opened here, on the thread that hears the events, the
/// file is held from the moment its creation is known, so the follower delivers it whenever
/// it gets there.
///
/// A file made at the path and renamed away again before the watch read the kernel's event
/// for it (a writer rotating with no pause: `app.log` written and renamed to `app.log.7`
/// between two reads) is never at the path when it is looked at. The kernel backends tell
/// where it went, as a `created` event at its new name made at the path
/// (``FileSystemEvent/madeAt``): it is opened there (``observeArrivals(in:)``). Polling
/// cannot: a scan sees no path an item left before it.
final class FollowedPathObserver: Sendable {
    /// What one look found at the path.
    enum Observation {
        /// No regular file stands at the path.
        case missing
        /// A file, opened for reading; the tracker takes over the descriptor.
        case file(descriptor: CInt, identity: FileIdentity)
        /// A file that stood at the path only between two looks, opened where it went.
        case movedAwayUnseen(descriptor: CInt, identity: FileIdentity)
        /// The source told that a file opened before has left the path (renamed away or
        /// removed): the order files leave in is the order they were written in.
        case departed(identity: FileIdentity)
        /// The source reported a kernel queue overflow: the files that came and went at the
        /// path meanwhile were not told, so they could not be opened where they went.
        case eventsLost
    }

    private struct State {
        var observations: [Observation] = []
        /// The identity of the last file found, so an unchanged path costs one `statx`.
        var lastIdentity: FileIdentity?
        var lastWasMissing = false
        var isClosed = false
        /// The files opened lately, by identity and birth time (an inode number is reused
        /// once its file is deleted), so a file seen at the path is not taken again when the
        /// source tells, later, where it went.
        var opened: [(identity: FileIdentity, birthTime: Int64)] = []
        /// The files the source told of at the path lately (created there, renamed to or from
        /// it, made there), by identity.
        var told: [FileIdentity] = []

        func hasOpened(_ identity: FileIdentity, birthTime: Int64) -> Bool {
            opened.contains { $0.identity == identity && $0.birthTime == birthTime }
        }

        /// Whether a file with this identity was opened lately, whatever its birth time (for a
        /// file that can no longer be examined).
        func hasOpened(_ identity: FileIdentity) -> Bool {
            opened.contains { $0.identity == identity }
        }

        mutating func noteOpened(_ identity: FileIdentity, birthTime: Int64) {
            if opened.count == FollowedPathObserver.openedFilesKept { opened.removeFirst() }
            opened.append((identity, birthTime))
        }
    }

    /// How many opened files are remembered: more than rotations keep files around between
    /// two looks of any reasonable follower.
    static let openedFilesKept = 256

    private let path: [UInt8]
    private let state = Mutex(State())

    init(path: [UInt8]) {
        self.path = path
    }

    /// Looks at the path: notes it missing, or opens the file there if it is not the one seen
    /// last. Called on the watch's thread for each batch of events, and by the follower
    /// before it reads. The look happens under the lock, so observations are in the order the
    /// looks were made, whichever thread made them: a look that found the file cannot be
    /// recorded after a later one that found it gone.
    func observe() {
        state.withLock { state in
            guard !state.isClosed else { return }
            guard case .success(let found) = FollowerSyscalls.status(path, followSymlinks: true), found.itemType == .file else {
                if !state.lastWasMissing {
                    state.lastWasMissing = true
                    state.lastIdentity = nil
                    state.observations.append(.missing)
                }
                return
            }
            if state.lastIdentity == found.identity { return }
            guard case .success(let descriptor) = FollowerSyscalls.openForReading(path) else { return }
            guard case .success(let opened) = FollowerSyscalls.status(ofDescriptor: descriptor), opened.itemType == .file else {
                Syscalls.close(descriptor)
                return
            }
            state.lastWasMissing = false
            if state.lastIdentity == opened.identity {
                Syscalls.close(descriptor)
                return
            }
            state.lastIdentity = opened.identity
            state.noteOpened(opened.identity, birthTime: opened.birthTime)
            state.observations.append(.file(descriptor: descriptor, identity: opened.identity))
        }
    }

    /// Opens, where they went, the files of `events` that left the path before they could be
    /// seen there: renamed from it, or made there and moved on untold
    /// (``FileSystemEvent/madeAt``), in the order told. Called on the
    /// watch's thread for each batch, before ``observe()``: the file at the path now came
    /// after them.
    func observeArrivals(in events: [FileSystemEvent]) {
        // The path as the source spells it: under the watched directory's canonical path.
        let path = sourceSpelling(of: events)
        // Marked told only once what the batch found is queued: the follower's task lets a
        // file past its wait for the source as soon as it is told (``wasTold(_:)``).
        defer { noteTold(events, path: path) }
        for event in events where event.itemType == .file {
            guard let identity = event.identity else { continue }
            // Told at the path and renamed away (`renamed` from the path) or removed there, or
            // never told there at all (`created` elsewhere, made at the path). Not a file merely
            // made elsewhere with the identity of one told at the path: inode numbers are
            // reused (an editor's temporary file takes the number of the version it replaces).
            let leaves: Bool
            switch event.kind {
            case .renamed: leaves = event.previousPath?.bytes == path && event.path.bytes != path
            case .removed: leaves = event.path.bytes == path
            case .created: leaves = event.path.bytes != path && event.madeAt?.bytes == path
            default: leaves = false
            }
            guard leaves else { continue }
            let location = event.path.bytes
            let canOpen = event.kind != .removed
            state.withLock { state in
                guard !state.isClosed else { return }
                // The file there now, by identity and birth time: an inode number freed by a
                // rotation that deletes old files is soon another file's.
                guard canOpen, case .success(let found) = FollowerSyscalls.status(location, followSymlinks: false),
                      found.itemType == .file, found.identity == identity
                else {
                    if state.hasOpened(identity) { state.observations.append(.departed(identity: identity)) }
                    return
                }
                if state.hasOpened(identity, birthTime: found.birthTime) {
                    state.observations.append(.departed(identity: identity))
                    return
                }
                guard case .success(let descriptor) = FollowerSyscalls.openForReading(location) else { return }
                guard case .success(let opened) = FollowerSyscalls.status(ofDescriptor: descriptor), opened.itemType == .file,
                      opened.identity == identity, opened.birthTime == found.birthTime
                else {
                    Syscalls.close(descriptor)
                    return
                }
                state.noteOpened(identity, birthTime: opened.birthTime)
                state.observations.append(.movedAwayUnseen(descriptor: descriptor, identity: identity))
            }
        }
    }

    /// The followed path as `events` spell it: the path itself; where its directory is reached
    /// through a symlink, the same name under the directory's canonical path (the source
    /// watches that); and where the path is itself a symlink to a file (`links/current.log ->
    /// ../logs/app.log`), the place the link leads to, whose directory is watched too
    /// (``FollowedPath/watchRoots()``). Looked up only when a file's event names another path.
    ///
    /// A link's own name is never in the events that matter: its target's directory tells of
    /// `app.log`, made, renamed away and made again, while `current.log` names only the link.
    /// Matched by the link's name, a file rotated away with no pause was never opened where it
    /// went (17 of 200 files delivered over inotify), and each new file at the path, never
    /// told, waited the whole ``FollowedFileTracker/confirmationWait`` before its first byte.
    private func sourceSpelling(of events: [FileSystemEvent]) -> [UInt8] {
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")), slash + 1 < path.count else { return path }
        let suffix = Array(path[slash...])  // "/name"
        func isOther(_ candidate: FilePath?) -> Bool {
            guard let bytes = candidate?.bytes else { return false }
            return bytes != path
        }
        func isAlias(_ candidate: FilePath?) -> Bool {
            guard let bytes = candidate?.bytes, bytes != path, bytes.count > suffix.count else { return false }
            return bytes.suffix(suffix.count).elementsEqual(suffix)
        }
        // Only files' events are matched with the path (``observeArrivals(in:)``, ``noteTold(_:path:)``):
        // a batch of appends to the path itself costs no look-up.
        guard events.contains(where: { $0.itemType == .file && (isOther($0.path) || isOther($0.previousPath) || isOther($0.madeAt)) })
        else { return path }
        // Looked up at each batch, not remembered: the link may be re-pointed at any time
        // (``noteTold(_:path:)`` takes the file it leads to then as told). The end of the
        // chain is the path itself where it is no link, and `nil` for a loop.
        guard let location = FollowedPath.endOfLinks(from: path) else { return path }
        guard location != path || events.contains(where: { isAlias($0.path) || isAlias($0.previousPath) || isAlias($0.madeAt) })
        else { return path }
        return spelling(of: location) ?? path
    }

    /// `location`, where the path leads (the end of its chain of links,
    /// ``FollowedPath/endOfLinks(from:)``), as a source watching canonical directories names
    /// it: its directory made canonical. Its last name need not exist: between a rotation's
    /// rename and the new file the link dangles, and the events still name that place. `nil`
    /// for a directory that is gone, or a target with no last name (`..`, a trailing `/`).
    private func spelling(of location: [UInt8]) -> [UInt8]? {
        guard let slash = location.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let name = Array(location[(slash + 1)...])
        guard !name.isEmpty, name != [UInt8(ascii: ".")], name != [UInt8(ascii: "."), UInt8(ascii: ".")] else { return nil }
        let directory = slash == 0 ? [UInt8(ascii: "/")] : Array(location[..<slash])
        guard let canonical = Syscalls.realPath(directory) else { return nil }
        var spelling: [UInt8] = canonical == [UInt8(ascii: "/")] ? [] : canonical
        spelling.append(UInt8(ascii: "/"))
        spelling += name
        return spelling
    }

    /// Remembers the files `events` tell of at the path.
    ///
    /// A change to a directory on the way to the path (a symlink `current` pointed at another
    /// release, watched where it stands: see ``FollowedPath``) tells of whatever the path
    /// leads to now, a file the source watching the old directory never names: without this,
    /// it waited the whole second a file found by a look waits to be told of.
    private func noteTold(_ events: [FileSystemEvent], path: [UInt8]) {
        var told: [FileIdentity] = []
        for event in events where event.itemType == .file {
            guard let identity = event.identity else { continue }
            let atPath = event.path.bytes == path || event.previousPath?.bytes == path || event.madeAt?.bytes == path
            if atPath { told.append(identity) }
        }
        func isOnTheWay(_ candidate: FilePath?) -> Bool {
            guard let bytes = candidate?.bytes else { return false }
            return self.path.isBelow(bytes)
        }
        // A directory on the way, or a symlink anywhere in view (one of a chain the path goes
        // through, `current -> stable -> releases/N`, may be re-pointed where it stands).
        let leadsElsewhere = events.contains { event in
            event.kind != .modified && event.kind != .attributesChanged
                && (event.itemType == .symlink || isOnTheWay(event.path) || isOnTheWay(event.previousPath))
        }
        if leadsElsewhere, let now = fileAtPath() { told.append(now) }
        remember(told: told)
    }

    /// Notes `identities` as told of at the path, keeping the last ``openedFilesKept``.
    private func remember(told identities: [FileIdentity]) {
        guard !identities.isEmpty else { return }
        state.withLock { state in
            state.told += identities
            if state.told.count > Self.openedFilesKept { state.told.removeFirst(state.told.count - Self.openedFilesKept) }
        }
    }

    /// The identity of the regular file the path leads to now, if any.
    private func fileAtPath() -> FileIdentity? {
        guard case .success(let now) = FollowerSyscalls.status(path, followSymlinks: true), now.itemType == .file else { return nil }
        return now.identity
    }

    /// Takes the file the path leads to now as told of, for a watch started in place of one
    /// whose directories no longer lead to the path (a directory on the way re-pointed, or
    /// gone): the old watch's events went with it, and the new one never names a file that
    /// stood in its directories before it started. Left waiting to be told, a file found at the
    /// path then waited the whole second (a write just before the re-point woke the follower,
    /// whose look found the new file and moved the watch before the re-point was read).
    func noteToldAtRestart() {
        if let now = fileAtPath() { remember(told: [now]) }
    }

    /// Whether the source has told of the file `identity` at the path.
    func wasTold(_ identity: FileIdentity) -> Bool {
        state.withLock { $0.told.contains(identity) }
    }

    /// What the follower found at the path when it started: the file it opened itself, or
    /// nothing.
    func prime(identity: FileIdentity?, birthTime: Int64 = 0) {
        state.withLock { state in
            state.lastIdentity = identity
            state.lastWasMissing = identity == nil
            if let identity { state.noteOpened(identity, birthTime: birthTime) }
        }
    }

    /// Notes that the source's events since the last batch are incomplete (a kernel queue
    /// overflow), in order with the looks around it.
    func noteEventsLost() {
        state.withLock { state in
            guard !state.isClosed else { return }
            state.observations.append(.eventsLost)
        }
    }

    /// What was observed since the last call, oldest first.
    func take() -> [Observation] {
        state.withLock { state in
            defer { state.observations.removeAll() }
            return state.observations
        }
    }

    /// Closes what was opened and not taken, and any file opened from now on.
    func close() {
        let left = state.withLock { state -> [Observation] in
            state.isClosed = true
            defer { state.observations.removeAll() }
            return state.observations
        }
        for observation in left {
            switch observation {
            case .file(let descriptor, _), .movedAwayUnseen(let descriptor, _): Syscalls.close(descriptor)
            case .missing, .departed, .eventsLost: break
            }
        }
    }
}
