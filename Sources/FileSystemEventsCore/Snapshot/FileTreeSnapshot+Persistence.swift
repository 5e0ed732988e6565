public import SystemPackage
import Dispatch

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
        return try decoded(from: bytes(ofSnapshotAt: path), file: path, root: root)
    }

    /// The bytes of the snapshot file at `path` (absolute), unchecked.
    private static func bytes(ofSnapshotAt path: FilePath) throws(SnapshotFileError) -> [UInt8] {
        let contents: WholeFile.Contents
        do {
            contents = try WholeFile.read(path)
        } catch {
            if error.call == "open" && error.errno == .noSuchFileOrDirectory { throw .notFound(path) }
            throw .unreadable(path, call: error.call, errno: error.errno)
        }
        guard case .bytes(let bytes) = contents else { throw .notASnapshot(path) }
        return bytes
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

    /// Loads the snapshot saved at `file` and rescans its tree: the events that turn the saved
    /// tree into today's (as ``update()`` returns them), and the snapshot of today's tree.
    ///
    /// The same as ``load(from:root:)`` followed by ``update()``, but the file's entries are
    /// decoded on a second thread while the tree is rescanned with the options its header
    /// records, so catching up after a restart costs about one scan of the tree rather than
    /// a load and then a scan. Every check of ``load(from:root:)`` still applies: a file that
    /// does not load is an error, whatever the scan found.
    public static func changes(sinceSnapshotAt file: FilePath, root: FilePath) throws(ChangesError) -> (events: [FileSystemEvent], snapshot: FileTreeSnapshot) {
        let path = WatchOptions.absolute(file)
        let requested = WatchOptions.absolute(root)
        let bytes: [UInt8]
        do {
            bytes = try Self.bytes(ofSnapshotAt: path)
        } catch {
            throw .snapshotFile(error)
        }
        guard let scanner = SnapshotArchive.scanner(in: bytes) else {
            // The header does not read: the full decode says exactly why.
            do {
                _ = try decoded(from: bytes, file: path, root: requested)
            } catch {
                throw .snapshotFile(error)
            }
            throw .snapshotFile(.corrupted(path, reason: "the header does not decode"))
        }
        let decoding = BackgroundDecode(bytes: bytes, file: path, root: requested)
        let scanned: Result<SnapshotScanner.Result, FileSystemEventsError>
        do {
            scanned = .success(try scanner.scan(root: requested))
        } catch {
            scanned = .failure(error)
        }
        var saved: FileTreeSnapshot
        switch decoding.wait() {
        case .success(let snapshot): saved = snapshot
        case .failure(let error): throw .snapshotFile(error)
        }
        switch scanned {
        case .success(let result):
            // Neither tree is held by anyone else: the diff may consume the saved one.
            let newer = result.snapshot
            let events = Self.events(from: saved.storage.snapshot, to: newer, root: requested, copyingOld: false, copyingNew: false,
                                     replacedRootArrives: true)
            let scanner = saved.scanner
            // The consumed tree is as large as today's (one free per entry and per name);
            // nobody waits for that, so another thread does it.
            ReleaseElsewhere.release(&saved)
            // What could not be listed goes with it (``unreadableDirectories``): a caller says so.
            return (events, FileTreeSnapshot(root: requested, snapshot: newer, scanner: scanner, unreadable: result.unreadable))
        case .failure(let error):
            throw .scan(error)
        }
    }

    /// Why ``changes(sinceSnapshotAt:root:)`` failed: the saved file, or the tree's rescan.
    public enum ChangesError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The saved snapshot could not be read, or is not exactly what was saved.
        case snapshotFile(SnapshotFileError)
        /// The tree could not be scanned again.
        case scan(FileSystemEventsError)

        /// The message of the error inside.
        public var description: String {
            switch self {
            case .snapshotFile(let error): return error.description
            case .scan(let error): return error.description
            }
        }
    }

    /// Whether the tree is scanned recursively; a loaded snapshot keeps what it was taken with.
    public var isRecursive: Bool { scanner.isRecursive }
    /// Whether symlinks to directories are traversed.
    public var followsSymlinks: Bool { scanner.followsSymlinks }
    /// The filter the tree was scanned with.
    public var filter: PathFilter { scanner.filter }
}

/// Drops the last reference to a large tree on a thread of its own, so that freeing it (one
/// free per entry and per name) does not hold up the caller; inline if no thread can be made.
private enum ReleaseElsewhere {
    private final class Holder: @unchecked Sendable {
        // Set once before the thread starts, dropped on that thread only.
        var tree: FileTreeSnapshot.Storage?
        init(_ tree: FileTreeSnapshot.Storage) { self.tree = tree }
    }

    /// Leaves `snapshot` holding an empty tree and releases its old one elsewhere.
    static func release(_ snapshot: inout FileTreeSnapshot) {
        let holder = Holder(snapshot.storage)
        snapshot.storage = FileTreeSnapshot.Storage(RootSnapshot(status: snapshot.storage.snapshot.status, tree: nil))
        if !ProducerThread.start({ holder.tree = nil }) { holder.tree = nil }
    }
}

/// A snapshot file's entries decoded on a thread of their own (inline if none can be made).
private final class BackgroundDecode: @unchecked Sendable {
    // Written once by the decoding thread before `done` is signalled, read after the wait.
    private var result: Result<FileTreeSnapshot, SnapshotFileError>?
    private let done = DispatchSemaphore(value: 0)

    init(bytes: [UInt8], file: FilePath, root: FilePath) {
        let decode: @Sendable () -> Void = { [self] in
            result = Result { () throws(SnapshotFileError) in try FileTreeSnapshot.decoded(from: bytes, file: file, root: root) }
            done.signal()
        }
        if !ProducerThread.start(decode) { decode() }
    }

    func wait() -> Result<FileTreeSnapshot, SnapshotFileError> {
        done.wait()
        return result ?? .failure(.corrupted(FilePath(), reason: "the decode did not finish"))
    }
}
