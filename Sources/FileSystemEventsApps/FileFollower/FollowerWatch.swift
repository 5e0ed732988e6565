import FileSystemEventsCore
import Synchronization
import SystemPackage

/// One run of the follower's source over a set of directories, and the task that turns its
/// updates into wake-ups. Replaced by a new one whenever the set of directories to watch
/// changes (the path's directory appeared, a symlink was re-pointed elsewhere) or the source
/// ended (a watched directory was removed).
final class FollowerWatch: Sendable {
    let roots: [[UInt8]]
    private let stream: FileSystemEventStream
    private let pump: Task<Void, Never>
    private let status: StatusBox

    private struct Status {
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
        didStartWatching: (@Sendable ([FilePath]) -> Void)?
    ) throws(FileSystemEventsError) {
        self.roots = roots
        let paths = roots.map { FilePath(bytes: $0) }
        let options = WatchOptions(roots: paths, isRecursive: false, followsSymlinks: false, latency: .zero)
        let stream = try makeSource(options).updates()
        self.stream = stream
        let status = StatusBox()
        self.status = status
        pump = Task {
            do throws(FileSystemEventsError) {
                var updates = stream.makeAsyncIterator()
                while let update = try await updates.next(isolation: nil) {
                    switch update {
                    case .ready:
                        didStartWatching?(paths)
                        wakeup.wake()
                    case .events(let events):
                        // A watched directory gone means its watch is gone: start again.
                        if events.contains(where: { $0.kind == .rootRemoved }) { status.state.withLock { $0.isOver = true } }
                        wakeup.wake()
                    case .scanStarted, .diagnostic:
                        break
                    }
                }
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

    /// The watch has ended (a root was removed, or the source stopped) and must be replaced.
    var isOver: Bool { status.state.withLock { $0.isOver } }
    /// Why the source failed, if it did.
    var error: FileSystemEventsError? { status.state.withLock { $0.error } }

    /// Ends the source and returns once it has closed its descriptors.
    func stop() async {
        pump.cancel()
        await stream.stop()
    }

    /// Ends the source without waiting (an iterator dropped mid-way).
    func cancel() {
        pump.cancel()
    }
}
