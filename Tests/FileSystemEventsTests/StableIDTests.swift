import FileSystemEvents
import FileSystemEventsConformance
@testable import FileSystemEventsCore
import Foundation
import Testing

/// `WatchOptions.stampsStableIDs` on every backend: IDs stamped at `ready` without touching
/// modification times or reporting the stamps' own echoes, kept across renames and moves
/// between levels, a `cp -a` copy told as a duplicate with a fresh ID, a file moved out and
/// back keeping its ID, the IDs read again (not rewritten) by a later watch, and a file system
/// without extended attributes falling back to derived IDs with one diagnostic.
@Suite(.serialized) struct StableIDTests {
    static func storedID(_ path: FilePath) -> FileStableID? {
        guard case .success(let value?) = Syscalls.extendedAttribute(FileStableID.extendedAttributeName, of: path.bytes) else { return nil }
        return FileStableID(bytes: value)
    }

    static func modificationTime(_ path: FilePath) throws -> Int64 {
        try Syscalls.status(path).get().modificationTime
    }

    static func options(_ root: FilePath) -> WatchOptions {
        var options = WatchOptions(roots: [root])
        options.pollInterval = .milliseconds(20)
        options.stampsStableIDs = true
        return options
    }

    static func copyPreservingAttributes(_ source: FilePath, to destination: FilePath) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/cp")
        process.arguments = ["-a", source.string, destination.string]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("IDs are stamped at ready, kept across renames, told apart for copies, kept out and back, and read again later")
    func lifecycle() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            try tree.makeDirectories("docs/deep")
            try tree.write("docs/a.txt", "a")
            try tree.write("docs/deep/b.txt", "b")
            let a = tree.path("docs/a.txt")
            let mtimeBefore = try Self.modificationTime(a)
            let source = try backend.makeSource(options: Self.options(tree.root))
            var idOfA: FileStableID?
            let marker = "marker-\(tree.uniqueNumber())"
            let first = try await observe(source.updates(), onReady: {
                try tree.write(RelativePath(marker), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker && $0.kind == .created })
            idOfA = Self.storedID(a)
            #expect(idOfA != nil, "\(backend): a.txt was not stamped at ready")
            #expect(Self.storedID(tree.path("docs")) != nil && Self.storedID(tree.path("docs/deep/b.txt")) != nil, "\(backend): not every item was stamped")
            #expect(try Self.modificationTime(a) == mtimeBefore, "\(backend): stamping changed a modification time")
            let echoes = first.events.filter { $0.path.lastComponent?.string != marker }
            #expect(echoes.isEmpty, "\(backend): the stamps' own echoes were reported: \(echoes)")
            let markerEvent = first.events.first { $0.path.lastComponent?.string == marker }
            #expect(markerEvent?.stableID != nil && markerEvent?.stableID == Self.storedID(tree.path(RelativePath(marker))))

            // A second watch: the same IDs, read, not rewritten; then renames, a copy, a move out and back.
            let outside = tree.path("out.txt", in: .outside)
            let second = try await observe(source.updates(), onReady: {
                try tree.rename("docs/a.txt", to: "docs/deep/a-moved.txt")
                try tree.rename("docs/deep", to: "deeper")
                try Self.copyPreservingAttributes(tree.path("deeper/b.txt"), to: tree.path("b-copy.txt"))
                try tree.rename("deeper/a-moved.txt", to: "out.txt", to: .outside)
                try tree.rename("out.txt", to: "back.txt", from: .outside)
                try tree.write(RelativePath(marker + "-2"), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker + "-2" && $0.kind == .created })
            _ = outside
            #expect(Self.storedID(tree.path("back.txt")) == idOfA, "\(backend): the ID did not survive renames and a move out and back")
            let back = second.events.last { $0.path == tree.path("back.txt") }
            #expect(back?.stableID == idOfA && back?.duplicateOf == nil, "\(backend): the file moved back: \(String(describing: back))")
            // `cp -a` copies the attribute after creating the file: the duplicate is told on its
            // `created` when the attribute was there by then, else on the change that brings it.
            let copyEvents = second.events.filter { $0.path == tree.path("b-copy.txt") }
            let copy = copyEvents.first { $0.duplicateOf != nil }
            // The original's path at that point of the events: a poll may list the copy before
            // the directory's rename (in path order), the kernel after it.
            #expect(copy?.duplicateOf == tree.path("deeper/b.txt") || copy?.duplicateOf == tree.path("docs/deep/b.txt"),
                    "\(backend): the copy: \(copyEvents)")
            #expect(copyEvents.first?.kind == .created, "\(backend): the copy's first event: \(copyEvents)")
            let idOfB = Self.storedID(tree.path("deeper/b.txt"))
            let copyID = copyEvents.last { $0.stableID != nil }?.stableID
            #expect(copyID != nil && copyID != idOfB && copyID == Self.storedID(tree.path("b-copy.txt")),
                    "\(backend): the copy keeps no fresh ID of its own")
            for event in second.events where event.kind == .renamed {
                #expect(event.stableID != nil, "\(backend): a rename without an ID: \(event)")
            }
        }
    }

    /// A writer that makes files and renames them at once, as fast as it can: a watch that
    /// keeps up reads each creation apart from its rename, and the creation used to go out
    /// without an ID (most of them, on the kernel backends), and some files were never stamped.
    @Test("a burst of files made and renamed at once, some moved on again: every event carries the ID its file ends up with")
    func burstOfCreateAndRename() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            try tree.makeDirectories("a")
            try tree.makeDirectories("b")
            let marker = "marker-\(tree.uniqueNumber())"
            let count = 200
            let observed = try await observe(try backend.makeSource(options: Self.options(tree.root)).updates(), onReady: {
                for index in 0..<count {
                    try tree.write(RelativePath("a/f\(index)"), "x")
                    try tree.rename(RelativePath("a/f\(index)"), to: RelativePath("b/f\(index)"))
                    if index % 3 == 0 { try tree.rename(RelativePath("b/f\(index)"), to: RelativePath("a/g\(index)")) }
                }
                try tree.write(RelativePath(marker), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker && $0.kind == .created })
            var finalID: [FileIdentity: FileStableID] = [:]
            for index in 0..<count {
                let path = index % 3 == 0 ? tree.path(RelativePath("a/g\(index)")) : tree.path(RelativePath("b/f\(index)"))
                let id = Self.storedID(path)
                #expect(id != nil, "\(backend): \(path) was never stamped")
                if let id, case .success(let status) = Syscalls.status(path) { finalID[status.identity] = id }
            }
            let files = observed.events.filter { $0.itemType == .file && $0.path.lastComponent?.string != marker }
            let without = files.filter { $0.stableID == nil }
            #expect(without.isEmpty, "\(backend): \(without.count) of \(files.count) events without an ID, as \(without.prefix(3))")
            let wrong = files.filter { event in event.identity.flatMap { finalID[$0] }.map { $0 != event.stableID } ?? false }
            #expect(wrong.isEmpty, "\(backend): events with another ID than their file's: \(wrong.prefix(3))")
        }
    }

    @Test("a file system without extended attributes: IDs derived from identity, one diagnostic")
    func withoutExtendedAttributes() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("mnt")
        let mountPoint = tree.path("mnt")
        guard mount("ramfs", mountPoint.string, "ramfs", 0, nil) == 0 else {
            // Not root (no CAP_SYS_ADMIN): nowhere to make such a file system here.
            return
        }
        defer { umount2(mountPoint.string, Int32(MNT_DETACH)) }
        try tree.write("mnt/file.txt", "x")
        for backend in availableBackends {
            let source = try backend.makeSource(options: Self.options(mountPoint))
            let marker = "made-\(tree.uniqueNumber())"
            let observed = try await observe(source.updates(), onReady: {
                try tree.write(RelativePath("mnt/\(marker)"), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker })
            let created = observed.events.first { $0.path.lastComponent?.string == marker }
            #expect(created?.stableID != nil, "\(backend): no derived ID: \(String(describing: created))")
            #expect(observed.diagnostics.filter { $0.problem == .stableIDsNotStored }.count == 1, "\(backend): \(observed.diagnostics)")
        }
    }

    /// The diagnostics `source` sends up to its `ready`; `nil` past the deadline.
    static func diagnosticsUntilReady(of source: some FileSystemEventSource) async throws -> [FileSystemWatchDiagnostic]? {
        try await untilDeadline(.seconds(30)) {
            var diagnostics: [FileSystemWatchDiagnostic] = []
            for try await update in source.updates() {
                switch update {
                case .diagnostic(let diagnostic): diagnostics.append(diagnostic)
                case .ready: return diagnostics
                default: break
                }
            }
            return diagnostics
        }
    }

    @Test("a read-only tree is watched without stamping, with one diagnostic")
    func readOnlyTree() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("ro")
        let mountPoint = tree.path("ro")
        guard mount("tmpfs", mountPoint.string, "tmpfs", 0, nil) == 0 else {
            return  // not root (no CAP_SYS_ADMIN): no read-only file system to make here
        }
        defer { umount2(mountPoint.string, Int32(MNT_DETACH)) }
        try tree.write("ro/file.txt", "x")
        guard mount("tmpfs", mountPoint.string, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), nil) == 0 else {
            Issue.record("remounting the tmpfs read-only failed: \(errno)")
            return
        }
        for backend in availableBackends {
            let source = try backend.makeSource(options: Self.options(mountPoint))
            let diagnostics = try await Self.diagnosticsUntilReady(of: source)
            #expect(diagnostics?.filter { $0.problem == .stableIDsNotStored && $0.errno == .readOnlyFileSystem }.count == 1,
                    "\(backend): \(String(describing: diagnostics))")
            #expect(Self.storedID(tree.path("ro/file.txt")) == nil)
        }
    }

    @Test("a full file system: what cannot be stamped goes without an ID, and one diagnostic says why")
    func fullFileSystem() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("full")
        let mountPoint = tree.path("full")
        // tmpfs charges extended attributes to the space it reserves per inode: with every
        // inode taken, no ID can be stored.
        guard mount("tmpfs", mountPoint.string, "tmpfs", 0, "size=1m,nr_inodes=48") == 0 else {
            return  // not root (no CAP_SYS_ADMIN): no small file system to fill here
        }
        defer { umount2(mountPoint.string, Int32(MNT_DETACH)) }
        var made = 0
        while made < 100, (try? tree.write(RelativePath("full/file\(made)"), "")) != nil { made += 1 }
        for backend in availableBackends {
            let source = try backend.makeSource(options: Self.options(mountPoint))
            let diagnostics = try await Self.diagnosticsUntilReady(of: source)
            #expect(diagnostics?.filter { $0.problem == .stableIDsNotStored && $0.errno == .noSpace }.count == 1,
                    "\(backend), \(made) files: \(String(describing: diagnostics))")
        }
        #expect((0..<made).contains { Self.storedID(tree.path(RelativePath("full/file\($0)"))) == nil }, "every file of a full file system stamped")
    }

    @Test("a hard link shares its inode's ID and is no duplicate")
    func hardLinks() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            try tree.write("original.txt", "o")
            let source = try backend.makeSource(options: Self.options(tree.root))
            let marker = "marker-\(tree.uniqueNumber())"
            let observed = try await observe(source.updates(), onReady: {
                try tree.hardLink("linked.txt", to: "original.txt")
                try tree.write(RelativePath(marker), "m")
            }, untilEvent: { $0.path.lastComponent?.string == marker && $0.kind == .created })
            let original = Self.storedID(tree.path("original.txt"))
            let linked = observed.events.first { $0.path == tree.path("linked.txt") && $0.kind == .created }
            #expect(linked?.duplicateOf == nil && linked?.stableID == original && original != nil,
                    "\(backend): a hard link was taken for a copy: \(String(describing: linked)), original \(String(describing: original))")
        }
    }

    /// The ID stored on `name` in the directory `directory`, read through the descriptor's
    /// short `/proc/self/fd` path: not through the item's own path, however deep it is.
    static func storedID(_ name: String, in directory: CInt) -> FileStableID? {
        storedID(FilePath("/proc/self/fd/\(directory)/\(name)"))
    }

    @Test("items deeper than PATH_MAX are stamped at ready and as they are created")
    func belowPathMax() async throws {
        for backend in availableBackends {
            let tree = try ScratchTree()
            // 24 directories with 200-byte names: the bottom's path is over 4,800 bytes long.
            var bottom = open(tree.root.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(bottom >= 0)
            var path = tree.root
            for level in 0..<24 {
                let name = String(repeating: Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(level % 26))), count: 200)
                try #require(mkdirat(bottom, name, 0o755) == 0)
                let next = openat(bottom, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                try #require(next >= 0)
                close(bottom)
                bottom = next
                path.append(name)
            }
            let deepest = bottom
            defer { close(deepest) }
            try #require(path.string.utf8.count > Int(PATH_MAX))
            let made = openat(bottom, "at-start.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            try #require(made >= 0)
            close(made)
            let source = try backend.makeSource(options: Self.options(tree.root))
            let marker = "marker-\(tree.uniqueNumber())"
            let observed = try await observe(source.updates(), onReady: {
                let created = openat(deepest, marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                if created >= 0 { close(created) }
            }, untilEvent: { $0.path.lastComponent?.string == marker && $0.kind == .created })
            #expect(Self.storedID("at-start.txt", in: deepest) != nil, "\(backend): the deep file was not stamped at ready")
            let created = observed.events.first { $0.path.lastComponent?.string == marker && $0.kind == .created }
            #expect(created?.stableID != nil && created?.stableID == Self.storedID(marker, in: deepest),
                    "\(backend): the deep file made after ready: \(String(describing: created?.stableID))")
        }
    }
}
