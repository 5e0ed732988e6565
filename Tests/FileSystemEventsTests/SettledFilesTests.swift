import FileSystemEvents
import FileSystemEventsConformance
import Synchronization
import Testing

/// `source.settledFiles()`: the one-line API for an inbox, on every backend and through a
/// shared watcher.
@Suite(.serialized) struct SettledFilesTests {
    @Test("settledFiles(): the backlog present at ready, then each new file once it is complete", arguments: availableBackends)
    func inbox(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.write("backlog.pdf", "dropped while the app was not running")
        var options = WatchOptions(roots: [tree.root], pollInterval: .milliseconds(20))
        options.settleQuietPeriod = .milliseconds(100)
        let source = try backend.makeSource(options: options)
        let stalled = Atomic<Bool>(false)
        let all = try await collect(source.settledFiles()) { seen in
            if seen.count == 1 {
                // The backlog is settled: now a copy arrives in two writes and a rename.
                let started = ContinuousClock.now
                try tree.write("scan.pdf.part", "page 1, ")
                try tree.append("scan.pdf.part", "page 2")
                try tree.rename("scan.pdf.part", to: "scan.pdf")
                stalled.store(ContinuousClock.now - started >= .milliseconds(100), ordering: .relaxed)
            }
            return seen.contains { $0.path == tree.path("scan.pdf") }
        }
        // Stalled for the quiet period before the rename, the temporary name was rightly settled.
        let seen = all.filter { !(stalled.load(ordering: .relaxed) && $0.path == tree.path("scan.pdf.part")) }
        #expect(seen.map(\.path) == [tree.path("backlog.pdf"), tree.path("scan.pdf")], "\(backend): \(seen)")
        #expect(seen.first?.wasPresentAtReady == true && seen.last?.wasPresentAtReady == false, "\(backend): \(seen)")
        #expect(seen.allSatisfy { $0.identity != nil }, "\(backend): \(seen)")
    }

    @Test("settledFiles() without a quiet period is a typed error naming the option, not a silent wait")
    func needsQuietPeriod() async throws {
        let tree = try ScratchTree()
        let source = try FileSystemEventBackend.polling.makeSource(options: WatchOptions(roots: [tree.root]))
        var iterator = source.settledFiles().makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("no error")
        } catch {
            #expect("\(error)".contains("settleQuietPeriod"), "\(error)")
        }
        #expect(try await iterator.next() == nil)
    }

    @Test("a shared watcher: a subscriber that joins late is told its backlog is settled, once", arguments: availableBackends)
    func sharedWatcherLateSubscriber(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("inbox")
        try tree.write("inbox/old.txt", "backlog")
        var options = WatchOptions(roots: [tree.root], pollInterval: .milliseconds(20))
        options.settleQuietPeriod = .milliseconds(100)
        let watcher = FileSystemWatcher(options: options) { options throws(FileSystemEventsError) in
            try backend.makeSource(options: options)
        }
        // The first subscriber starts the watch and sees the source settle the backlog.
        let first = watcher.source(for: WatchOptions(roots: [tree.root]))
        #expect(first.options.settleQuietPeriod == .milliseconds(100))
        let firstStream = first.updates()
        let old = tree.path("inbox/old.txt")
        let firstSeen = try await observe(firstStream, stopping: false, untilEvent: { $0.kind == .settled && $0.path == old })
        #expect(firstSeen.events.filter { $0.kind == .settled }.map(\.path) == [old])

        // The second joins while the first still runs: the same watch, no crawl of its own.
        let second = watcher.source(for: WatchOptions(roots: [tree.path("inbox")]))
        let secondSeen = try await collect(second.settledFiles()) { seen in
            if seen.count == 1 { try tree.write("inbox/new.txt", "arrived later") }
            return seen.contains { $0.path == tree.path("inbox/new.txt") }
        }
        #expect(secondSeen.map(\.path) == [tree.path("inbox/old.txt"), tree.path("inbox/new.txt")], "\(backend): \(secondSeen)")
        await firstStream.stop()
    }

    /// Iterates `files` until `done` (which may act on what was seen so far) says so, with a
    /// deadline (a bound on a wait for a condition, never a sleep to synchronise).
    private func collect(
        _ files: SettledFiles, timeout: Duration = .seconds(30),
        until done: @escaping @Sendable ([SettledFile]) throws -> Bool
    ) async throws -> [SettledFile] {
        let outcome = try await untilDeadline(timeout) {
            var seen: [SettledFile] = []
            for try await file in files {
                seen.append(file)
                if try done(seen) { return seen }
            }
            return seen
        }
        guard let outcome else { throw WatchTimeout(description: "settledFiles() did not deliver what was expected within \(timeout)") }
        return outcome
    }
}
