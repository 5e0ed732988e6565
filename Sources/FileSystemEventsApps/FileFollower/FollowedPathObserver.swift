import FileSystemEventsCore
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
/// it gets there. What remains out of reach is only a file created and gone again before the
/// kernel's event for it was read.
final class FollowedPathObserver: Sendable {
    /// What one look found at the path.
    enum Observation {
        /// No regular file stands at the path.
        case missing
        /// A file, opened for reading; the tracker takes over the descriptor.
        case file(descriptor: CInt, identity: FileIdentity)
    }

    private struct State {
        var observations: [Observation] = []
        /// The identity of the last file found, so an unchanged path costs one `statx`.
        var lastIdentity: FileIdentity?
        var lastWasMissing = false
        var isClosed = false
    }

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
            state.observations.append(.file(descriptor: descriptor, identity: opened.identity))
        }
    }

    /// What the follower found at the path when it started: the file it opened itself, or
    /// nothing.
    func prime(identity: FileIdentity?) {
        state.withLock { state in
            state.lastIdentity = identity
            state.lastWasMissing = identity == nil
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
        for case .file(let descriptor, _) in left { Syscalls.close(descriptor) }
    }
}
