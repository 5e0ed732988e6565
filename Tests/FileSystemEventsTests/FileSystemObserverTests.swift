import Dispatch
import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Synchronization
import Testing

/// `FileSystemObserver`: `start()` returns once watching, `stop()` is final (no handler call
/// after it returns, not even of an update already queued) and closes every descriptor before
/// returning, the end reason, restart, and a dropped observer ending its watch; on every backend.
@Suite(.serialized) struct FileSystemObserverTests {
    /// Everything an observer's handlers were called with, and when.
    final class ObserverLog: Sendable {
        private let state = Mutex<(updates: [FileSystemWatchUpdate], ends: [FileSystemObserver.EndReason])>(([], []))

        func record(_ update: FileSystemWatchUpdate) { state.withLock { $0.updates.append(update) } }
        func recordEnd(_ reason: FileSystemObserver.EndReason) { state.withLock { $0.ends.append(reason) } }
        var count: Int { state.withLock { $0.updates.count + $0.ends.count } }
        var ends: [FileSystemObserver.EndReason] { state.withLock { $0.ends } }
        var sawReady: Bool { state.withLock { $0.updates.contains { if case .ready = $0 { return true } else { return false } } } }
        var createdNames: Set<String> {
            state.withLock { state in
                var names: Set<String> = []
                for case .events(let events) in state.updates {
                    for event in events where event.kind == .created { names.insert(event.path.lastComponent?.string ?? "") }
                }
                return names
            }
        }
    }

    static func options(_ root: FilePath) -> WatchOptions {
        var options = WatchOptions(roots: [root])
        options.pollInterval = .milliseconds(20)
        options.capturesInitialState = true
        return options
    }

    /// The blocking `start()`, which async code does not pick.
    static func startBlocking(_ observer: FileSystemObserver) throws {
        try observer.start()
    }

    /// Waits for `condition` (checked every few milliseconds), failing at the deadline.
    static func waitFor(_ what: String, timeout: Duration = .seconds(20), _ condition: @escaping @Sendable () -> Bool) async throws {
        let met = try await untilDeadline(timeout) {
            while !condition() { try await Task.sleep(for: .milliseconds(2)) }
            return true
        }
        if met == nil { throw WatchTimeout(description: "timed out waiting for \(what)") }
    }

    /// A second, independent watch of `root`: once it has seen `marker` created, every backend
    /// has had the time to see (and deliver) what was written before it.
    static func witnessSees(_ marker: String, in tree: ScratchTree, source: any FileSystemEventSource, write: @escaping @Sendable () throws -> Void) async throws {
        _ = try await observe(source.updates(), onReady: {
            try write()
            try tree.write(RelativePath(marker), "m")
        }, untilEvent: { $0.kind == .created && $0.path.lastComponent?.string == marker })
    }

    @Test("start() returns once watching with the initial state; stop() is final and closes every descriptor")
    func startAndStop() async throws {
        let tree = try ScratchTree()
        try tree.write("present.txt", "x")
        try tree.makeDirectory("folder")
        try tree.write("folder/inside.txt", "y")
        for backend in availableBackends {
            let source = try backend.makeSource(options: Self.options(tree.root))
            let before = watchDescriptors()
            let log = ObserverLog()
            let observer = FileSystemObserver(source: source, update: log.record, ended: log.recordEnd)
            try Self.startBlocking(observer)
            let opened = watchDescriptors().subtracting(before)
            #expect(!opened.isEmpty && observer.isRunning)
            #expect(log.sawReady, "\(backend): a watch-thread handler has seen `ready` when start() returns")
            let initial = try #require(observer.initialState?.first, "\(backend): the initial state at ready")
            let walked = try FileTreeSnapshot.scan(tree.root)
            #expect(initial.items.map(\.path) == walked.items.map(\.path), "\(backend): the initial state is the tree")

            let names = (0..<10).map { "\(backend)-\($0)" }
            for name in names { try tree.write(RelativePath(name), "z") }
            try await Self.waitFor("\(backend): the creations") { log.createdNames.isSuperset(of: names) }

            observer.stop()
            #expect(watchDescriptors().isDisjoint(with: opened), "\(backend): stop() returned with descriptors open: \(describeDescriptors())")
            #expect(!observer.isRunning)
            #expect(observer.endReason == .stopped)
            let countAtStop = log.count
            try await Self.witnessSees("\(backend)-after-marker", in: tree, source: source) {
                for index in 0..<10 { try tree.write(RelativePath("\(backend)-after-\(index)"), "w") }
            }
            #expect(log.count == countAtStop, "\(backend): a handler was called after stop() returned")
            #expect(log.ends.isEmpty, "\(backend): `ended` is not called after stop()")
        }
    }

