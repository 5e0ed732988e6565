import FileSystemEventsCore

extension ConformanceSuite {
    static let contentScenarios: [ConformanceScenario] = [
        ConformanceScenario(34, "a rewrite that keeps size and mtime (cp -p, rsync -t) is modified") { context in
            try context.tree.write("kept.txt", "version 1")
            let watch = try await context.watch()
            try context.tree.rewriteKeepingTimes("kept.txt", "version 2")
            try await watch.sync()
            try watch.expect(.modified, "kept.txt")
            try watch.assertReplayMatchesDisk("a file present at ready, rewritten in place")

            // A file that arrived after ready: the consumer read it on `created`, so its later
            // rewrite must be announced as well.
            try context.tree.write("fresh.txt", "aaaa")
            try await watch.sync()
            let index = watch.eventCount
            try context.tree.rewriteKeepingTimes("fresh.txt", "bbbb")
            try await watch.sync()
            try watch.expect(.modified, "fresh.txt", since: index)
            try watch.assertReplayMatchesDisk("a file created after ready, rewritten in place")

            // Its other name removed and the file rewritten so, both between two looks: the link
            // count explains the new change time no better than the rewrite does (polling told
            // only `attributesChanged`; a random mix's seed 128018 of scenario 28).
            try context.tree.write("linked.txt", "cccc")
            try context.tree.hardLink("linked-alias.txt", to: "linked.txt")
            try await watch.sync()
            let beforeUnlink = watch.eventCount
            try context.tree.remove("linked-alias.txt")
            try context.tree.rewriteKeepingTimes("linked.txt", "dddd")
            try await watch.sync()
            try watch.expect(.modified, "linked.txt", since: beforeUnlink)
            try watch.assertReplayMatchesDisk("a file's other name removed and the file rewritten in place")
        },
        ConformanceScenario(101, "atomic saves read in one batch, each new file taking the inode number the save before it freed",
                            runsUnprivileged: true) { context in
            // ext4 hands a freed inode number out again at once, so saves alternate between two
            // numbers and the fourth save's file has the number of the file at ready: a watcher
            // that knows files by inode alone takes it for the file it knows, and the consumer
            // keeps the content it read at ready.
            try context.tree.write("doc.txt", "version 0")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 1_000)
            for version in 1...4 {
                try context.tree.write("doc.tmp", "version \(version)")
                try context.tree.rename("doc.tmp", to: "doc.txt")
            }
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("four saves beneath a held consumer")
            for version in 5...8 {
                try context.tree.write("doc.tmp", "version \(version)")
                try context.tree.rename("doc.tmp", to: "doc.txt")
            }
            try await watch.sync()
            try watch.assertReplayMatchesDisk("four more, no one held")
        },
        ConformanceScenario(112, "a file saved atomically over a name and moved on at once, read in one batch: what moved is the saved file, not the one it replaced",
                            runsUnprivileged: true) { context in
            // The save's temporary name comes and goes before the watcher looks at it, so the
            // move onto `doc.txt` is from nowhere it knows; the move on from `doc.txt` then
            // found the file of ready there in its model and took it along: the consumer kept
            // `version 0` at the new name, and was never told of the saved file (a race hunt,
            // with writers saving and moving the same names, lost it in 5 runs of 6).
            try context.tree.write("doc.txt", "version 0")
            try context.tree.write("notes.txt", "notes 0")
            try context.tree.write("list.txt", "list 0")
            try context.tree.write("kept.txt", "kept 0")
            try context.tree.makeDirectories("archive")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 1_000)
            // Moved to another directory.
            try context.tree.write("doc.tmp", "version 1")
            try context.tree.rename("doc.tmp", to: "doc.txt")
            try context.tree.rename("doc.txt", to: "archive/doc.txt")
            // Moved onto a name in the same directory that holds a file the model knows.
            try context.tree.write("notes.tmp", "notes 1")
            try context.tree.rename("notes.tmp", to: "notes.txt")
            try context.tree.rename("notes.txt", to: "kept.txt")
            // Saved twice, then moved, then saved again at the old name.
            try context.tree.write("list.tmp", "list 1")
            try context.tree.rename("list.tmp", to: "list.txt")
            try context.tree.write("list.tmp", "list 2")
            try context.tree.rename("list.tmp", to: "list.txt")
            try context.tree.rename("list.txt", to: "archive/list.txt")
            try context.tree.write("list.tmp", "list 3")
            try context.tree.rename("list.tmp", to: "list.txt")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("saves moved on at once beneath a held consumer")
            // The same, read as it comes.
            try context.tree.write("doc.tmp", "version 2")
            try context.tree.rename("doc.tmp", to: "doc.txt")
            try context.tree.rename("doc.txt", to: "archive/doc.txt")
            try await watch.sync()
            try watch.assertReplayMatchesDisk("a save moved on at once, no one held")
        },
        ConformanceScenario(35, "a rewrite that keeps size and mtime, right after a rename, is modified") { context in
            try context.tree.write("moving.txt", "before the move")
            try context.tree.makeDirectories("dir/sub")
            try context.tree.write("dir/sub/inner.txt", "inner one")
            let watch = try await context.watch()
            // Renamed and rewritten in one go, the file itself and one carried by its directory.
            try context.tree.rename("moving.txt", to: "moved.txt")
            try context.tree.rewriteKeepingTimes("moved.txt", "after  the move")
            try context.tree.rename("dir", to: "dir2")
            try context.tree.rewriteKeepingTimes("dir2/sub/inner.txt", "inner two")
            try await watch.sync()
            try watch.expect(.modified, "moved.txt")
            try watch.expect(.modified, "dir2/sub/inner.txt")
            try watch.assertReplayMatchesDisk("files present at ready")

            try context.tree.write("late.txt", "1111")
            try await watch.sync()
            let index = watch.eventCount
            try context.tree.rename("late.txt", to: "later.txt")
            try context.tree.rewriteKeepingTimes("later.txt", "2222")
            try await watch.sync()
            try watch.expect(.modified, "later.txt", since: index)
            try watch.assertReplayMatchesDisk("a file created after ready")
        },
    ]
}
