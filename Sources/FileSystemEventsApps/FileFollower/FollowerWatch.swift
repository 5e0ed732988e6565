import FileSystemEventsCore
import Synchronization
import SystemPackage

/// One run of the follower's source over a set of directories: its updates, taken on the
/// watch's thread, wake the follower, and a task waits for the watch to end. Replaced by a new
/// one whenever the set of directories to watch changes (the path's directory appeared, a
/// symlink was re-pointed elsewhere) or the source ended (a watched directory was removed).
final class FollowerWatch: Sendable {
    let roots: [[UInt8]]
    private let stream: FileSystemEventStream
    private let waiter: Task<Void, Never>
    private let status: StatusBox

    private struct Status {
        var hasStarted = false
        var isOver = false
        var error: FileSystemEventsError?
    }

    private final class StatusBox: Sendable {
        let state = Mutex(Status())
    }

    init(
        roots: [[UInt8]],
        makeSource: FileFollower.SourceFactory,
        wakeup: FollowerWakeup,
        observer: FollowedPathObserver,
        replacesAnother: Bool = false,
        didStartWatching: (@Sendable ([FilePath]) -> Void)?
    ) throws(FileSystemEventsError) {
        self.roots = roots
        let paths = roots.map { FilePath(bytes: $0) }
        let options = WatchOptions(roots: paths, isRecursive: false, followsSymlinks: false, latency: .zero)
        let status = StatusBox()
        self.status = status
        // The updates only mean "look again": taken on the watch's own thread, they wake the
        // follower with no task in between (one hand-over fewer from the kernel to the bytes),
        // and a new file at the path is opened there and then, however far behind the
        // follower's own task is (``FollowedPathObserver``).
        let stream = try makeSource(options).updates(deliveringTo: { update in
            switch update {
            case .ready:
                // What changed between the follower's own look and the watch's start is
                // looked at here too, on this thread: the follower's task may be held up.
                if replacesAnother { observer.noteToldAtRestart() }
                observer.observe()
                status.state.withLock { $0.hasStarted = true }
                didStartWatching?(paths)
                wakeup.wake()
            case .events(let events):
                // A watched directory gone means its watch is gone: start again.
                if events.contains(where: { $0.kind == .rootRemoved }) { status.state.withLock { $0.isOver = true } }
                // Said, not hidden: before, the files rotated through the path while the queue
                // overflowed were simply missing from the output.
                if events.contains(where: { $0.kind == .overflow }) { observer.noteEventsLost() }
                observer.observeArrivals(in: events)
                observer.observe()
                wakeup.wake()
            case .scanStarted, .diagnostic:
                break
            }
        })
        self.stream = stream
        waiter = Task {
            do throws(FileSystemEventsError) {
                try await stream.run()
                status.state.withLock { $0.isOver = true }
            } catch {
                status.state.withLock {
                    $0.isOver = true
                    $0.error = error
                }
            }
            wakeup.wake()
        }
    }

    /// The source has reported `ready`: from here on, every change in the watched directories
    /// is heard.
    var hasStarted: Bool { status.state.withLock { $0.hasStarted } }
    /// The watch has ended (a root was removed, or the source stopped) and must be replaced.
    var isOver: Bool { status.state.withLock { $0.isOver } }
    /// Why the source failed, if it did.
    var error: FileSystemEventsError? { status.state.withLock { $0.error } }

    /// Ends the source and returns once it has closed its descriptors.
    func stop() async {
        waiter.cancel()
        await stream.stop()
    }

    /// Ends the source without waiting (an iterator dropped mid-way).
    func cancel() {
        waiter.cancel()
    }
}
