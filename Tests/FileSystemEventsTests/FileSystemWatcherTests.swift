import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Synchronization
import Testing

/// One watch, many subscribers, at the scale an app reaches: a hundred subscriptions that each
/// see exactly their own subtree, and ten thousand subscriptions started and cancelled while the
/// watch runs, which must leave nothing behind.
@Suite(.serialized) struct FileSystemWatcherTests {
    static func watcher(_ backend: FileSystemEventBackend, root: FilePath) -> FileSystemWatcher {
        FileSystemWatcher(options: WatchOptions(roots: [root], pollInterval: .milliseconds(20))) { options throws(FileSystemEventsError) in
            try backend.makeSource(options: options)
        }
    }

    @Test("100 subscriptions, one per subdirectory: each sees its own file created and nothing else", arguments: availableBackends)
    func hundredSubscriptions(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        let count = 100
        for index in 0..<count { try tree.makeDirectory(RelativePath("d\(index)")) }
        let watcher = Self.watcher(backend, root: tree.root)
        let streams = (0..<count).map { watcher.subscribe(to: [tree.path(RelativePath("d\($0)"))]) }
        let ready = ReadyCounter()
        let outcome = try await untilDeadline(.seconds(60)) {
            try await withThrowingTaskGroup(of: (Int, [FileSystemEvent]).self) { group in
                for (index, stream) in streams.enumerated() {
                    group.addTask {
                        var events: [FileSystemEvent] = []
                        for try await update in stream {
                            switch update {
                            case .ready:
                                // The last subscription to be ready writes every file.
                                if ready.increment() == count {
                                    for other in 0..<count { try tree.write(RelativePath("d\(other)/f\(other)"), "x") }
                                }
                            case .events(let batch):
                                events += batch
                                if events.contains(where: { $0.kind == .created && $0.path.lastComponent?.string == "f\(index)" }) {
                                    return (index, events)
                                }
                            default:
                                break
                            }
                        }
                        return (index, events)
                    }
                }
                var seen: [Int: [FileSystemEvent]] = [:]
                for try await (index, events) in group { seen[index] = events }
                return seen
            }
        }
        let seen = try #require(outcome as [Int: [FileSystemEvent]]?, "\(backend): not every subscription saw its file within the deadline")
        #expect(watcher.subscriptionCount == count, "one watch serves them all, each still running")
        for index in 0..<count {
            let paths = Set((seen[index] ?? []).map(\.path))
            #expect(paths == [tree.path(RelativePath("d\(index)/f\(index)"))], "\(backend): subscription d\(index) saw \(paths.map(\.string).sorted())")
        }
        for stream in streams { await stream.stop() }
        #expect(watcher.subscriptionCount == 0)
    }

    @Test("10,000 subscriptions started and cancelled while the watch runs leave no subscription, descriptor or stale delivery behind")
    func subscribeCancelCycles() async throws {
        let tree = try ScratchTree()
        let backend: FileSystemEventBackend = FileSystemEventBackend.inotify.buildAvailability.isAvailable ? .inotify : .polling
        let watcher = Self.watcher(backend, root: tree.root)
        // The long-lived subscription keeps the shared source running through the cycles.
        let keeper = watcher.subscribe()
        let keeperReady = try await untilDeadline(.seconds(30)) {
            var iterator = keeper.makeAsyncIterator()
            while let update = try await iterator.next() { if case .ready = update { return true } }
            return false
        }
        try #require(keeperReady == true)
        let descriptorsBefore = watchDescriptorCount()
        let cycles = 10_000
        let memory = ResidentMemory()
        let completed = try await untilDeadline(.seconds(240)) {
            for cycle in 0..<cycles {
                // Measured once the allocator has warmed up to the cycle's working set.
                if cycle == 1_000 { memory.mark() }
                let stream = watcher.subscribe()
                var each = stream.makeAsyncIterator()
                while let update = try await each.next() { if case .ready = update { break } }
                await stream.stop()
            }
            return true
        }
        #expect(completed == true, "\(cycles) cycles within the deadline")
        // 9,000 cycles leaking even 500 bytes each would add 4 MiB.
        #expect(memory.growthSinceMark < 4 << 20, "resident memory grew \(memory.growthSinceMark >> 10) KiB over 9,000 cycles")
        #expect(watcher.subscriptionCount == 1, "only the long-lived subscription is left")
        #expect(watchDescriptorCount() <= descriptorsBefore, "descriptors: \(watchDescriptorCount()) after, \(descriptorsBefore) before")
        // The watch still works for the subscription that stayed.
        try tree.write("after-cycles.txt", "x")
        let seen = try await untilDeadline(.seconds(30)) {
            var iterator = keeper.makeAsyncIterator()
            while let update = try await iterator.next() {
                if case .events(let events) = update, events.contains(where: { $0.path.lastComponent?.string == "after-cycles.txt" }) { return true }
            }
            return false
        }
        #expect(seen == true)
        await keeper.stop()
        #expect(watcher.subscriptionCount == 0)
    }
}

