import FileSystemEvents
import FileSystemEventsCore
import PlatformLibc

/// `filewatch watch DIR --since FILE`: the changes since a saved snapshot, then `ready`, then
/// live changes, with nothing lost or doubled across the switch.
///
/// Why live events are not simply forwarded after the catch-up: a live source's events apply
/// to *its* tree at `ready`, which it never hands out, and a scan taken next to a running
/// watch cannot be lined up with the event stream (a change can be in the scan and still have
/// its event in flight, or be missed by the scan and come as an event for a path the scan
/// never saw). Forwarding would then double some changes and lose others, exactly under the
/// bursts a restarting service meets. So the consumer's tree is kept here instead, as the
/// loaded snapshot:
///
/// 1. the live source starts first, and only once it is `ready` is the tree rescanned and
///    diffed against the saved snapshot: that diff is the catch-up, printed before `ready`;
/// 2. every later batch of live events is a *trigger*: the tree is rescanned and diffed
///    against the previous scan, and that diff is printed.
///
/// Every change after `ready` produces an event, and the event arrives after the change, so
/// the rescan it triggers sees the change (or a later state): nothing is lost. Every printed
/// event is a step between two consecutive scans, so nothing is doubled, and the output obeys
/// the replay invariant by the same argument as the polling backend's. The price: the live
/// part has polling's granularity (changes made and undone between two rescans are not
/// reported) and each batch costs a rescan, so a large tree should use a latency window
/// (`--latency`) to coalesce bursts into few rescans.
struct CatchUpWatch {
    let root: FilePath
    let source: any FileSystemEventSource
    let formatter: any EventFormatter

    /// Loads the snapshot and checks it was taken the way the live source watches (same root,
    /// recursion, symlinks and filter), so the triggers cover everything the snapshot holds.
    static func loadSnapshot(_ file: FilePath, for options: WatchOptions) throws(CommandFailure) -> FileTreeSnapshot {
        guard options.roots.count == 1, let root = options.roots.first else {
            throw .badInput("--since takes exactly one path to watch (a snapshot records one root)")
        }
        let snapshot: FileTreeSnapshot
        do {
            snapshot = try FileTreeSnapshot.load(from: file, root: root)
        } catch {
            throw .badInput(error.description)
        }
        var differences: [String] = []
        if snapshot.isRecursive != options.isRecursive { differences.append("recursion") }
        if snapshot.followsSymlinks != options.followsSymlinks { differences.append("following symlinks") }
        if snapshot.filter != options.filter { differences.append("include/exclude patterns") }
        guard differences.isEmpty else {
            throw .badInput(
                "snapshot file \(file) was taken with other options (\(differences.joined(separator: ", "))) "
                    + "than this watch; watch with the options it was taken with, or take a new snapshot with these"
            )
        }
        return snapshot
    }

    func run(from saved: FileTreeSnapshot) async throws {
        var snapshot = saved
        let output = StandardOutput()
        let stream = source.updates()
        // In place before anything is printed (see TerminationMonitor).
        _ = try TerminationMonitor(
            onFirstSignal: { stream.finish() },
            onOutputClosed: { Task { await stream.stop() } }
        )

        var isReady = false
        var isRootGone = false
        var sourceEndedRoot = false
        var hasCaughtUp = false
        let rootRemoved = FileSystemEvent(kind: .rootRemoved, path: root, itemType: .directory, isSynthetic: true)
        /// Rescans and prints the diff against the consumer's tree; `false` once the root is
        /// gone (and `rootRemoved` printed).
        func catchUp() -> Bool {
            do {
                // At `ready`, a root replaced since the snapshot is the tree the live watch
                // watches: told removed, then created with its contents, and watched on.
                let isFirst = !hasCaughtUp
                hasCaughtUp = true
                let events = try snapshot.update(replacedRootArrives: isFirst)
                output.write(formatter.events(events))
                guard let removed = events.lastIndex(where: { $0.kind == .rootRemoved }) else { return true }
                return events[(removed + 1)...].contains { $0.kind == .created && $0.path == root }
            } catch {
                if case .rootNotFound = error {
                    output.write(formatter.events([rootRemoved]))
                    return false
                }
                StandardError.line("filewatch: warning: rescan of \(root) failed: \(error)")
                return true
            }
        }

        do {
            for try await update in stream {
                switch update {
                case .scanStarted:
                    break
                case .ready(let roots):
                    isReady = true
                    isRootGone = !catchUp()
                    if !isRootGone { MemoryRelease.unmapStartUpFilePages() }
                    output.write(formatter.ready(backend: source.backendName, roots: roots))
                    if isRootGone { return }
                case .events(let events):
                    guard isReady, !events.isEmpty else { break }
                    if events.contains(where: { $0.kind == .rootRemoved }) { sourceEndedRoot = true }
                    if !catchUp() { return }
                case .diagnostic(let diagnostic):
                    StandardError.line("filewatch: warning: \(diagnostic.message)")
                }
            }
        } catch {
            let message = String(describing: error)
            throw isReady ? CommandFailure.failed(message) : CommandFailure.badInput(message)
        }
        guard isReady else { return }
        if sourceEndedRoot {
            // The live source ended the root (moved away, perhaps back again): its watch is
            // over, and the consumer hears it as a live watch would say it.
            output.write(formatter.events([rootRemoved]))
        } else {
            // The stream was finished by a signal: one last look, as the live backends flush
            // what is pending before they stop.
            _ = catchUp()
        }
    }
}
