import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Synchronization
import Testing

/// `updates(deliveringTo:)`: every update reaches the handler, in order, on the watch's own
/// thread (or through the relay for a source that does not implement it); stopping the stream
/// ends the watch and closes its descriptors; a handler may finish its own stream.
@Suite(.serialized) struct HandlerDeliveryTests {
    /// A source that implements only `updates()`: it gets the protocol's default, the relay.
    struct UpdatesOnlySource: FileSystemEventSource {
        let base: any FileSystemEventSource
        var backendName: String { base.backendName }
        var options: WatchOptions { base.options }
        var capabilities: FileSystemEventSourceCapabilities { base.capabilities }
        func updates() -> FileSystemEventStream { base.updates() }
    }

    static func sources(_ options: WatchOptions) throws -> [(String, any FileSystemEventSource)] {
        var sources: [(String, any FileSystemEventSource)] = []
        for backend in availableBackends {
            var options = options
            options.pollInterval = .milliseconds(20)
            let source = try backend.makeSource(options: options)
            sources.append((backend.rawValue, source))
            sources.append(("\(backend.rawValue) (relayed)", UpdatesOnlySource(base: source)))
        }
        return sources
    }

    @Test("every update reaches the handler in order, and stop() closes every descriptor")
    func deliversInOrderAndStops() async throws {
        let tree = try ScratchTree()
        for (name, source) in try Self.sources(WatchOptions(roots: [tree.root])) {
            let descriptorsBefore = watchDescriptorCount()
            let (updates, continuation) = AsyncStream<FileSystemWatchUpdate>.makeStream()
            let stream = source.updates(deliveringTo: { continuation.yield($0) })
            let prefix = "\(name.prefix(4))-\(UUID().uuidString.prefix(8))"
            var created: [String] = []
            let finished = try await untilDeadline(.seconds(30)) {
                var names: [String] = []
                for await update in updates {
                    switch update {
                    case .ready:
                        for index in 0..<20 { try tree.write(RelativePath("\(prefix)-\(index)"), "x") }
                    case .events(let events):
                        names += events.filter { $0.kind == .created }.map { $0.path.lastComponent?.string ?? "" }
                    default:
                        break
                    }
                    if names.filter({ $0.hasPrefix(prefix) }).count == 20 { return names.filter { $0.hasPrefix(prefix) } }
                }
                return names
            }
            created = finished ?? []
            // A kernel backend reports creations in the order they happened; a poll sees them
            // all at once, in path order.
            let expected = (0..<20).map { "\(prefix)-\($0)" }
            if source.capabilities.isEventDriven {
                #expect(created == expected, "\(name): created in this order, reported as \(created)")
            } else {
                #expect(created.sorted() == expected.sorted(), "\(name): reported \(created)")
            }
            // The stream itself yields nothing and ends when stopped.
            await stream.stop()
            let ended = try await untilDeadline(.seconds(10)) {
                var yielded = 0
                for try await _ in stream { yielded += 1 }
                return yielded
            }
            #expect(ended == 0, "\(name): the stream of a handler delivery yields no updates and ends after stop()")
            continuation.finish()
            let closed = try await untilDeadline(.seconds(10)) {
                while watchDescriptorCount() > descriptorsBefore { try await Task.sleep(for: .milliseconds(5)) }
                return true
            }
            #expect(closed == true, "\(name): descriptors open after stop: \(watchDescriptorCount()), before: \(descriptorsBefore): \(describeDescriptors())")
        }
    }

    @Test("a handler may finish its own stream: the watch ends cleanly, after what it had observed")
    func handlerFinishesItsStream() async throws {
        let tree = try ScratchTree()
        for (name, source) in try Self.sources(WatchOptions(roots: [tree.root])) {
            let holder = Mutex<FileSystemEventStream?>(nil)
            let sawReady = Atomic<Bool>(false)
            let stream = source.updates(deliveringTo: { update in
                guard case .ready = update else { return }
                sawReady.store(true, ordering: .releasing)
                // The handler may run before updates(deliveringTo:) returned; then the test
                // finishes the stream below instead.
                holder.withLock { $0 }?.finish()
            })
            holder.withLock { $0 = stream }
            let ended = try await untilDeadline(.seconds(30)) {
                while !sawReady.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
                stream.finish()
                for try await _ in stream {}
                return true
            }
            #expect(ended == true, "\(name): finish() from the handler's side ended the stream")
        }
    }

    @Test("a watch that cannot start throws from the stream, and the handler hears nothing")
    func startupFailure() async throws {
        let tree = try ScratchTree()
        let missing = tree.root.appending("does-not-exist")
        // Made directly: made by name, a missing root may be refused before any stream exists.
        var direct: [any FileSystemEventSource] = [PollingEventSource(options: WatchOptions(roots: [missing]))]
        #if os(Linux)
        direct.append(InotifyEventSource(options: WatchOptions(roots: [missing])))
        #endif
        for (name, source) in direct.flatMap({ [($0.backendName, $0), ("\($0.backendName) (relayed)", UpdatesOnlySource(base: $0))] }) {
            let heard = Atomic<Int>(0)
            let stream = source.updates(deliveringTo: { update in
                if case .events = update { heard.add(1, ordering: .relaxed) }
            })
            let failure = try await untilDeadline(.seconds(30)) { () async -> String in
                do {
                    for try await _ in stream {}
                    return "ended without an error"
                } catch {
                    return String(describing: error)
                }
            }
            #expect(failure?.contains("does-not-exist") == true, "\(name): \(failure ?? "timed out")")
            #expect(heard.load(ordering: .relaxed) == 0)
        }
    }
}
