import FileSystemEventsCore
import SystemPackage

/// One run of a ``FileFollower``: the held files, the source watching their directory, and
/// the timer for rotated files. Used by one iterator, in one task at a time.
final class FileFollowerSession {
    private enum Phase {
        case notStarted
        case running
        case finished
    }

    private let follower: FileFollower
    private let tracker: FollowedFileTracker
    private let wakeup: FollowerWakeup
    private var wakeups: AsyncStream<Void>.Iterator
    private var watch: FollowerWatch?
    private var timer: (deadline: ContinuousClock.Instant, task: Task<Void, Never>)?
    private var phase = Phase.notStarted

    init(follower: FileFollower) {
        self.follower = follower
        tracker = FollowedFileTracker(path: FollowedPath(follower.path), options: follower.options)
        let wakeup = FollowerWakeup()
        self.wakeup = wakeup
        wakeups = wakeup.stream.makeAsyncIterator()
    }

    deinit {
        // An iterator dropped before the end: stop the source; the tracker closes the files.
        watch?.cancel()
        timer?.task.cancel()
        wakeup.finish()
    }

    func next(isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) -> FileFollowerUpdate? {
        switch phase {
        case .finished:
            return nil
        case .notStarted:
            phase = .running
            // The watch starts before the first byte is delivered, not when the follower first
            // runs out of bytes: a consumer that stalls on the first chunk (a large file read
            // from its start, a slow pipe) would otherwise leave no watch running while the
            // writer rotates, and every file that stood at the path meanwhile would be lost.
            do throws(FileSystemEventsError) {
                try tracker.start()
                try await keepWatching(isolation: actor)
            } catch {
                await end(isolation: actor)
                throw error
            }
        case .running:
            break
        }
        while true {
            let now = ContinuousClock.now
            if Task.isCancelled { tracker.beginFinishing(now: now) }
            if !tracker.isFinishing, let watch, !watch.hasStarted, !watch.isOver {
                // Nothing is handed out while the source is starting: a consumer that waits
                // for the first bytes and then has the writer rotate with no pause (the files
                // go to names of their own, so only the source can say where) found that the
                // source was not yet listening, and every file rotated meanwhile was lost.
                // Once an update is out, every change at the path is heard. The source's
                // `ready` (or its end) wakes this wait.
                if await !waitForWakeUp(isolation: actor) { tracker.beginFinishing(now: ContinuousClock.now) }
                continue
            }
            if wakeup.takePending() && !tracker.isFinishing {
                tracker.examinePath(now: now)
                if let current = watch, current.isOver || current.roots != tracker.path.watchRoots() {
                    // The path needs other directories watched (the file's directory appeared
                    // while an ancestor was watched), or the watch ended (its directory was
                    // moved away, and another made at the path): the new watch starts before
                    // anything more is handed out, and the wait above holds delivery until it
                    // listens. Delivered from the ancestor's watch, or with no watch at all,
                    // the first bytes came while nothing heard the file's directory, and files
                    // rotated away at once were lost (13 of 17 runs over inotify, rotating every
                    // 5 ms; after `mv chain chain.old; mkdir -p chain/deep`, every run).
                    do throws(FileSystemEventsError) {
                        try await keepWatching(isolation: actor)
                    } catch {
                        await end(isolation: actor)
                        throw error
                    }
                    continue
                }
            }
            let update: FileFollowerUpdate?
            do throws(FileSystemEventsError) {
                update = try tracker.step(now: now)
            } catch {
                await end(isolation: actor)
                throw error
            }
            if let update { return update }
            if tracker.isFinishing {
                await end(isolation: actor)
                return nil
            }
            do throws(FileSystemEventsError) {
                try await keepWatching(isolation: actor)
            } catch {
                await end(isolation: actor)
                throw error
            }
            scheduleTimer(now: now)
            if await !waitForWakeUp(isolation: actor) {
                // Cancelled while waiting: deliver what is readable, then end.
                tracker.beginFinishing(now: ContinuousClock.now)
            }
        }
    }

    /// Sleeps until the source or a timer wakes the follower; `false` once cancelled.
    private func waitForWakeUp(isolation actor: isolated (any Actor)?) async -> Bool {
        var iterator = wakeups
        let woke: Void? = await iterator.next(isolation: actor)
        wakeups = iterator
        return woke != nil
    }

    /// Makes sure the source watches the directories the path needs now, starting a new one
    /// when they changed or the old one ended. A new source's `ready` wakes the follower,
    /// which then looks at the path: whatever happened before the watch existed is seen then.
    private func keepWatching(isolation actor: isolated (any Actor)?) async throws(FileSystemEventsError) {
        if let watch, let error = watch.error, !Self.isDirectoryGone(error) { throw error }
        var attempts = 0
        while true {
            let roots = tracker.path.watchRoots()
            if let watch, watch.roots == roots, !watch.isOver { return }
            let replacesAnother = watch != nil
            if let old = watch {
                watch = nil
                await old.stop()
            }
            do throws(FileSystemEventsError) {
                watch = try FollowerWatch(
                    roots: roots, makeSource: follower.makeSource, wakeup: wakeup, observer: tracker.observer,
                    replacesAnother: replacesAnother, didStartWatching: follower.options.didStartWatching)
                return
            } catch {
                // The directory went away between choosing it and watching it: choose again.
                attempts += 1
                guard Self.isDirectoryGone(error), attempts < 100 else { throw error }
            }
        }
    }

    /// A watched directory removed (or replaced by a file) while its watch started: the
    /// follower climbs to the nearest existing ancestor instead of failing.
    private static func isDirectoryGone(_ error: FileSystemEventsError) -> Bool {
        switch error {
        case .rootNotFound, .notADirectory: return true
        default: return false
        }
    }

    private func scheduleTimer(now: ContinuousClock.Instant) {
        guard let deadline = tracker.nextDeadline(now: now) else { return }
        if let timer, timer.deadline > now, timer.deadline <= deadline { return }
        timer?.task.cancel()
        let wakeup = wakeup
        timer = (deadline, Task {
            do {
                try await Task.sleep(until: deadline, clock: .continuous)
                wakeup.wake()
            } catch {}
        })
    }

    private func end(isolation actor: isolated (any Actor)?) async {
        phase = .finished
        timer?.task.cancel()
        timer = nil
        if let watch {
            self.watch = nil
            await watch.stop()
        }
        tracker.closeAll()
        wakeup.finish()
    }
}
