public import FileSystemEventsCore
public import SystemPackage

/// A folder's entries as a sorted list, kept in sync with the disk: what a document browser,
/// a downloads pane or an inbox view shows.
///
/// Iterating delivers first the whole sorted list (``DirectoryListingUpdate/listing(_:)``), then
/// one ``DirectoryListingUpdate/changes(_:)`` per batch of changes on disk, each with the new
/// list and the step from the previous one (inserts, removals, moves and in-place updates,
/// ready for a table view to animate). It works on any ``FileSystemEventSource``: the source's
/// events only say *which names* to look at again; the listing reads those entries' metadata
/// itself, so every backend gives the same lists.
///
/// Incremental by design: a change costs a `statx` of the changed name and binary searches in
/// the sorted array, not a re-listing and re-sort of the directory, and everything the source
/// delivers within one latency window (or that piled up while the app was busy) becomes one
/// update.
///
/// Stopping is ending the iteration (cancel its task, or `break`); it closes every descriptor.
/// To restart where the app left off, iterate ``resuming(from:)`` with the last list received:
/// its first update brings that list up to date with the changes made meanwhile.
///
/// ```swift
/// let listing = DirectoryListing(directory: "/srv/inbox", options: .init(sortOrder: .modificationTime)) {
///     try FileSystemEventBackend.auto.makeSource(options: $0)
/// }
/// for try await update in listing { show(update.entries) }
/// ```
public struct DirectoryListing: AsyncSequence, Sendable {
    /// The whole list first, then one update per batch of changes.
    public typealias Element = DirectoryListingUpdate
    /// What stops the listing: the directory cannot be listed, or the source fails.
    public typealias Failure = FileSystemEventsError
    /// Makes the source that watches the directory, from the options the listing needs.
    public typealias SourceFactory = @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource

    /// The listed directory, absolute (as ``WatchOptions/absolute(_:)`` makes it).
    public let directory: FilePath
    /// Read when an iterator is made: changing them affects only iterators made afterwards.
    public var options: Options
    let makeSource: SourceFactory
    /// The list the app last received, when resuming.
    let resumedEntries: [DirectoryEntry]?

    /// - Parameters:
    ///   - directory: the directory to list; relative paths are resolved against the working
    ///     directory now.
    ///   - options: recursion, hidden entries, sort order and latency of the listing.
    ///   - makeSource: makes the source from the ``watchOptions`` the listing needs; any backend
    ///     will do (`FileSystemEvents` adds initialisers that take a backend by name).
    public init(directory: FilePath, options: Options = Options(), makeSource: @escaping SourceFactory) {
        self.init(directory: WatchOptions.absolute(directory), options: options, makeSource: makeSource, resumedEntries: nil)
    }

    init(directory: FilePath, options: Options, makeSource: @escaping SourceFactory, resumedEntries: [DirectoryEntry]?) {
        self.directory = directory
        self.options = options
        self.makeSource = makeSource
        self.resumedEntries = resumedEntries
    }

    /// The same listing, started again from `entries`, the list the app last received from a
    /// listing with the same options: its first update is a ``DirectoryListingUpdate/changes(_:)``
    /// from `entries` to the directory as it is now (possibly empty), so the app keeps its rows
    /// and animates only what changed while it was not listening.
    public func resuming(from entries: [DirectoryEntry]) -> DirectoryListing {
        DirectoryListing(directory: directory, options: options, makeSource: makeSource, resumedEntries: entries)
    }

    /// The options the listing's source is made with: the directory, hidden entries filtered
    /// out at the source, the latency window, and every listed directory's own changes
    /// reported (``WatchOptions/reportsDirectoryContentChanges``), since its entry shows its
    /// time and size. For that a one-level listing watches one level deeper than it lists
    /// (a file made in a subdirectory changes the subdirectory's entry); a recursive one
    /// watches the whole tree.
    public var watchOptions: WatchOptions {
        var filter = DirectoryReader.filter(includesHidden: options.includesHidden)
        if !options.isRecursive { filter.maximumDepth = 1 }
        var watchOptions = WatchOptions(
            roots: [directory],
            isRecursive: true,
            followsSymlinks: false,
            filter: filter,
            latency: options.latency
        )
        watchOptions.reportsDirectoryContentChanges = true
        return watchOptions
    }

    /// The sorted list as it is now, once, without watching (what `ls` prints).
    public func currentEntries() throws(FileSystemEventsError) -> [DirectoryEntry] {
        try currentEntriesNamingUnreadable().entries
    }

    /// ``currentEntries()``, and the subdirectories whose entries are missing from it because
    /// they could not be listed (permissions), for `filewatch list` to name on stderr.
    package func currentEntriesNamingUnreadable() throws(FileSystemEventsError) -> (entries: [DirectoryEntry], unreadable: [(path: FilePath, errno: Errno)]) {
        let reader = try DirectoryReader(directory, isRecursive: options.isRecursive, includesHidden: options.includesHidden)
        let (entries, unreadable) = try reader.listAllNamingUnreadable()
        return (entries.sorted(by: options.sortOrder.areInIncreasingOrder),
                unreadable.map { (directory.appending(FilePath(bytes: $0.relativePath).components), $0.errno) })
    }

    /// Each iterator is a listing of its own, with its own source, started on its first `next`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(session: DirectoryListingSession(listing: self))
    }

    /// Starts the watch on the first call to `next`, which throws, before anything is
    /// delivered, when the directory does not exist, is not a directory or cannot be read.
    public struct Iterator: AsyncIteratorProtocol {
        let session: DirectoryListingSession

        /// The next update, waiting for changes on disk; `nil` once the listing has ended.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
            try await session.next(isolation: actor)
        }

        /// The same as ``next(isolation:)``, on no actor.
        public mutating func next() async throws(FileSystemEventsError) -> DirectoryListingUpdate? {
            try await session.next(isolation: nil)
        }
    }
}