/// The process's resident memory (`/proc/self/statm`), against a mark.
final class ResidentMemory: Sendable {
    private let marked = Atomic<Int>(0)

    static var current: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func mark() { marked.store(Self.current, ordering: .relaxed) }
    var growthSinceMark: Int { max(0, Self.current - marked.load(ordering: .relaxed)) }
}

/// A count shared by tasks and callbacks (subscriptions that saw `ready`, watches started).
final class ReadyCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
    var current: Int { count.load(ordering: .relaxed) }
}

/// The app features on one shared watch: a listing, a follower and a plain subscription of
/// one tree, made with their `watcher:` initialisers, are three subscriptions of one source.
@Suite(.serialized) struct SharedWatcherFeatureTests {
    @Test("a listing, a follower and a subscription on one watcher: one source, each gets what it watches", arguments: availableBackends)
    func featuresShareOneWatch(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("docs")
        try tree.makeDirectory("logs")
        try tree.write("docs/b.txt", "b")
        try tree.write("logs/app.log", "old line\n")
        let watcher = FileSystemWatcherTests.watcher(backend, root: tree.root)
        let plain = watcher.subscribe()
        let listing = DirectoryListing(directory: tree.path("docs"), watcher: watcher)
        // A follower watches only once it has read what is there and must wait for more.
        let followerWatching = ReadyCounter()
        var followerOptions = FileFollower.Options(startPosition: .start)
        followerOptions.didStartWatching = { _ in _ = followerWatching.increment() }
        let follower = FileFollower(path: tree.path("logs/app.log"), options: followerOptions, watcher: watcher)

        let outcome = try await untilDeadline(.seconds(60)) { () async throws -> (names: [String], bytes: [UInt8], subscriptions: Int) in
            var plainIterator = plain.makeAsyncIterator()
            while let update = try await plainIterator.next() { if case .ready = update { break } }
            var listed = listing.makeAsyncIterator()
            // The listing's first update is the directory as it is.
            guard let first = try await listed.next() else { return ([], [], 0) }
            #expect(first.entries.map(\.name) == ["b.txt"])
            // The follower reads the old line, then waits (and so watches) for more.
            let following = Task { () async throws -> [UInt8] in
                var followed = follower.makeAsyncIterator()
                var bytes: [UInt8] = []
                while bytes.count < 18, let update = try await followed.next() {
                    if case .data(let chunk) = update { bytes += chunk.bytes }
                }
                return bytes
            }
            while followerWatching.current == 0 { try await Task.sleep(for: .milliseconds(5)) }
            // All three are running now, on one watch.
            let subscriptions = watcher.subscriptionCount
            try tree.write("docs/a.txt", "a")
            try tree.append("logs/app.log", "new line\n")
            var names: [String] = []
            while names != ["a.txt", "b.txt"], let update = try await listed.next() {
                names = update.entries.map(\.name)
            }
            return (names, try await following.value, subscriptions)
        }
        let result = try #require(outcome, "\(backend): the listing or the follower did not see the changes in time")
        #expect(result.subscriptions == 3, "\(backend): the listing, the follower and the plain subscription share one watch")
        #expect(result.names == ["a.txt", "b.txt"])
        #expect(String(decoding: result.bytes, as: UTF8.self) == "old line\nnew line\n")
        await plain.stop()
    }

    @Test("settled files of a subtree on a watcher with a quiet period: each file once, after its writer closed it; nothing from outside the subtree", arguments: availableBackends)
    func settledFilesShareTheWatch(backend: FileSystemEventBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("uploads")
        try tree.makeDirectory("other")
        try tree.write("uploads/present.txt", "already here")
        var options = WatchOptions(roots: [tree.root], pollInterval: .milliseconds(20))
        options.settleQuietPeriod = .milliseconds(100)
        let watcher = FileSystemWatcher(options: options) { options throws(FileSystemEventsError) in try backend.makeSource(options: options) }
        let settled = SettledFiles(watching: [tree.path("uploads")], watcher: watcher)
        let outcome = try await untilDeadline(.seconds(60)) { () async throws -> [String] in
            var names: [String] = []
            for try await file in settled {
                names.append(String(file.path.string.dropFirst(tree.root.string.count + 1)))
                if names == ["uploads/present.txt"] {
                    try tree.write("other/elsewhere.txt", "not watched by this subscription")
                    try tree.write("uploads/new.txt", "a")
                    try tree.append("uploads/new.txt", "b")
                }
                if names.contains("uploads/new.txt") { return names }
            }
            return names
        }
        let names = try #require(outcome, "\(backend): the new upload was not settled in time")
        #expect(names == ["uploads/present.txt", "uploads/new.txt"], "\(backend): \(names)")
    }
}
