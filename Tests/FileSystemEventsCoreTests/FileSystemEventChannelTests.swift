#if canImport(Glibc)
import Glibc
#endif
import FileSystemEventsCore
import SystemPackage
import Testing

/// The channel's back-pressure, as a producer loop sees it: room is counted in events, a full
/// buffer says so, and the wakeup descriptor fires when the consumer has drained half of it or
/// gone away. Plus the one-consumer rule.
@Suite struct FileSystemEventChannelTests {
    static func batch(_ count: Int) -> FileSystemWatchUpdate {
        .events((0..<count).map { FileSystemEvent(kind: .modified, path: FilePath("/r/\($0)"), itemType: .file, isSynthetic: false) })
    }

    /// Whether the wakeup descriptor is readable now (a zero-timeout poll).
    static func isAwake(_ channel: FileSystemEventChannel) -> Bool {
        guard case .success(let revents) = Syscalls.pollReadable([channel.wakeupReadEnd], timeoutMilliseconds: 0) else { return false }
        return revents[0] != 0
    }

    @Test("room is counted in events; a full buffer asks the producer to wait, and draining half wakes it")
    func backPressure() async throws {
        let channel = try FileSystemEventChannel(bufferLimit: 100)
        #expect(channel.send(Self.batch(60)) == .enqueued(hasRoom: true))
        #expect(channel.send(Self.batch(40)) == .enqueued(hasRoom: false))
        #expect(!channel.hasRoom)
        #expect(!channel.producerStatus.hasRoom)
        // Full: the producer is told to wait, and is not woken yet.
        #expect(channel.requestWakeupWhenRoom() == false)
        #expect(!Self.isAwake(channel))
        // Taking the first batch leaves 40 of 100: at most half, so the producer is woken.
        let first = try await channel.next().get()
        guard case .events(let events)? = first else { Issue.record("expected events, got \(String(describing: first))"); return }
        #expect(events.count == 60)
        #expect(Self.isAwake(channel))
        channel.drainWakeups()
        #expect(!Self.isAwake(channel))
        #expect(channel.hasRoom)
        #expect(channel.requestWakeupWhenRoom() == true)
        channel.terminate()
    }

    @Test("draining less than half does not wake the producer")
    func noEarlyWakeup() async throws {
        let channel = try FileSystemEventChannel(bufferLimit: 100)
        channel.send(Self.batch(20))
        channel.send(Self.batch(90))
        #expect(channel.requestWakeupWhenRoom() == false)
        _ = try await channel.next().get()  // 90 left of 100
        #expect(!Self.isAwake(channel))
        _ = try await channel.next().get()  // 0 left
        #expect(Self.isAwake(channel))
        channel.terminate()
    }

    @Test("a consumer that goes away wakes the producer and every later send says terminated")
    func termination() throws {
        let channel = try FileSystemEventChannel(bufferLimit: 10)
        channel.send(Self.batch(10))
        #expect(channel.requestWakeupWhenRoom() == false)
        channel.terminate()
        #expect(Self.isAwake(channel))
        #expect(channel.isTerminated)
        #expect(channel.send(Self.batch(1)) == .terminated)
        #expect(channel.requestWakeupWhenRoom() == true)
    }

    @Test("finish delivers what is buffered first, then ends; an error is thrown once")
    func finishAfterBuffer() async throws {
        let channel = try FileSystemEventChannel(bufferLimit: 10)
        channel.send(Self.batch(3))
        channel.finish(throwing: .invalidOptions("test"))
        #expect(try await channel.next().get() != nil)
        #expect(await channel.next() == .failure(.invalidOptions("test")))
        #expect(try await channel.next().get() == nil)
    }

    @Test("a second task waiting at the same time fails clearly; the other one still gets its update")
    func concurrentConsumers() async throws {
        let channel = try FileSystemEventChannel(bufferLimit: 10)
        typealias Outcome = Result<FileSystemWatchUpdate?, FileSystemEventsError>?
        let outcomes: [Outcome] = await withTaskGroup(of: Outcome.self) { group in
            group.addTask { await channel.next() }
            group.addTask { await channel.next() }
            // Nothing is sent yet, so the only thing that can come back first is the refusal
            // of whichever consumer came second (a hang here is the bug: the first one lost).
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            var outcomes: [Outcome] = []
            guard let first = await group.next() else { return [] }
            outcomes.append(first)
            channel.send(Self.batch(1))
            if let second = await group.next() { outcomes.append(second) }
            group.cancelAll()
            return outcomes
        }
        #expect(outcomes.count == 2)
        #expect(outcomes.first == .some(.failure(.concurrentIteration)))
        guard case .success(.events(let events)?)? = outcomes.last else {
            Issue.record("the remaining consumer got \(String(describing: outcomes.last))")
            return
        }
        #expect(events.count == 1)
        channel.terminate()
    }
}
