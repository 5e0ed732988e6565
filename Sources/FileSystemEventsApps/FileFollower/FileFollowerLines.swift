public import FileSystemEventsCore

/// What ``FileFollowerLines`` delivers: whole lines, and the follower's notices in between.
public enum FileFollowerLineUpdate: Sendable, Hashable {
    /// A whole line, or a partial last line that can never be completed
    /// (``FileLine/isTerminated`` is `false`).
    case line(FileLine)
    /// Something happened to the file at the path. A partial line held for the old file comes
    /// first, except before ``FileFollowerNotice/Kind/removed`` (the writer may still append to
    /// it) and ``FileFollowerNotice/Kind/overflowed`` (which changes no file).
    case notice(FileFollowerNotice)
}

/// A ``FileFollower`` as whole lines: a chunk that ends inside a line keeps that part until
/// the rest arrives. A partial line is delivered unterminated only when it can never be
/// completed: its file was truncated or replaced, or following ended.
public struct FileFollowerLines: AsyncSequence, Sendable {
    /// Lines, and the follower's notices between them.
    public typealias Element = FileFollowerLineUpdate
    /// What stops the follower (see ``FileFollower/Failure``).
    public typealias Failure = FileSystemEventsError

    /// The follower whose chunks are cut into lines.
    public let follower: FileFollower

    /// Usually reached as ``FileFollower/lines``.
    public init(follower: FileFollower) {
        self.follower = follower
    }

    /// Each iterator follows on its own, through an iterator of ``follower`` made here.
    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: follower.makeAsyncIterator())
    }

    /// Cuts the follower's chunks into lines as they arrive, holding a line's start until its
    /// newline comes.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: FileFollower.Iterator
        var splitter = LineSplitter()
        var ready: [FileFollowerLineUpdate] = []
        var readyIndex = 0
        var isDone = false

        /// The next line or notice; `nil` once following has ended, after any held partial line.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(FileSystemEventsError) -> FileFollowerLineUpdate? {
            while true {
                if readyIndex < ready.count {
                    defer {
                        readyIndex += 1
                        if readyIndex == ready.count {
                            ready.removeAll(keepingCapacity: true)
                            readyIndex = 0
                        }
                    }
                    return ready[readyIndex]
                }
                if isDone { return nil }
                guard let update = try await chunks.next(isolation: actor) else {
                    isDone = true
                    if let last = splitter.flush() { ready.append(.line(last)) }
                    continue
                }
                switch update {
                case .data(let chunk):
                    ready += splitter.add(chunk).map(FileFollowerLineUpdate.line)
                case .notice(let notice):
                    // Removal alone ends nothing: the writer may still append to the old file.
                    if notice.kind != .removed && notice.kind != .overflowed, let last = splitter.flush() { ready.append(.line(last)) }
                    ready.append(.notice(notice))
                }
            }
        }

        /// The same as ``next(isolation:)``, on no actor.
        public mutating func next() async throws(FileSystemEventsError) -> FileFollowerLineUpdate? {
            try await next(isolation: nil)
        }
    }
}

/// Cuts chunks into lines, holding the unterminated tail.
struct LineSplitter {
    private var partial: [UInt8] = []
    private var partialGeneration = 0
    private var partialOffset: Int64 = 0

    mutating func add(_ chunk: FileChunk) -> [FileLine] {
        var lines: [FileLine] = []
        if !partial.isEmpty && (chunk.generation != partialGeneration || chunk.offset != partialOffset + Int64(partial.count)) {
            if let last = flush() { lines.append(last) }
        }
        var start = 0
        let bytes = chunk.bytes
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if partial.isEmpty {
                lines.append(FileLine(bytes: Array(bytes[start..<newline]), generation: chunk.generation, offset: chunk.offset + Int64(start), isTerminated: true))
            } else {
                partial += bytes[start..<newline]
                lines.append(FileLine(bytes: partial, generation: partialGeneration, offset: partialOffset, isTerminated: true))
                partial = []
            }
            start = newline + 1
        }
        if start < bytes.count {
            if partial.isEmpty {
                partialGeneration = chunk.generation
                partialOffset = chunk.offset + Int64(start)
            }
            partial += bytes[start...]
        }
        return lines
    }

    /// The held partial line, unterminated, if there is one.
    mutating func flush() -> FileLine? {
        guard !partial.isEmpty else { return nil }
        defer { partial = [] }
        return FileLine(bytes: partial, generation: partialGeneration, offset: partialOffset, isTerminated: false)
    }
}
