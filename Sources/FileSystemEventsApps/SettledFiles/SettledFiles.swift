public import FileSystemEventsCore

/// The files of a watched tree as they finish being written: an inbox, an upload directory, a
/// scan spool, in one line.
///
/// ```swift
/// var options = WatchOptions(roots: ["/srv/inbox"])
/// options.settleQuietPeriod = .milliseconds(200)
/// let source = try FileSystemEventBackend.auto.makeSource(options: options)
/// for try await file in source.settledFiles() {
///     try importDocument(at: file.path)
/// }
/// ```
///
/// Each file is delivered once per write session, never while it is still being written:
/// files already in the tree at `ready` first (those not changed within the quiet period),
/// then every file written, copied, extracted or renamed into the tree, when it is complete.
/// A file removed or renamed away before it settled is not delivered. The sequence ends when
/// the watch ends (its roots were removed) and throws what ends the watch otherwise.
///
/// Built only on ``FileSystemEventSource``, so it works on every backend; how promptly a file
/// settles depends on the backend (inotify sees writers close; polling waits for a quiet
/// period and a full poll interval with no change).
public struct SettledFiles: AsyncSequence, Sendable {
    /// Each file once it has settled.
    public typealias Element = SettledFile
    /// What ends the watch with an error, and the error for a source without a quiet period.
    public typealias Failure = FileSystemEventsError

    private let source: any FileSystemEventSource

    /// The settled files of `source`, whose options must set
    /// ``WatchOptions/settleQuietPeriod``.
    public init(source: any FileSystemEventSource) {
        self.source = source
    }

    /// Starts a watch of the source at once (its ``FileSystemEventSource/updates()``); each
    /// iterator has a watch of its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source)
    }

    /// Delivers the files of one watch's `settled` events, in the order of the events.
    public struct Iterator: AsyncIteratorProtocol {
        private var updates: FileSystemEventStream.Iterator?
        private var missingQuietPeriod: Bool
        private var pending: [SettledFile] = []
        private var nextPending = 0

        init(source: any FileSystemEventSource) {
            missingQuietPeriod = source.options.settleQuietPeriod == nil
            updates = missingQuietPeriod ? nil : source.updates().makeAsyncIterator()
        }

        /// The next settled file, or `nil` once the watch has ended. The first call throws
        /// ``FileSystemEventsError/invalidOptions(_:)`` when the source has no quiet period.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(FileSystemEventsError) -> SettledFile? {
            if missingQuietPeriod {
                missingQuietPeriod = false
                throw .invalidOptions(
                    "settledFiles() needs a quiet period: set WatchOptions.settleQuietPeriod (the filewatch.settle key, FILEWATCH_SETTLE or --settle)"
                )
            }
            while true {
                if nextPending < pending.count {
                    defer { nextPending += 1 }
                    return pending[nextPending]
                }
                pending.removeAll(keepingCapacity: true)
                nextPending = 0
                guard let update = try await updates?.next(isolation: actor) else {
                    updates = nil
                    return nil
                }
                if case .events(let events) = update {
                    pending = events.compactMap(SettledFile.init)
                }
            }
        }

        /// The same as ``next(isolation:)``, on no actor.
        public mutating func next() async throws(FileSystemEventsError) -> SettledFile? {
            try await next(isolation: nil)
        }
    }
}

extension FileSystemEventSource {
    /// The files of this source's tree as they finish being written (see ``SettledFiles``).
    /// The source's options must set ``WatchOptions/settleQuietPeriod``.
    public func settledFiles() -> SettledFiles {
        SettledFiles(source: self)
    }
}
