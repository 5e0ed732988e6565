import FileSystemEvents
import FileSystemEventsConformance
import FileSystemEventsCore
import ConformanceTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The follower against real writers on every backend: each case checks that the bytes
/// delivered are exactly everything the writer wrote, once each, in order, with chunks
/// contiguous within each file generation.
@Suite(.serialized)
struct FileFollowerTests {
    /// `FILEWATCH_FOLLOW_STRESS=1` runs the issue's full 1,000 rotations.
    static let rotationCount = ProcessInfo.processInfo.environment["FILEWATCH_FOLLOW_STRESS"] == "1" ? 1_000 : 200

    @Test("appends of random sizes from 1 byte to 1 MiB", arguments: FollowBackend.available)
    func randomAppends(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "")
        try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 11)
            try writer.reopen()
            for round in 0..<48 {
                try writer.appendRandom(writer.randomSize(upTo: 1 << 20))
                // Now and then let the follower catch up, so both a backlog and a follower
                // that waits at the end of the file are exercised.
                if round % 8 == 7 { try writer.waitUntilDelivered() }
            }
            return writer.written
        }
    }

    @Test("rotation by rename, the writer continuing on the old descriptor", arguments: FollowBackend.available)
    func rotationByRename(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "")
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 12)
            try writer.reopen()
            for round in 1...5 {
                try writer.appendRandom(writer.randomInt(1...100_000))
                try writer.waitUntilDelivered()
                try Self.rename(path, to: tree.path(RelativePath("app.log.\(round)")))
                try writer.appendRandom(writer.randomInt(1...50_000))  // after the rename
                let old = try writer.reopen()  // the new file exists, still empty
                try writer.write(writer.randomBytes(writer.randomInt(1...50_000)), to: old)
                LogWriter.closeDescriptor(old)
                try writer.appendRandom(writer.randomInt(1...10_000))  // the new file has data
            }
            return writer.written
        }
        let arrivals = recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }
        #expect(arrivals.map(\.generation) == Array(2...6))
    }

    @Test("delete and recreate, the rest read through the held descriptor", arguments: FollowBackend.available)
    func deleteAndRecreate(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 13)
            try writer.reopen()
            for _ in 1...5 {
                try writer.appendRandom(writer.randomInt(1...100_000))
                try writer.waitUntilDelivered()
                try LogWriter.check("unlink", unlink(path.string))
                try writer.appendRandom(writer.randomInt(1...50_000))  // into the deleted file
                let old = try writer.reopen()
                LogWriter.closeDescriptor(old)
                try writer.appendRandom(writer.randomInt(1...10_000))
            }
            return writer.written
        }
        #expect(recorder.deliveredNotices.contains { $0.kind == .removed || $0.kind == .replaced })
    }

    @Test("copytruncate: truncation noticed, delivery restarts at 0", arguments: FollowBackend.available)
    func copyTruncate(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 14)
            try writer.reopen()
            for round in 1...5 {
                try writer.appendRandom(writer.randomInt(1_000...100_000))
                try writer.waitUntilDelivered()
                // logrotate copies, then truncates in place; the writer (O_APPEND) carries on
                // at the new end at once. What it writes before the follower looks must stay
                // shorter than what was delivered, or the truncation cannot be seen by size.
                try LogWriter.check("truncate", truncate(path.string, 0))
                try writer.appendRandom(writer.randomInt(1...999))
                try recorder.wait("truncation \(round)") { _, notices, _ in
                    notices.filter { $0.kind == .truncated }.count >= round
                }
                try writer.appendRandom(writer.randomInt(1...100_000))
            }
            return writer.written
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .truncated }.count == 5)
    }

    @Test("atomic replace: reported, the new file delivered from its first byte", arguments: FollowBackend.available)
    func atomicReplace(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("config.txt")
        try tree.write("config.txt", "version 0\n")
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 15)
            writer.pretendWritten(Array("version 0\n".utf8))
            for version in 1...5 {
                try writer.waitUntilDelivered()
                // An editor's save: a temporary file, written whole, renamed over the path.
                let temporary = tree.path(".config.txt.swp")
                let saver = LogWriter(path: temporary, recorder: recorder, seed: UInt64(version))
                try saver.reopen()
                try saver.append(Array("version \(version)\n".utf8) + saver.randomBytes(saver.randomInt(0...20_000)))
                try Self.rename(temporary, to: path)
                writer.pretendWritten(saver.written)
            }
            return writer.written
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }.count == 5)
    }

    /// A source that reports nothing after `ready` (a poll once an hour) stands for a backend
    /// that lost the event that mattered: the follower's once-a-second look at the path still
    /// finds the new file, and delivers all of it.
    /// `mv app.log app.log.tmp; : > app.log; mv app.log.tmp app.log`: the original comes back
    /// over its empty replacement, and its writer goes on appending. The follower held it as a
    /// superseded file with the replacement as the newest, so once its grace period ran out it
    /// was closed, and every byte written after that was lost, the path's identity unchanged.
    @Test("a file moved back over its empty replacement: what its writer appends afterwards is delivered", arguments: FollowBackend.available)
    func movedBackOverReplacement(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let aside = tree.path("app.log.tmp")
        try tree.write("app.log", "")
        let recorder = try await follow(path, on: backend, rotationGracePeriod: .seconds(10)) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 21)
            try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...50_000))
            try writer.waitUntilDelivered()
            try Self.rename(path, to: aside)
            let original = try writer.reopen()  // the empty replacement
            let replacement = try Self.identity(of: path)
            try Self.waitUntilHeldTwice(path)
            writer.closeCurrent()
            try Self.rename(aside, to: path)
            try writer.write(writer.randomBytes(writer.randomInt(1...20_000)), to: original)
            try writer.waitUntilDelivered()
            // The replacement is done with once the original has data again; kept as the newest
            // file, it was held until the follow ended, and the original released instead.
            try Self.waitUntilReleased(replacement)
            for _ in 1...3 {
                try writer.write(writer.randomBytes(writer.randomInt(1...20_000)), to: original)
                try writer.waitUntilDelivered()
            }
            LogWriter.closeDescriptor(original)
            return writer.written
        }
        // Each generation's data is contiguous, and none goes back to an earlier one.
        let generations = recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }.map(\.generation)
        #expect(generations == generations.sorted())
    }

    /// The same after the follower let the original go (its replacement had data): it is
    /// recognised on its return and resumed where it stopped, not delivered again from 0.
    @Test("a file let go, then moved back over its replacement: resumed where it stopped, nothing delivered twice", arguments: FollowBackend.available)
    func releasedThenMovedBack(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let aside = tree.path("app.log.tmp")
        try tree.write("app.log", "")
        try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 22)
            try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...50_000))
            try writer.waitUntilDelivered()
            let first = try Self.identity(of: path)
            try Self.rename(path, to: aside)
            let original = try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...20_000))  // the replacement has data
            try writer.waitUntilDelivered()
            try Self.waitUntilReleased(first, exceptBy: 1)  // the writer's own descriptor
            writer.closeCurrent()
            try Self.rename(aside, to: path)
            for _ in 1...3 {
                try writer.write(writer.randomBytes(writer.randomInt(1...20_000)), to: original)
                try writer.waitUntilDelivered()
            }
            LogWriter.closeDescriptor(original)
            return writer.written
        }
    }

    /// The file that came back must not cut short the one it came back over: that file's
    /// writer may still append to it through its descriptor, as after any rotation. Taking the
    /// bytes the returning file already held for new data, the follower let it go at once.
    @Test("a file moved back over a replacement whose writer goes on appending: the replacement's bytes delivered", arguments: FollowBackend.available)
    func movedBackOverAWrittenReplacement(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let aside = tree.path("app.log.tmp")
        try tree.write("app.log", "")
        try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 23)
            try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...50_000))
            try writer.waitUntilDelivered()
            try Self.rename(path, to: aside)
            let original = try writer.reopen()  // the replacement, which the writer now appends to
            try writer.appendRandom(writer.randomInt(1...20_000))
            try writer.waitUntilDelivered()
            try Self.rename(aside, to: path)
            for _ in 1...3 {
                try writer.appendRandom(writer.randomInt(1...20_000))  // into the replacement, unlinked now
                try writer.waitUntilDelivered()
            }
            try writer.write(writer.randomBytes(writer.randomInt(1...20_000)), to: original)
            LogWriter.closeDescriptor(original)
            return writer.written
        }
    }

    @Test("a replacement the source never reports is found by the periodic look, every byte delivered")
    func replacementWithoutEvent() async throws {
        let deaf = FollowBackend(name: "polling once an hour") { options throws(FileSystemEventsError) in
            var options = options
            options.pollInterval = .seconds(3600)
            return PollingEventSource(options: options)
        }
        let tree = try ScratchTree()
        let path = tree.path("config.txt")
        try tree.write("config.txt", "version 0\n")
        let recorder = try await follow(path, on: deaf) { recorder in
            try recorder.wait("the follower watching") { _, _, starts in !starts.isEmpty }
            let writer = LogWriter(path: path, recorder: recorder, seed: 40)
            writer.pretendWritten(Array("version 0\n".utf8))
            try writer.waitUntilDelivered()
            for version in 1...2 {
                let temporary = tree.path(".config.txt.swp")
                let saver = LogWriter(path: temporary, recorder: recorder, seed: UInt64(40 + version))
                try saver.reopen()
                try saver.append(Array("version \(version)\n".utf8) + saver.randomBytes(saver.randomInt(1...20_000)))
                try Self.rename(temporary, to: path)
                writer.pretendWritten(saver.written)
                try writer.waitUntilDelivered()
            }
            return writer.written
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .replaced }.count == 2)
    }

    @Test("a path that appears late", arguments: FollowBackend.available)
    func pathAppearsLate(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("late.log")
        let recorder = try await follow(path, on: backend, start: .end) { recorder in
            try recorder.wait("the follower watching") { _, _, starts in !starts.isEmpty }
            let writer = LogWriter(path: path, recorder: recorder, seed: 16)
            try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...100_000))
            return writer.written
        }
        #expect(recorder.deliveredNotices.map(\.kind) == [.appeared])
    }

    @Test("a directory that appears late", arguments: FollowBackend.available)
    func directoryAppearsLate(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("a/b/app.log")
        let recorder = try await follow(path, on: backend) { recorder in
            try recorder.wait("the follower watching the root") { _, _, starts in
                starts.contains { $0.first?.lastComponent?.string == "root" }
            }
            try tree.makeDirectory("a")
            try tree.makeDirectory("a/b")
            let writer = LogWriter(path: path, recorder: recorder, seed: 17)
            try writer.reopen()
            try writer.appendRandom(writer.randomInt(1...100_000))
            try writer.waitUntilDelivered()
            // The directory goes away and comes back: the follower waits and follows again.
            try tree.removeTree("a")
            try tree.makeDirectories("a/b")
            let old = try writer.reopen()
            LogWriter.closeDescriptor(old)
            try writer.appendRandom(writer.randomInt(1...100_000))
            return writer.written
        }
        #expect(recorder.deliveredNotices.first?.kind == .appeared)
    }

    @Test("a re-pointed symlink: the new target followed from its first byte", arguments: FollowBackend.available)
    func repointedSymlink(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("archive")
        try tree.write("archive/app-1.log", "")
        try tree.symlink("current.log", pointingTo: "archive/app-1.log")
        let path = tree.path("current.log")
        let recorder = try await follow(path, on: backend) { recorder in
            var writer = LogWriter(path: tree.path("archive/app-1.log"), recorder: recorder, seed: 18)
            try writer.reopen()
            var expected: [UInt8] = []
            for day in 2...4 {
                try writer.appendRandom(writer.randomInt(1...50_000))
                expected += writer.written
                try recorder.waitForBytes(expected.count)
                // The next day's log already has a line when the link moves to it.
                let next = LogWriter(path: tree.path(RelativePath("archive/app-\(day).log")), recorder: recorder, seed: UInt64(day))
                try next.reopen()
                try next.appendRandom(next.randomInt(1...1_000))
                try tree.symlink("current.tmp", pointingTo: "archive/app-\(day).log")
                try Self.rename(tree.path("current.tmp"), to: path)
                writer = next
            }
            try writer.appendRandom(writer.randomInt(1...50_000))
            expected += writer.written
            return expected
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }.count == 3)
    }

    /// `current/app.log` with `current -> releases/N`: a deploy points `current` at the next
    /// release. Only the release's directory was watched, so the move was heard by nobody and
    /// found by the once-a-second look, and the new log's first bytes came 2 s late. The
    /// directory holding the link is watched too now, and a change there tells of the file
    /// the path leads to: the watch moves to the new release as soon as the link does.
    @Test("a directory on the way that is a symlink, re-pointed (itself, or a link of a chain it goes through): its holders are watched, and each release's log is followed from its first byte",
          arguments: FollowBackend.available, [false, true])
    func repointedDirectoryOnTheWay(backend: FollowBackend, throughAChain: Bool) async throws {
        let tree = try ScratchTree()
        for release in 1...3 {
            try tree.makeDirectory(RelativePath("release-\(release)"))
            try tree.write(RelativePath("release-\(release)/app.log"), "")
        }
        // `current -> release-N`, or `current -> links/stable -> ../release-N`, whose last link moves.
        let moving: RelativePath = throughAChain ? "links/stable" : "current"
        let prefix = throughAChain ? "../release-" : "release-"
        if throughAChain {
            try tree.makeDirectory("links")
            try tree.symlink("current", pointingTo: "links/stable")
        }
        try tree.symlink(moving, pointingTo: prefix + "1")
        let canonical: @Sendable (FilePath) -> FilePath = { FilePath(bytes: Syscalls.realPath($0.bytes) ?? $0.bytes) }
        let holders = throughAChain ? [canonical(tree.root), canonical(tree.path("links"))] : [canonical(tree.root)]
        let recorder = try await follow(tree.path("current/app.log"), on: backend) { recorder in
            var expected: [UInt8] = []
            for release in 1...3 {
                if release > 1 {
                    let temporary = RelativePath(moving.description + ".tmp")
                    try tree.symlink(temporary, pointingTo: prefix + "\(release)")
                    try Self.rename(tree.path(temporary), to: tree.path(moving))
                    let directory = canonical(tree.path(RelativePath("release-\(release)")))
                    // The watch follows the link, told by its holder's event.
                    try recorder.wait("a watch of release-\(release)") { _, _, starts in starts.last?.contains(directory) == true }
                }
                let writer = LogWriter(path: tree.path(RelativePath("release-\(release)/app.log")), recorder: recorder, seed: UInt64(40 + release))
                try writer.reopen()
                try writer.appendRandom(writer.randomInt(1...20_000))
                expected += writer.written
                try recorder.waitForBytes(expected.count)
            }
            try recorder.wait("the holders watched") { _, _, starts in starts.allSatisfy { roots in holders.allSatisfy(roots.contains) } }
            return expected
        }
        #expect(recorder.problems == [])
    }

    @Test("many rotations in a row (FILEWATCH_FOLLOW_STRESS=1: 1,000)", arguments: FollowBackend.available)
    func manyRotations(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "")
        let rotations = Self.rotationCount
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 19)
            try writer.reopen()
            for _ in 0..<rotations {
                try writer.appendRandom(writer.randomInt(1...2_000))
                try writer.waitUntilDelivered()
                try Self.rename(path, to: tree.path("app.log.1"))
                try writer.appendRandom(writer.randomInt(0...200))
                let old = try writer.reopen()
                try writer.write(writer.randomBytes(writer.randomInt(0...200)), to: old)
                LogWriter.closeDescriptor(old)
                try writer.appendRandom(writer.randomInt(1...200))
            }
            return writer.written
        }
        let arrivals = recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }
        #expect(arrivals.count == rotations)
    }

    /// Polling is left out: a file made, written and renamed away within one poll interval is
    /// never seen by a scan of the path's directory at all (docs/following-files.md).
    @Test("rotations with no pause: files made, written and renamed away before the watch read their creation are delivered, in order",
          arguments: FollowBackend.available.filter { $0.name != "polling" })
    func rotationsWithNoPause(backend: FollowBackend) async throws {
        try await rotateWithNoPause(on: backend, seed: 23, largestWrite: 3_000) { writer, recorder in
            // Files that come and go before the watch starts are out of any source's reach.
            try recorder.wait("the watch to start") { _, _, starts in !starts.isEmpty }
        }
    }

    /// The same, followed through a chain of symlinks to the file in another directory
    /// (`links/current.log -> /…/links/stable.log -> ../app.log`, one target absolute and one
    /// relative): the source tells of `app.log` in the target's directory, never of the link's
    /// name. Matched by the link's name, the files rotated away unseen were never found where
    /// they went (17 of 200 delivered over inotify, 10 over libinotifytools), and each new file,
    /// never told at the path, waited a second before its first byte.
    @Test("rotations with no pause, followed through a chain of symlinks to the file: each file found where it went, in order",
          arguments: FollowBackend.available.filter { $0.name != "polling" })
    func rotationsWithNoPauseThroughSymlinks(backend: FollowBackend) async throws {
        try await rotateWithNoPause(on: backend, seed: 31, largestWrite: 3_000, throughLinks: true) { _, recorder in
            try recorder.wait("the watch to start") { _, _, starts in !starts.isEmpty }
        }
    }

    /// What a script does with `filewatch follow`: it waits for the first bytes to come out,
    /// takes that as "the follower is on", and has the writer rotate with no pause. The
    /// follower used to deliver from the file it opened while its source was still starting
    /// (libinotifytools takes milliseconds to start), so the rotations ran before anything
    /// listened, and every file but the last was lost. Unlike the test above, nothing here
    /// waits for `didStartWatching`.
    @Test("a writer that waits for the first bytes and then rotates with no pause: the source was listening by then",
          arguments: FollowBackend.available.filter { $0.name != "polling" })
    func rotationsRightAfterTheFirstBytes(backend: FollowBackend) async throws {
        try await rotateWithNoPause(on: backend, seed: 29, largestWrite: 200) { writer, _ in
            try writer.appendRandom(100)
            try writer.waitUntilDelivered()
        }
    }

    /// The same, where the file's directory did not exist when the follower started: its
    /// nearest ancestor was watched, and the first bytes came from the file found there
    /// before the watch moved down to the directory, so files rotated away at once were never
    /// told of (13 of 17 runs over inotify, 4 of 5 over libinotifytools, rotating every 5 ms).
    @Test("a directory that appears late, a writer that waits for the first bytes and then rotates with no pause: nothing lost",
          arguments: FollowBackend.available.filter { $0.name != "polling" })
    func rotationsRightAfterTheFirstBytesInALateDirectory(backend: FollowBackend) async throws {
        try await rotateWithNoPause(on: backend, seed: 37, largestWrite: 200, inLateDirectory: true) { writer, _ in
            try writer.appendRandom(100)
            try writer.waitUntilDelivered()
        }
    }

    /// The same, where the file's directory, two levels down, was moved away with the file
    /// in it and made again (`mv chain chain.old; mkdir -p chain/deep`): the watch of the old
    /// directory ended, and the follower delivered the new file's first bytes before the watch
    /// of the new directory listened, so files rotated away at once were never told of.
    @Test("a directory moved away and made again, a writer that waits for the first bytes and then rotates with no pause: nothing lost",
          arguments: FollowBackend.available.filter { $0.name != "polling" })
    func rotationsRightAfterTheFirstBytesInADirectoryMadeAgain(backend: FollowBackend) async throws {
        try await rotateWithNoPause(on: backend, seed: 41, largestWrite: 200, inDirectoryMadeAgain: true) { writer, _ in
            try writer.appendRandom(100)
            try writer.waitUntilDelivered()
        }
    }

    /// 60 rotations with no pause, once `waitUntilOn` says the follower is on: each file goes
    /// to a name of its own (`app.log.N`), where it stays, so the only trace of one that came
    /// and went between two reads of the kernel queue is the backend's `created app.log.N` made
    /// at `app.log` (``FileSystemEvent/madeAt``). Every byte, and every file as a generation.
    /// With `throughLinks`, the follower follows `links/current.log`, a chain of two symlinks
    /// to `app.log`, while the writer writes and rotates `app.log` itself. With
    /// `inLateDirectory`, the file is `late/app.log`, and `late` is made once the follower
    /// watches the root.
    private func rotateWithNoPause(
        on backend: FollowBackend, seed: UInt64, largestWrite: Int, throughLinks: Bool = false, inLateDirectory: Bool = false,
        inDirectoryMadeAgain: Bool = false,
        waitUntilOn: @escaping @Sendable (LogWriter, FollowRecorder) throws -> Void
    ) async throws {
        let tree = try ScratchTree()
        let directory = inLateDirectory ? "late/" : inDirectoryMadeAgain ? "chain/deep/" : ""
        let path = tree.path(RelativePath(stringLiteral: "\(directory)app.log"))
        if inDirectoryMadeAgain { try tree.makeDirectories("chain/deep") }
        if !inLateDirectory { try tree.write(RelativePath(stringLiteral: "\(directory)app.log"), "") }
        var followed = path
        if throughLinks {
            try tree.makeDirectory("links")
            try tree.symlink("links/stable.log", pointingTo: "../app.log")
            try tree.symlink("links/current.log", pointingTo: tree.path("links/stable.log").string)
            followed = tree.path("links/current.log")
        }
        let rounds = 60
        let recorder = try await follow(followed, on: backend) { recorder in
            if inLateDirectory {
                try recorder.wait("the follower watching the root") { _, _, starts in
                    starts.contains { $0.first?.lastComponent?.string == "root" }
                }
                try tree.makeDirectory("late")
            }
            let writer = LogWriter(path: path, recorder: recorder, seed: seed)
            try writer.reopen()
            if inDirectoryMadeAgain {
                try writer.appendRandom(50)
                try writer.waitUntilDelivered()
                try tree.rename("chain", to: "chain.old")
                try tree.makeDirectories("chain/deep")
                LogWriter.closeDescriptor(try writer.reopen())
            }
            try waitUntilOn(writer, recorder)
            for round in 1...rounds {
                try writer.appendRandom(writer.randomInt(1...largestWrite))
                try Self.rename(path, to: tree.path(RelativePath(stringLiteral: "\(directory)app.log.\(round)")))
                LogWriter.closeDescriptor(try writer.reopen())
            }
            try writer.appendRandom(100)
            return writer.written
        }
        let arrivals = recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }
        // In a late directory, the first file is an arrival too (`appeared`); in one made
        // again, the file in it.
        #expect(arrivals.count == rounds + (inLateDirectory || inDirectoryMadeAgain ? 1 : 0))
    }

    /// A file the follower found at the path by its own look, told of by the source only after
    /// more rotations than the follower remembers opening (256) were told: the source's word
    /// that it left the path was dropped, the file stayed "not seen to leave", and the files
    /// told after it were put in front of it, delivered out of order, and the file before it
    /// released before its last writes (libinotifytools under a writer rotated with no pause,
    /// 1 run in 6). The scripted source tells exactly what such a backend told.
    @Test("a file found at the path, told of after more rotations than the follower remembers: delivered in its place")
    func fileFoundAtThePathToldLate() async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "0\n")
        let script = ScriptedSource.Script()
        let scripted = FollowBackend(name: "scripted") { options throws(FileSystemEventsError) in
            ScriptedSource(options: options, script: script)
        }
        let recorder = try await follow(path, on: scripted) { recorder in
            try recorder.wait("the watch to start") { _, _, starts in !starts.isEmpty }
            var expected = Array("0\n".utf8)
            var told = [FileSystemEvent(kind: .renamed, path: tree.path("app.log.0"), previousPath: path, itemType: .file,
                                        isSynthetic: false, identity: try Self.fileIdentity(of: path))]
            try Self.rename(path, to: tree.path("app.log.0"))
            for round in 1...300 {
                try tree.write("app.log", "\(round)\n")
                expected += Array("\(round)\n".utf8)
                let identity = try Self.fileIdentity(of: path)
                if round == 290 {
                    // Any batch has the follower look at the path: it finds this file there.
                    let writer = open(path.string, O_RDONLY | O_CLOEXEC)
                    script.send([FileSystemEvent(kind: .modified, path: tree.path("elsewhere"), itemType: .file, isSynthetic: false)])
                    try Self.waitUntilHeldTwice(path)
                    close(writer)
                }
                try Self.rename(path, to: tree.path(RelativePath("app.log.\(round)")))
                var event = FileSystemEvent(kind: .created, path: tree.path(RelativePath("app.log.\(round)")), itemType: .file,
                                            isSynthetic: false, identity: identity)
                event.madeAt = path
                told.append(event)
            }
            try tree.write("app.log", "end\n")
            expected += Array("end\n".utf8)
            told.append(FileSystemEvent(kind: .created, path: path, itemType: .file, isSynthetic: false,
                                        identity: try Self.fileIdentity(of: path)))
            script.send(told)
            return expected
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }.count == 301)
    }

    /// The identity as the library spells it (its device from `statx`, not `st_dev`).
    private static func fileIdentity(of path: FilePath) throws -> FileIdentity {
        try Syscalls.status(path).get().identity
    }

    @Test("rotations while the consumer stalls: every file that stood at the path is held and delivered", arguments: FollowBackend.available)
    func rotationsBeneathAStalledConsumer(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "")
        let recorder = try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 21)
            try writer.reopen()
            try writer.appendRandom(1_000)
            try writer.waitUntilDelivered()
            recorder.hold()
            // Released on every way out, or a failed wait would leave the consumer stalled.
            defer { recorder.release() }
            try writer.appendRandom(100)
            try recorder.waitUntilStalled()
            // Each file is rotated to app.log.1, where the next rotation replaces it: once
            // that happens, only a descriptor opened while it stood at app.log can reach it.
            // The consumer delivers nothing meanwhile, so the follower must have opened each
            // one without it (the wait below is for that, and fails if it never happens).
            for _ in 0..<5 {
                try Self.rename(path, to: tree.path("app.log.1"))
                try writer.appendRandom(writer.randomInt(1...500))  // to the renamed file
                let old = try writer.reopen()
                LogWriter.closeDescriptor(old)
                try writer.appendRandom(writer.randomInt(1...500))
                try Self.waitUntilHeldTwice(path)
            }
            return writer.written
        }
        let arrivals = recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }
        #expect(arrivals.count == 5)
    }

    @Test("a consumer that stalls on the first chunk: the watch runs anyway, and every file that stood at the path is held", arguments: FollowBackend.available)
    func stallOnTheFirstChunk(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        let initial = (1...200).map { "line \($0) before the follower started\n" }.joined()
        try tree.write("app.log", initial)
        // Held before the follower starts, so its very first update (the file's existing
        // bytes) stalls it: it has never run out of bytes to deliver, the moment the watch
        // used to start. Rotations now are seen only if the watch started anyway.
        let recorder = try await follow(path, on: backend, holdingFromTheStart: true) { recorder in
            defer { recorder.release() }
            let writer = LogWriter(path: path, recorder: recorder, seed: 22)
            writer.pretendWritten(Array(initial.utf8))
            try writer.reopen()
            try recorder.waitUntilStalled()
            for _ in 0..<3 {
                try Self.rename(path, to: tree.path("app.log.1"))
                try writer.appendRandom(writer.randomInt(1...500))
                let old = try writer.reopen()
                LogWriter.closeDescriptor(old)
                try writer.appendRandom(writer.randomInt(1...500))
                try Self.waitUntilHeldTwice(path)
            }
            return writer.written
        }
        #expect(recorder.deliveredNotices.filter { $0.kind == .replaced || $0.kind == .appeared }.count == 3)
    }

    @Test("the last N lines, then appends; the lines view keeps a partial line", arguments: FollowBackend.available)
    func lastLinesAndLinesView(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        try tree.write("app.log", "one\ntwo\nthree\nfour")
        let path = tree.path("app.log")
        var options = FileFollower.Options(startPosition: .lastLines(2))
        let recorder = FollowRecorder()
        options.didStartWatching = { recorder.watching($0) }
        let follower = FileFollower(path: path, options: options, makeSource: backend.makeSource)
        let lines = LinesBox()
        let consumer = Task {
            defer { recorder.finish() }
            for try await update in follower.lines {
                if case .line(let line) = update {
                    lines.append(line)
                    recorder.record(.data(FileChunk(bytes: line.bytes + (line.isTerminated ? [10] : []), generation: line.generation, offset: line.offset)))
                }
            }
        }
        try await onThread {
            try recorder.waitForBytes(Array("three\n".utf8).count)
            try tree.append("app.log", " five\nsix")
            try recorder.waitForBytes(Array("three\nfour five\n".utf8).count)
        }
        consumer.cancel()
        try await consumer.value
        #expect(lines.all.map(\.text) == ["three", "four five", "six"])
        #expect(lines.all.map(\.isTerminated) == [true, true, false])
        #expect(lines.all.first?.offset == 8)
    }

    @Test("ending the follow closes every descriptor it opened", arguments: FollowBackend.available)
    func stopClosesDescriptors(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("app.log")
        try tree.write("app.log", "")
        // One follow first, so descriptors the runtime opens once per process on first use
        // (Dispatch's timerfd behind the polling interval) are in `before` even when this
        // test runs alone. A follow that leaks leaks again below.
        try tree.write("warm-up.log", "")
        try await follow(tree.path("warm-up.log"), on: backend) { recorder in
            let writer = LogWriter(path: tree.path("warm-up.log"), recorder: recorder, seed: 21)
            try writer.reopen()
            try writer.appendRandom(10)
            try writer.waitUntilDelivered()
            writer.closeCurrent()
            return writer.written
        }
        let before = openDescriptorDescriptions()
        try await follow(path, on: backend) { recorder in
            let writer = LogWriter(path: path, recorder: recorder, seed: 20)
            try writer.reopen()
            try writer.appendRandom(1_000)
            try writer.waitUntilDelivered()
            // A rotation whose new file stays empty: the old one is still held at the end.
            try Self.rename(path, to: tree.path("app.log.1"))
            let old = try writer.reopen()
            try writer.write(writer.randomBytes(10), to: old)
            LogWriter.closeDescriptor(old)
            writer.closeCurrent()
            return writer.written
        }
        // Descriptors opened since and still open, by number and target: not a count, which
        // other tests' sources closing on their own threads meanwhile make smaller.
        let leaked = openDescriptorDescriptions().subtracting(before)
        #expect(leaked.isEmpty, "left open: \(leaked.sorted())")
    }

    // MARK: Harness

    /// Follows `path` while `writer` runs on a thread; once everything it wrote has been
    /// delivered, ends the follow and checks the delivery byte for byte.
    @discardableResult
    private func follow(
        _ path: FilePath,
        on backend: FollowBackend,
        start: FileFollowerStartPosition = .start,
        holdingFromTheStart: Bool = false,
        rotationGracePeriod: Duration = .seconds(60),
        writer: @escaping @Sendable (FollowRecorder) throws -> [UInt8]
    ) async throws -> FollowRecorder {
        let recorder = FollowRecorder()
        if holdingFromTheStart { recorder.hold() }
        var options = FileFollower.Options(startPosition: start, rotationGracePeriod: rotationGracePeriod)
        options.didStartWatching = { recorder.watching($0) }
        let follower = FileFollower(path: path, options: options, makeSource: backend.makeSource)
        let consumer = Task {
            defer { recorder.finish() }
            for try await update in follower { recorder.record(update) }
        }
        do {
            let expected = try await onThread { () throws -> [UInt8] in
                let expected = try writer(recorder)
                try recorder.waitForBytes(expected.count)
                return expected
            }
            consumer.cancel()
            try await consumer.value
            #expect(recorder.problems == [])
            Self.expectSame(recorder.bytes, expected)
        } catch {
            consumer.cancel()
            _ = try? await consumer.value
            throw error
        }
        return recorder
    }

    private static func expectSame(_ delivered: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        if delivered == expected { return }
        let common = zip(delivered, expected).prefix { $0 == $1 }.count
        Issue.record("delivered \(delivered.count) bytes, written \(expected.count); first difference at byte \(common)", sourceLocation: sourceLocation)
    }

    private static func rename(_ from: FilePath, to: FilePath) throws {
        try LogWriter.check("rename \(from) \(to)", Glibc.rename(from.string, to.string))
    }

    /// Waits until two descriptors of this process lead to the file now at `path`: the
    /// writer's and the follower's.
    private static func waitUntilHeldTwice(_ path: FilePath, timeout: TimeInterval = 30) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        // By identity, not by the link's text: a symlinked TMPDIR spells the path otherwise.
        func identity(_ path: String) -> (UInt64, UInt64)? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return (UInt64(info.st_dev), UInt64(info.st_ino))
        }
        while true {
            guard let file = identity(path.string) else { throw FollowTestFailure("\(path) is gone") }
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            let holding = descriptors.filter { identity("/proc/self/fd/\($0)").map { $0 == file } ?? false }
            if holding.count >= 2 { return }
            guard Date() < deadline else {
                throw FollowTestFailure("the follower never opened the file at \(path) while its consumer was stalled")
            }
            // Polling a condition the follower's thread brings about, with a deadline: there
            // is no event to wait for, because nothing may be delivered while stalled.
            usleep(1_000)
        }
    }

    private static func identity(of path: FilePath) throws -> (UInt64, UInt64) {
        var info = stat()
        try LogWriter.check("stat \(path)", stat(path.string, &info))
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Waits until no descriptor of this process leads to the file `identity` but the
    /// writer's `others`: the follower released it.
    private static func waitUntilReleased(_ identity: (UInt64, UInt64), exceptBy others: Int = 0, timeout: TimeInterval = 30) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            let holding = descriptors.filter { name in
                var info = stat()
                return stat("/proc/self/fd/\(name)", &info) == 0 && UInt64(info.st_dev) == identity.0 && UInt64(info.st_ino) == identity.1
            }
            if holding.count <= others { return }
            guard Date() < deadline else { throw FollowTestFailure("the follower still holds a replacement the original came back over") }
            // Polling a condition the follower's thread brings about, with a deadline.
            usleep(1_000)
        }
    }

}

/// Lines collected by a consumer task, read by the test afterwards.
final class LinesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [FileLine] = []
    func append(_ line: FileLine) { lock.withLock { lines.append(line) } }
    var all: [FileLine] { lock.withLock { lines } }
}
