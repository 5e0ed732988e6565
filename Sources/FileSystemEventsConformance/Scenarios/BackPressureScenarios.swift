import FileSystemEventsCore

/// Small enough that a held consumer stops the backend at once, so the scenario's own events
/// wait in the kernel queue behind the filler while the tree changes beneath them.
let backPressureBufferLimit = 8

extension ConformanceSuite {
    /// Each scenario holds the consumer (``WatchSession/hold(queuing:)``), changes the tree
    /// beneath the queued events, releases, checks the replay, and then writes inside every
    /// directory it made, which only a backend that watches the right directories reports.
    static let backPressureScenarios: [ConformanceScenario] = [
        ConformanceScenario(38, "a directory renamed and its path recreated beneath queued events", runsUnprivileged: true) { context in
            try context.tree.makeDirectories("a/x")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 200)
            try context.tree.rename("a", to: "b")
            try context.tree.makeDirectories("a/x")
            try context.tree.write("b/x/f", "f")
            try context.tree.write("a/x/g", "g")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("mv a b; mkdir -p a/x beneath queued events, a/x present at ready")

            // The same, with the first directory itself made while the consumer is held.
            try await watch.hold(queuing: 200)
            try context.tree.makeDirectories("c/x")
            try context.tree.rename("c", to: "d")
            try context.tree.makeDirectories("c/x")
            try context.tree.write("d/x/f", "f")
            try context.tree.write("c/x/g", "g")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("mkdir -p c/x; mv c d; mkdir -p c/x, all beneath queued events")

            let index = watch.eventCount
            for directory in ["a/x", "b/x", "c/x", "d/x"] {
                try context.tree.write(RelativePath(directory) / "after.txt", directory)
            }
            try await watch.sync()
            for directory in ["a/x", "b/x", "c/x", "d/x"] {
                try watch.expect(.created, RelativePath(directory) / "after.txt", since: index)
            }
            try watch.assertReplayMatchesDisk("files created in every directory afterwards")
        },
        ConformanceScenario(39, "a lagging watcher: mkdir T; mv A/B T and a symlink renamed away, behind 2,000 queued creates",
                            runsUnprivileged: true) { context in
            try context.tree.makeDirectories("A/B/C")
            for name in ["one", "two", "three"] { try context.tree.write(RelativePath("A/B/C/\(name).txt"), name) }
            try context.tree.makeDirectories("P/Q")
            try context.tree.write("P/Q/q.txt", "q")
            try context.tree.write("F", "a file")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 2_000)
            // rename(2) onto the fresh, empty T: B replaces it, so T/C holds B's files.
            try context.tree.makeDirectory("T")
            try context.tree.rename("A/B", to: "T")
            // mv P/Q into a fresh directory.
            try context.tree.makeDirectory("U")
            try context.tree.rename("P/Q", to: "U/Q")
            // A name whose type changes while its creation is still queued.
            try context.tree.symlink("L", pointingTo: "x")
            try context.tree.rename("L", to: "S")
            try context.tree.rename("F", to: "L")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("mkdir T; mv A/B T; mkdir U; mv P/Q U/Q; ln -s x L; mv L S; mv F L")

