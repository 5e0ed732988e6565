public import FileSystemEventsCore
public import SystemPackage

/// Follows a file by name, like `tail -F`, and delivers every byte written to it exactly once,
/// in order, across rotation, truncation and replacement.
///
/// Iterating delivers ``FileFollowerUpdate/data(_:)`` chunks (bytes, the file's generation,
/// their offset) and ``FileFollowerUpdate/notice(_:)`` notices (truncated, replaced, removed,
/// appeared). ``lines`` gives the same as whole lines.
///
/// What it handles, and how:
/// - **Appends** of any size: every wake-up reads to the end of the file, so no event is
///   needed per write.
/// - **Rotation by rename** (`logrotate` with `create`) and **delete and recreate**: the old
///   file stays open and is read to its end, including what the writer appends to it after
///   the rename, until the new file has data (the writer has moved on) or
///   ``Options/rotationGracePeriod`` has passed; then the new file is delivered from its first byte.
/// - **Truncation** in place (`copytruncate`, `: > file`): reported, and delivery restarts at 0.
/// - **Atomic replace** (a temp file renamed over the path): reported as replaced; the new
///   file is delivered from its first byte.
/// - **A path that does not exist yet**, or whose directory does not: the follower watches the
///   nearest existing ancestor and follows the file when it appears.
/// - **A symlink re-pointed** to another file: the new target is followed from its first byte.
/// - **Rotations with no pause**: a file made at the path and renamed away before the follower
///   could look is found where it went, from the source's events (a rename from the path, or
///   ``FileSystemEvent/madeAt``), and delivered in its place among the others.
///
/// Nothing is delivered before the source is listening (its `ready`): a writer that waits for
/// the first bytes to come out and then rotates with no pause loses nothing.
///
/// It works on any ``FileSystemEventSource``: the source watches the path's directory
/// (non-recursively) and its events only mean "look again", and where a file went. With a
/// polling source, growth is noticed by size and identity once per poll interval.
///
/// Limits no follower by name can escape: a truncation followed by a rewrite to at least the
/// delivered length before the follower looks (within one poll interval for polling) reads
/// as an append; with polling, a file created and renamed away again within one poll
/// interval is never seen. See docs/following-files.md.
///
/// Ending the iteration (cancelling its task) delivers what is already readable, then closes
/// every descriptor; breaking out of the loop closes them without delivering more.
///
/// ```swift
/// let follower = FileFollower(path: "/var/log/app.log", backend: .auto)
/// for try await line in follower.lines {
///     if case .line(let line) = line { print(line.text) }
/// }
/// ```
public struct FileFollower: AsyncSequence, Sendable {
    /// Chunks of the file's bytes and notices of what happened to it.
    public typealias Element = FileFollowerUpdate
    /// What stops the follower: the path cannot be followed, or the source fails.
    public typealias Failure = FileSystemEventsError
    /// Makes the source that watches the path's directory, from the options the follower needs.
    public typealias SourceFactory = @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource

    /// The followed path, absolute (as ``WatchOptions/absolute(_:)`` makes it).
    public let path: FilePath
    /// Read when an iterator is made: changing them affects only iterators made afterwards.
    public var options: Options
    let makeSource: SourceFactory

    /// - Parameters:
    ///   - path: the file to follow; relative paths are resolved against the working directory now.
    ///   - options: where to start, chunk sizes, and how long to keep a rotated file open.
    ///   - makeSource: makes the source from the options the follower needs (one directory,
    ///     not recursive); any backend will do (`FileSystemEvents` adds initialisers that take
    ///     a backend by name or a configuration).
    public init(path: FilePath, options: Options = Options(), makeSource: @escaping SourceFactory) {
        self.path = WatchOptions.absolute(path)
        self.options = options
        self.makeSource = makeSource
    }

    /// The same follow as whole lines, keeping a partial last line until it is completed.
    public var lines: FileFollowerLines { FileFollowerLines(follower: self) }

    /// Each iterator follows the path on its own, with its own descriptors and source.
    public func makeAsyncIterator() -> Iterator {
        Iterator(session: FileFollowerSession(follower: self))
    }

    /// Opens the file and starts watching on the first call to `next`, which throws before
    /// anything is delivered when the path cannot be followed (an ancestor is a file, the path
    /// is a directory, the file may not be read, the backend cannot start).
    public struct Iterator: AsyncIteratorProtocol {
        let session: FileFollowerSession

        /// The next chunk or notice, waiting until the file changes; `nil` once following has ended.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(FileSystemEventsError) -> FileFollowerUpdate? {
            try await session.next(isolation: actor)
        }

        /// The same as ``next(isolation:)``, on no actor.
        public mutating func next() async throws(FileSystemEventsError) -> FileFollowerUpdate? {
            try await session.next(isolation: nil)
        }
    }
}