    @Test("stop() from inside a handler, on the watch's thread or on a queue, is the last call")
    func stopFromInsideAHandler() async throws {
        let tree = try ScratchTree()
        let queue = DispatchQueue(label: "observer-tests")
        for backend in availableBackends {
            for delivery in [FileSystemObserver.Delivery.watchThread, .queue(queue)] {
                let source = try backend.makeSource(options: Self.options(tree.root))
                let before = watchDescriptorCount()
                let log = ObserverLog()
                let observerBox = Mutex<FileSystemObserver?>(nil)
                let trigger = "\(backend)-\(tree.uniqueNumber())-stop"
                let observer = FileSystemObserver(source: source, delivery: delivery, update: { update in
                    log.record(update)
                    if case .events(let events) = update, events.contains(where: { $0.path.lastComponent?.string == trigger }) {
                        observerBox.withLock { $0 }?.stop()
                    }
                }, ended: log.recordEnd)
                observerBox.withLock { $0 = observer }
                try await observer.start()
                try tree.write(RelativePath(trigger), "s")
                try await Self.waitFor("\(backend): the trigger") { !observer.isRunning }
                let countAtStop = log.count
                try await Self.witnessSees("\(trigger)-marker", in: tree, source: source) {
                    for index in 0..<10 { try tree.write(RelativePath("\(trigger)-after-\(index)"), "w") }
                }
                #expect(log.count == countAtStop, "\(backend) \(delivery): a handler was called after the one that stopped")
                #expect(observer.endReason == .stopped)
                observerBox.withLock { $0 = nil }
                try await Self.waitFor("\(backend): descriptors closed (\(describeDescriptors()))") { watchDescriptorCount() <= before }
            }
        }
    }

    @Test("stop() on another thread waits for the handler that is running")
    func stopWaitsForARunningHandler() async throws {
        let tree = try ScratchTree()
        let queue = DispatchQueue(label: "observer-tests")
        for backend in availableBackends {
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let progress = Mutex<(handlerReturned: Bool, stopCalled: Bool, handlerReturnedWhenStopReturned: Bool?)>((false, false, nil))
            let marker = "\(backend)-\(tree.uniqueNumber())-hold"
            let observer = FileSystemObserver(source: try backend.makeSource(options: Self.options(tree.root)), delivery: .queue(queue)) { update in
                guard case .events(let events) = update, events.contains(where: { $0.path.lastComponent?.string == marker }) else { return }
                entered.signal()
                release.wait()
                progress.withLock { $0.handlerReturned = true }
            }
            try await observer.start()
            try tree.write(RelativePath(marker), "h")
            try await Self.waitFor("\(backend): the handler to be entered") { entered.wait(timeout: .now()) == .success }
            Thread.detachNewThread {
                progress.withLock { $0.stopCalled = true }
                observer.stop()
                progress.withLock { $0.handlerReturnedWhenStopReturned = $0.handlerReturned }
            }
            try await Self.waitFor("\(backend): stop() to be called") { progress.withLock { $0.stopCalled } }
            release.signal()
            try await Self.waitFor("\(backend): stop() to return") { progress.withLock { $0.handlerReturnedWhenStopReturned } != nil }
            #expect(progress.withLock { $0.handlerReturnedWhenStopReturned } == true, "\(backend): stop() returned while a handler was still running")
        }
    }

    @Test("updates already queued when stop() is called are dropped")
    func queuedUpdatesAreDropped() async throws {
        let tree = try ScratchTree()
        for backend in availableBackends {
            let queue = DispatchQueue(label: "observer-tests-suspended")
            queue.suspend()
            let log = ObserverLog()
            let observer = FileSystemObserver(source: try backend.makeSource(options: Self.options(tree.root)), delivery: .queue(queue), update: log.record, ended: log.recordEnd)
            // `ready` is queued (the queue runs nothing yet) when start() returns.
            try await observer.start()
            for index in 0..<5 { try tree.write(RelativePath("\(backend)-\(tree.uniqueNumber())-\(index)"), "q") }
            observer.stop()
            queue.resume()
            queue.sync {}
            #expect(log.count == 0, "\(backend): \(log.count) queued handler calls ran after stop()")
        }
    }