            let index = watch.eventCount
            try context.tree.write("T/C/after.txt", "after")
            try context.tree.write("U/Q/after.txt", "after")
            try await watch.sync()
            try watch.expect(.created, "T/C/after.txt", since: index)
            try watch.expect(.created, "U/Q/after.txt", since: index)
            try watch.assertReplayMatchesDisk("files created in the moved directories afterwards")
        },
        ConformanceScenario(92, "a name created, renamed away and taken by another item's rename, read one event at a time behind queued events") { context in
            // A one-event buffer makes the watcher look at each creation as soon as it reads it,
            // with the rest of the queue unread: the name then holds the item renamed onto it
            // later, which the watcher must not report a second time under that name.
            try context.tree.write("F", "a file")
            try context.tree.makeDirectories("D/inside")
            try context.tree.write("D/inside/d.txt", "d")
            try context.tree.makeDirectory("sub")
            try context.tree.write("sub/G", "another file")
            let watch = try await context.watch { $0.bufferLimit = 1 }
            try await watch.hold(queuing: 300)
            try context.tree.symlink("L", pointingTo: "x")
            try context.tree.rename("L", to: "S")
            try context.tree.rename("F", to: "L")
            try context.tree.makeDirectory("X")
            try context.tree.rename("X", to: "Y")
            try context.tree.rename("D", to: "X")
            try context.tree.write("sub/N", "new")
            try context.tree.rename("sub/N", to: "sub/M")
            try context.tree.rename("sub/G", to: "sub/N")
            // A hard link is a second name of a live item, not a move: it stays reported.
            try context.tree.hardLink("sub/H", to: "sub/N")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("ln -s x L; mv L S; mv F L; mkdir X; mv X Y; mv D X; echo > sub/N; mv sub/N sub/M; mv sub/G sub/N; ln sub/N sub/H")
            // Nor is an item reported created at a name it took only later: L was a symlink when
            // it was made, and F, which holds the name now, arrived there by a rename; so did D
            // at X. (A scan may add `modified`: the rename changed the inode's ctime.) After an
            // overflow the events are a reconciliation, which owes the replay and nothing more;
            // so are a scanning source's, whose scan may fall between two of the steps (a
            // polling source shared by a watcher goes on scanning while this consumer is held).
            let overflowed = watch.scenarioEvents().contains { $0.kind == .overflow }
            for (name, previous) in [("L", "F"), ("X", "D")] where !overflowed && watch.source.capabilities.isEventDriven {
                let path = context.tree.path(RelativePath(name))
                let naming = watch.scenarioEvents().filter { $0.path == path || $0.path.starts(with: path) }
                let first = naming.first
                try check(first?.kind == .renamed && first?.previousPath == context.tree.path(RelativePath(previous))
                              && !naming.contains { $0.kind == .created || $0.kind == .removed },
                          "\(name) was reported as \(naming.map { "\($0.kind) \($0.path)" }), not as the rename of \(previous)")
            }
            try context.tree.write("X/inside/after.txt", "after")
            try await watch.sync()
            try watch.expect(.created, "X/inside/after.txt")
            try watch.assertReplayMatchesDisk("a file created in the directory renamed onto X")
        },
        ConformanceScenario(94, "items exchanged just after they were created, read one event at a time behind queued events") { context in
            // With a one-event buffer each creation is examined while the exchange that follows
            // it is still queued, so the name holds the other item by then. An exchange of such
            // names must not swap what the watcher reported: it reported each name holding
            // what the exchange put there.
            try context.tree.write("kept", "known before the watch")
            let watch = try await context.watch { $0.bufferLimit = 1 }
            try await watch.hold(queuing: 300)
            try context.tree.write("x", "first")
            try context.tree.write("y", "second")
            try context.tree.exchange("x", "y")
            try context.tree.makeDirectory("d")
            try context.tree.write("f", "a file that becomes d")
            try context.tree.exchange("d", "f")
            try context.tree.write("f/inside", "in the directory now at f")
            try context.tree.write("n", "new")
            try context.tree.exchange("n", "kept")
            watch.resume()
            try await watch.sync()
            try watch.expectCreated(endingAt: "f/inside")
            try watch.assertReplayMatchesDisk("x <-> y, d <-> f, n <-> kept, each just after its creation")
            try context.tree.write("f/after", "after")
            try context.tree.exchange("x", "kept")
            try await watch.sync()
            try watch.expect(.created, "f/after")
            try watch.assertReplayMatchesDisk("exchanged again once the queue drained")
        },
        ConformanceScenario(70, "renames in a chain and a directory swap beneath queued events", runsUnprivileged: true) { context in
            try context.tree.makeDirectories("p/q")
            try context.tree.write("p/q/deep.txt", "deep")
            try context.tree.makeDirectories("u/inner")
            try context.tree.write("u/inner/u.txt", "u")
            try context.tree.makeDirectories("v")
            try context.tree.write("v/v.txt", "v")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 500)
            // p moves away, a new p appears, the old one moves into it, and its old name returns.
            try context.tree.rename("p", to: "r")
            try context.tree.makeDirectory("p")
            try context.tree.rename("r", to: "p/r")
            try context.tree.makeDirectories("r/q")
            try context.tree.write("p/r/q/f.txt", "f")
            try context.tree.write("r/q/g.txt", "g")
            // u and v trade places through a temporary name.
            try context.tree.rename("u", to: "swap-tmp")
            try context.tree.rename("v", to: "u")
            try context.tree.rename("swap-tmp", to: "v")
            try context.tree.write("u/new.txt", "in the old v")
            try context.tree.write("v/inner/new.txt", "in the old u")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("rename chain and swap")

            let index = watch.eventCount
            let directories: [RelativePath] = ["p", "p/r/q", "r/q", "u", "v", "v/inner"]
            for directory in directories { try context.tree.write(directory / "after.txt", "after") }
            try await watch.sync()
            for directory in directories { try watch.expect(.created, directory / "after.txt", since: index) }
            try watch.assertReplayMatchesDisk("files created in every directory afterwards")
        },
        ConformanceScenario(71, "trees deleted and their names recreated as other types beneath queued events",
                            runsUnprivileged: true) { context in
            try context.tree.makeDirectories("w/z")
            try context.tree.write("w/z/old.txt", "old")
            try context.tree.write("file-then-dir", "a file")
            try context.tree.makeDirectories("dir-then-link/inside")
            let watch = try await context.watch { $0.bufferLimit = backPressureBufferLimit }
            try await watch.hold(queuing: 500)
            // A directory becomes a file, then a directory again with other contents.
            try context.tree.removeTree("w")
            try context.tree.write("w", "briefly a file")
            try context.tree.remove("w")
            try context.tree.makeDirectories("w/z/y")
            try context.tree.write("w/z/y/new.txt", "new")
            // A file becomes a directory; a directory becomes a symlink to a directory.
            try context.tree.remove("file-then-dir")
            try context.tree.makeDirectories("file-then-dir/sub")
            try context.tree.removeTree("dir-then-link")
            try context.tree.symlink("dir-then-link", pointingTo: "w/z")
            // A directory made and removed entirely beneath the queue.
            try context.tree.makeDirectories("gone/a/b")
            try context.tree.write("gone/a/b/c.txt", "c")
            try context.tree.removeTree("gone")
            watch.resume()
            try await watch.sync()
            try watch.assertReplayMatchesDisk("deleted and recreated as other types")

            let index = watch.eventCount
            let directories: [RelativePath] = ["w/z/y", "file-then-dir/sub"]
            for directory in directories { try context.tree.write(directory / "after.txt", "after") }
            try await watch.sync()
            for directory in directories { try watch.expect(.created, directory / "after.txt", since: index) }
            try watch.assertReplayMatchesDisk("files created in the recreated directories afterwards")
        },
    ]
}
