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
        let backend: FileSystemEventBackend = FileSystemEventBackend.inotify.availability.isAvailable ? .inotify : .polling
        let watcher = Self.watcher(backend, root: tree.root)
        // The long-lived subscription keeps the shared source running through the cycles.
        let keeper = watcher.subscribe()
        let keeperReady = try await untilDeadline(.seconds(30)) {
            var iterator = keeper.makeAsyncIterator()
            while let update = try await iterator.next() { if case .ready = update { return true } }
            return false
        }
        try #require(keeperReady == true)
        let descriptorsBefore = Self.openDescriptorCount()
        let cycles = 10_000
        let completed = try await untilDeadline(.seconds(240)) {
            for _ in 0..<cycles {
                let stream = watcher.subscribe()
                var each = stream.makeAsyncIterator()
                while let update = try await each.next() { if case .ready = update { break } }
                await stream.stop()
            }
            return true
        }
        #expect(completed == true, "\(cycles) cycles within the deadline")
        #expect(watcher.subscriptionCount == 1, "only the long-lived subscription is left")
        #expect(Self.openDescriptorCount() <= descriptorsBefore, "descriptors: \(Self.openDescriptorCount()) after, \(descriptorsBefore) before")
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

    /// Descriptors of the kinds a watch opens (pipes, inotify instances, directories).
    private static func openDescriptorCount() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else { return false }
            return target.hasPrefix("pipe:") || target.contains("inotify") || (target.hasPrefix("/") && target != "/dev/null")
        }.count
    }
}

/// How many subscriptions have seen `ready`, shared by their consumer tasks.
final class ReadyCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
