import FileSystemEvents
import FileSystemEventsConformance
import Synchronization
import Testing

/// Sources under abuse: options no source can honour, a long latency window over a flood,
/// a root that keeps failing, two consumers of one stream.
@Suite(.serialized) struct SourceRobustnessTests {
    @Test("a zero poll interval or no roots is a typed error from the stream, not a busy loop or a hang", arguments: [
        "zeroPollInterval", "noRoots", "negativeLatency",
    ])
    func unusableOptions(kind: String) async throws {
        let tree = try ScratchTree()
        var options = WatchOptions(roots: kind == "noRoots" ? [] : [tree.root])
        if kind == "zeroPollInterval" { options.pollInterval = .zero }
        if kind == "negativeLatency" { options.latency = .seconds(-1) }
        for backend in availableBackends {
            // Made by name, the options are rejected at once.
            #expect(throws: FileSystemEventsError.self) { _ = try backend.makeSource(options: options) }
        }
        // Made directly, the source's stream reports them.
        let sources: [any FileSystemEventSource] = [PollingEventSource(options: options)]
        for source in sources {
            let stream = source.updates()
            let failure = await withTaskGroup(of: FileSystemEventsError?.self) { group in
                group.addTask {
                    do {
                        for try await _ in stream {}
                        return nil
                    } catch {
                        return error as? FileSystemEventsError ?? .invalidOptions("unexpected \(error)")
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return .invalidOptions("timed out")
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            await stream.stop()
            guard case .invalidOptions(let message)? = failure, message != "timed out" else {
                Issue.record("\(source.backendName): expected invalidOptions, got \(String(describing: failure))")
                continue
            }
            #expect(message.contains(kind == "noRoots" ? "roots" : kind == "negativeLatency" ? "latency" : "pollInterval"))
        }
    }

    @Test("a long latency window over a flood closes early at the buffer limit (polling)")
    func latencyWindowIsBounded() async throws {
        let tree = try ScratchTree()
        let options = WatchOptions(roots: [tree.root], latency: .seconds(3600), pollInterval: .milliseconds(10), bufferLimit: 50)
        let count = 240
        let observed = try await observe(PollingEventSource(options: options).updates(), onReady: {
            // Files appear over many scans, so windows fill from several diffs.
            for index in 0..<count { try tree.write(RelativePath("f\(index)"), "x") }
        }, until: { observed in
            // Every full window must come out long before the hour is up; at most the last
            // 49 events may wait for it.
            observed.events.filter { $0.kind == .created }.count >= count - 49
        })
        // Held back at most: one window short of the limit. (A batch may exceed the limit
        // only when one scan's diff did: a diff is delivered whole.)
        #expect(Set(observed.events.filter { $0.kind == .created }.map(\.path)).count >= count - 49)
    }

    @Test("polling reports a failing root once, not every interval")
    func rootDiagnosticOnce() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("broken")
        try tree.makeDirectory("marker")
        let broken = tree.path("broken")
        let markers = tree.path("marker")
        let options = WatchOptions(roots: [broken, markers], pollInterval: .milliseconds(10))
        let written = Mutex(0)
        let observed = try await observe(PollingEventSource(options: options).updates(), onReady: {
            // The root becomes a symlink to itself: examining it fails (ELOOP) at every scan.
            try tree.removeDirectory("broken")
            try tree.symlink("broken", pointingTo: "broken")
            try tree.write("marker/0", "x")
        }, until: { observed in
            // Each marker is written once the previous one was seen: every one is a scan later.
            let seen = observed.events.filter { $0.path.string.hasPrefix(markers.string + "/") && $0.kind == .created }.count
            if seen >= 8 { return true }
            let next = written.withLock { count -> Int? in
                guard count < seen + 1, count < 8 else { return nil }
                count += 1
                return count
            }
            if let next { try? tree.write(RelativePath("marker/\(next)"), "x") }
            return false
        })
        let aboutBroken = observed.diagnostics.filter { $0.path == broken }
        #expect(aboutBroken.count == 1, "diagnostics: \(observed.diagnostics.map(\.message))")
    }

    @Test("two tasks iterating one stream: the second fails clearly and the first goes on")
    func twoConsumers() async throws {
        let tree = try ScratchTree()
        let stream = PollingEventSource(options: WatchOptions(roots: [tree.root], pollInterval: .milliseconds(10))).updates()
        let target = tree.path("after.txt")
        enum Outcome: Equatable, Sendable { case refused, sawChange, ended, failed(FileSystemEventsError), timedOut }
        // The change is made once one consumer was refused (so the other is waiting) and the
        // watch is ready (so the change is not part of the initial state), whichever is last.
        let gate = Mutex((ready: false, refused: false, written: false))
        let changeWhen: @Sendable (_ ready: Bool, _ refused: Bool) -> Void = { ready, refused in
            let write = gate.withLock { state -> Bool in
                state.ready = state.ready || ready
                state.refused = state.refused || refused
                guard state.ready && state.refused && !state.written else { return false }
                state.written = true
                return true
            }
            if write { try? tree.write("after.txt", "x") }
        }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    do {
                        for try await update in stream {
                            if case .ready = update { changeWhen(true, false) }
                            if case .events(let events) = update, events.contains(where: { $0.path == target }) { return .sawChange }
                        }
                        return .ended
                    } catch {
                        let failure = error as? FileSystemEventsError ?? .invalidOptions("unexpected \(error)")
                        return failure == .concurrentIteration ? .refused : .failed(failure)
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return .timedOut
            }
            var outcomes: [Outcome] = []
            // Nothing changes on disk until one consumer is refused, which means the other is
            // waiting; then a change must reach that one. (Before the fix, both waited, one of
            // them forever.)
            guard let first = await group.next() else { return outcomes }
            outcomes.append(first)
            if first == .refused {
                changeWhen(false, true)
                if let second = await group.next() { outcomes.append(second) }
            }
            group.cancelAll()
            return outcomes
        }
        await stream.stop()
        #expect(outcomes == [Outcome.refused, Outcome.sawChange])
    }
}
