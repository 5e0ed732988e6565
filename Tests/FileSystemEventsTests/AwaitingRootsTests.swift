import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Testing

/// `WatchOptions.waitsForMissingRoots` through `FileSystemEventBackend.makeSource` (the
/// conformance suite's scenarios 86 to 89 check the events): the option is honoured by every
/// backend as configuration picks it, and stopping a watch that is waiting closes the
/// descriptors of its ancestor watches.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AwaitingRootsTests {
    @Test("without the option a missing root fails; with it the watch is ready, and stopping it closes every descriptor")
    func optionAndDescriptors() async throws {
        let tree = try ScratchTree()
        let root = tree.path("missing/deeper")
        for backend in availableBackends {
            var options = WatchOptions(roots: [root])
            options.pollInterval = .milliseconds(20)
            await #expect(throws: FileSystemEventsError.rootNotFound(root)) {
                for try await _ in try backend.makeSource(options: options).updates() {}
            }
            options.waitsForMissingRoots = true
            let source = try backend.makeSource(options: options)
            #expect(source.backendName == (backend == .auto ? "polling" : backend.rawValue))
            let before = watchDescriptors()
            let stream = source.updates()
            var iterator = stream.makeAsyncIterator()
            var sawReady = false
            while let update = try await iterator.next() {
                if case .ready(let roots) = update {
                    #expect(roots == [root])
                    sawReady = true
                    break
                }
            }
            #expect(sawReady)
            // While waiting, it watches the nearest existing ancestor, the scratch root.
            try tree.makeDirectory("missing")
            try tree.makeDirectory("missing/deeper")
            try tree.write("missing/deeper/file", "x")
            var created: Set<String> = []
            while !created.contains("file"), let update = try await iterator.next() {
                if case .events(let events) = update { created.formUnion(events.filter { $0.kind == .created }.map { $0.path.lastComponent?.string ?? "" }) }
            }
            #expect(created.isSuperset(of: ["deeper", "file"]), "\(backend): \(created)")
            let opened = watchDescriptors().subtracting(before)
            #expect(!opened.isEmpty)
            await stream.stop()
            #expect(watchDescriptors().isDisjoint(with: opened), "\(backend): open after stop: \(describeDescriptors())")
            try tree.removeTree("missing")
        }
    }

    @Test("finish() before ready ends a watch that waits for its roots")
    func finishBeforeReady() async throws {
        let tree = try ScratchTree()
        for backend in availableBackends {
            var options = WatchOptions(roots: [tree.path("not/there")])
            options.waitsForMissingRoots = true
            options.pollInterval = .milliseconds(20)
            let stream = try backend.makeSource(options: options).updates()
            stream.finish()
            let ended = try await untilDeadline(.seconds(20)) {
                for try await _ in stream {}
                return true
            }
            #expect(ended == true, "\(backend): the stream did not end after finish()")
        }
    }

    @Test("a root that is a dangling symlink waits in its directory, and appears when the link is re-pointed")
    func danglingSymlinkRoot() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectories("real")
        try tree.write("real/inside.txt", "x")
        for backend in availableBackends {
            let name = "current-\(tree.uniqueNumber())"
            try tree.symlink(RelativePath(name), pointingTo: "nowhere")
            var options = WatchOptions(roots: [tree.path(RelativePath(name))])
            options.waitsForMissingRoots = true
            options.pollInterval = .milliseconds(20)
            let observed = try await observe(try backend.makeSource(options: options).updates(), onReady: {
                try tree.remove(RelativePath(name))
                try tree.symlink(RelativePath(name), pointingTo: "real")
            }, untilEvent: { $0.kind == .created && $0.path.lastComponent?.string == "inside.txt" })
            #expect(observed.events.first?.path == tree.path(RelativePath(name)), "\(backend): \(observed.events.prefix(3))")
        }
    }
}
