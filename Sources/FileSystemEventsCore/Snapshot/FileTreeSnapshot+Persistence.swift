public import SystemPackage

/// Snapshots that outlive the process: "what changed while the app was not running".
///
///     // at shutdown (or after each batch of events the app has applied)
///     try FileTreeSnapshot.scan(root).save(to: stateFile)
///
///     // at launch
///     var snapshot = try FileTreeSnapshot.load(from: stateFile, root: root)
///     let events = try snapshot.update()   // the saved tree -> today's, replayable
///     apply(events)
///     try snapshot.save(to: stateFile)
///
/// The file format is specified in docs/snapshot-format.md. Saving replaces the file
/// atomically, so a crash while saving leaves the previous snapshot intact; loading refuses a
/// truncated, corrupted, other-version or other-root file with a ``SnapshotFileError``
/// rather than produce a wrong set of events.
extension FileTreeSnapshot {
    /// Writes this snapshot to `file`, replacing any file there atomically: a temporary file
    /// in the same directory is written and `fsync`ed, renamed over `file`, and the directory
    /// `fsync`ed.
    public func save(to file: FilePath) throws(SnapshotFileError) {
        let target = WatchOptions.absolute(file)
        do {
            try WholeFile.replace(target, with: encoded())
        } catch {
            throw .unwritable(target, call: error.call, errno: error.errno)
        }
    }

    /// Reads a snapshot saved by ``save(to:)`` and checks that it was taken of `root` (made
    /// absolute the same way ``scan(_:isRecursive:followsSymlinks:filter:)`` does).
    ///
    /// The loaded snapshot keeps the scan options it was taken with, so ``update()`` rescans
    /// the same tree the same way and returns the changes since it was saved.
    public static func load(from file: FilePath, root: FilePath) throws(SnapshotFileError) -> FileTreeSnapshot {
        let path = WatchOptions.absolute(file)
        let contents: WholeFile.Contents
        do {
            contents = try WholeFile.read(path)
        } catch {
            if error.call == "open" && error.errno == .noSuchFileOrDirectory { throw .notFound(path) }
            throw .unreadable(path, call: error.call, errno: error.errno)
        }
        guard case .bytes(let bytes) = contents else { throw .notASnapshot(path) }
        return try decoded(from: bytes, file: path, root: root)
    }

    /// The bytes ``save(to:)`` writes.
    public func encoded() -> [UInt8] {
        SnapshotArchive.encode(root: root.bytes, scanner: scanner, snapshot: rootSnapshot)
    }

    /// A snapshot from the bytes of a saved file; `file` only names it in errors.
    public static func decoded(from bytes: [UInt8], file: FilePath, root: FilePath) throws(SnapshotFileError) -> FileTreeSnapshot {
        let contents = try SnapshotArchive.decode(bytes, file: file)
        let requested = WatchOptions.absolute(root)
        guard contents.root == requested.bytes else {
            throw .differentRoot(file, recorded: FilePath(bytes: contents.root), requested: requested)
        }
        return FileTreeSnapshot(root: requested, snapshot: contents.snapshot, scanner: contents.scanner)
    }

    /// The events that turn `saved` (an older snapshot of the same root, typically loaded from
    /// a file) into this one, in replay order: the same contract as a live watch, with moves
    /// and renames recovered by identity across levels. Neither snapshot is consumed.
    public func changes(since saved: FileTreeSnapshot) -> [FileSystemEvent] {
        Self.events(from: saved, to: self)
    }

    /// Whether the tree is scanned recursively; a loaded snapshot keeps what it was taken with.
    public var isRecursive: Bool { scanner.isRecursive }
    /// Whether symlinks to directories are traversed.
    public var followsSymlinks: Bool { scanner.followsSymlinks }
    /// The filter the tree was scanned with.
    public var filter: PathFilter { scanner.filter }
}
