#if os(Linux)
import FileSystemEventsConformance
import FileSystemEventsCore
import FileSystemEventsInotify
import Testing

/// `fs.inotify.max_user_watches` exhausted, simulated by making `inotify_add_watch` fail with
/// `ENOSPC` through a wrapper of the real kernel (lowering the real sysctl would disturb every
/// other watcher on the machine). The watch must fail loudly and say how to fix it, never carry on
/// with a subtree silently unwatched.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct WatchLimitTests {
    @Test("ENOSPC during the initial crawl is a typed error naming the sysctl")
    func limitAtStartup() async throws {
        let tree = try ScratchTree()
        for index in 0..<5 { try tree.makeDirectories(RelativePath("d\(index)/inner")) }
        let stream = InotifyEventSource.updates(
            options: WatchOptions(roots: [tree.root]), addWatchBudget: FailingAddWatchKernel.Budget(successes: 3))
        var caught: FileSystemEventsError?
        var sawReady = false
        do {
            for try await update in stream {
                if case .ready = update { sawReady = true }
            }
        } catch {
            caught = error
        }
        #expect(!sawReady, "a partial watch must not become ready")
        guard case .watchLimitReached(_, let limit) = caught else {
            Issue.record("expected watchLimitReached, got \(String(describing: caught))")
            return
        }
        #expect(limit == InotifyLimits.current("max_user_watches"))
        #expect(caught?.description.contains("fs.inotify.max_user_watches") == true)
    }

    @Test("ENOSPC for a directory created later ends the watch with the same error")
    func limitAtRuntime() async throws {
        let tree = try ScratchTree()
        let budget = FailingAddWatchKernel.Budget(successes: .max)
        let stream = InotifyEventSource.updates(options: WatchOptions(roots: [tree.root]), addWatchBudget: budget)
        var iterator = stream.makeAsyncIterator()
        while let update = try await iterator.next() {
            if case .ready = update { break }
        }
        budget.exhaust()
        try tree.makeDirectory("new")

        var caught: FileSystemEventsError?
        do {
            while try await iterator.next() != nil {}
        } catch {
            caught = error
        }
        guard case .watchLimitReached = caught else {
            Issue.record("expected watchLimitReached, got \(String(describing: caught))")
            return
        }
    }
}
#endif