    @Test("a watch whose root is removed ends with rootsRemoved, calls `ended` once, and restarts")
    func endsWhenTheRootGoesAndRestarts() async throws {
        let tree = try ScratchTree()
        for backend in availableBackends {
            let name = "\(backend)-\(tree.uniqueNumber())"
            try tree.makeDirectory(RelativePath(name))
            let root = tree.path(RelativePath(name))
            let before = watchDescriptorCount()
            let log = ObserverLog()
            let observer = FileSystemObserver(source: try backend.makeSource(options: Self.options(root)), update: log.record, ended: log.recordEnd)
            try await observer.start()
            try tree.write(RelativePath("\(name)/file"), "r")
            try tree.removeTree(RelativePath(name))
            try await Self.waitFor("\(backend): the end") { !log.ends.isEmpty }
            #expect(log.ends == [.rootsRemoved([root])], "\(backend): ended with \(log.ends)")
            #expect(observer.endReason == .rootsRemoved([root]))
            #expect(!observer.isRunning)
            try await Self.waitFor("\(backend): descriptors closed (\(describeDescriptors()))") { watchDescriptorCount() <= before }

            try tree.makeDirectory(RelativePath(name))
            let beforeRestart = watchDescriptors()
            try await observer.start()
            let opened = watchDescriptors().subtracting(beforeRestart)
            #expect(!opened.isEmpty && observer.isRunning && observer.endReason == nil)
            try tree.write(RelativePath("\(name)/again"), "a")
            try await Self.waitFor("\(backend): an event after the restart") { log.createdNames.contains("again") }
            observer.stop()
            #expect(watchDescriptors().isDisjoint(with: opened), "\(backend): descriptors after the restarted watch stopped: \(describeDescriptors())")
            #expect(log.ends.count == 1)
        }
    }

    @Test("start() throws the typed error and leaves the observer stopped")
    func startThrows() async throws {
        let tree = try ScratchTree()
        let missing = tree.path("missing")
        for backend in availableBackends {
            let log = ObserverLog()
            let observer = FileSystemObserver(source: try backend.makeSource(options: Self.options(missing)), update: log.record, ended: log.recordEnd)
            #expect(throws: FileSystemEventsError.rootNotFound(missing)) { try observer.start() }
            await #expect(throws: FileSystemEventsError.rootNotFound(missing)) { try await observer.start() }
            #expect(!observer.isRunning)
            #expect(log.ends.isEmpty, "\(backend): `ended` is for a watch that was ready")
        }
    }

    @Test("an observer dropped while running ends its watch")
    func droppedObserverEndsItsWatch() async throws {
        let tree = try ScratchTree()
        for backend in availableBackends {
            let before = watchDescriptors()
            var observer: FileSystemObserver? = FileSystemObserver(source: try backend.makeSource(options: Self.options(tree.root))) { _ in }
            try await observer?.start()
            let opened = watchDescriptors().subtracting(before)
            #expect(!opened.isEmpty, "\(backend): the watch's wakeup pipe and kernel descriptors")
            observer = nil
            try await Self.waitFor("\(backend): descriptors closed (\(describeDescriptors()))") { watchDescriptors().isDisjoint(with: opened) }
        }
    }

    @Test("an observer made for the main actor delivers there")
    func deliversOnTheMainActor() async throws {
        let tree = try ScratchTree()
        let seen = Mutex<Set<String>>([])
        let observer = FileSystemObserver(source: try FileSystemEventBackend.polling.makeSource(options: Self.options(tree.root)), onMainActor: { update in
            // Traps unless on the main actor (after `dispatchMain()`, Linux drains the main
            // queue on a pool thread, so `Thread.isMainThread` would not say).
            MainActor.preconditionIsolated()
            if case .events(let events) = update { seen.withLock { $0.formUnion(events.map { $0.path.lastComponent?.string ?? "" }) } }
        })
        try await observer.start()
        try tree.write("for-the-main-actor", "m")
        try await Self.waitFor("the event on the main actor") { seen.withLock { $0.contains("for-the-main-actor") } }
        observer.stop()
    }

    @Test("start() and stop() racing on two threads never leave a running watch that delivers nothing")
    func startRacingStop() async throws {
        let tree = try ScratchTree()
        guard let backend = availableBackends.first(where: { $0 != .polling }) ?? availableBackends.first else { return }
        let log = ObserverLog()
        let observer = FileSystemObserver(source: try backend.makeSource(options: Self.options(tree.root)), update: log.record)
        for round in 0..<100 {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let group = DispatchGroup()
                DispatchQueue.global().async(group: group) { try? observer.start() }
                DispatchQueue.global().async(group: group) { observer.stop() }
                group.notify(queue: .global()) { continuation.resume() }
            }
            guard observer.isRunning else { continue }
            let name = "race-\(round)"
            try tree.write(RelativePath(name), "r")
            try await Self.waitFor("round \(round): a running observer's handler to hear \(name)") { log.createdNames.contains(name) }
        }
        observer.stop()
    }
}
