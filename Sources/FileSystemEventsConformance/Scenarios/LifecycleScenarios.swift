import PlatformLibc
import FileSystemEventsCore

extension ConformanceSuite {
    static let lifecycleScenarios: [ConformanceScenario] = [
        ConformanceScenario(29, "stop: the sequence ends, every descriptor is closed, a restart works") { context in
            try context.tree.makeDirectories("a/b/c")
            // One full cycle first, so descriptors the runtime opens once per process on first
            // use (Dispatch's timerfd behind the harness's deadlines) are counted in `before`
            // even when this scenario runs alone. A watch that leaks leaks again below.
            let warmUp = try await context.watch()
            await warmUp.stop()
            let before = OpenDescriptors.current()
            let watch = try await context.watch()
            try context.tree.write("a/b/c/file.txt", "x")
            try await watch.sync()
            let during = OpenDescriptors.current()
            try check(during.count > before.count, "a running watch holds no descriptor at all? before \(before.count), during \(during.count)")
            await watch.stop()
            try check(watch.isFinished, "the event sequence did not end when the watch stopped")
            let after = OpenDescriptors.current()
            let leaked = after.subtracting(before)
            try check(leaked.isEmpty, "descriptors still open after stop: \(leaked.sorted())")

            let count = watch.eventCount
            try context.tree.write("after-stop.txt", "late")
            let restarted = try await context.watch()
            try context.tree.write("after-restart.txt", "y")
            try await restarted.sync()
            try restarted.expect(.created, "after-restart.txt")
            try check(watch.eventCount == count, "the stopped watch recorded events after stop")
            try restarted.assertReplayMatchesDisk()
        },
        ConformanceScenario(30, "two sources on the same tree do not interfere") { context in
            try context.tree.makeDirectories("shared")
            let first = try await context.watch()
            let second = try await context.watch()
            try context.tree.write("shared/one.txt", "1")
            try context.tree.rename("shared", to: "moved")
            try await WatchSession.sync([first, second])
            try first.assertReplayMatchesDisk("first source")
            try second.assertReplayMatchesDisk("second source")
            await first.stop()
            let index = second.eventCount
            try context.tree.write("moved/two.txt", "2")
            try await second.sync()
            try second.expect(.created, "moved/two.txt", since: index)
            try second.assertReplayMatchesDisk("second source after the first stopped")
        },
    ]
}

/// The process's open descriptors, described by what they point at, read from /proc.
enum OpenDescriptors {
    static func current() -> Set<String> {
        var result: Set<String> = []
        for name in DiskTree.names(in: Array("/proc/self/fd".utf8)) {
            var buffer = [CChar](repeating: 0, count: 4096)
            let path = "/proc/self/fd/" + String(decoding: name, as: UTF8.self)
            let count = readlink(path, &buffer, buffer.count - 1)
            // Closed since the listing (the listing's own descriptor always is): not open.
            guard count > 0 else { continue }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            result.insert("\(String(decoding: name, as: UTF8.self)) -> \(target)")
        }
        return result.filter { !$0.hasSuffix("/proc/\(getpid())/fd") }
    }
}
