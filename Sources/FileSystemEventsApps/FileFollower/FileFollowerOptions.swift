package import SystemPackage

extension FileFollower {
    /// How a follower starts and how long it keeps a rotated file open.
    public struct Options: Sendable {
        /// Where to begin in the file present at start; see ``FileFollowerStartPosition``.
        public var startPosition: FileFollowerStartPosition
        /// How long to keep reading a file that was renamed away or deleted while no new file
        /// at the path has data yet. A writer that reopens the path moves on by writing to the
        /// new file, which ends the wait at once; this bounds the wait for one that never does.
        public var rotationGracePeriod: Duration
        /// The most bytes one chunk carries (one `read(2)`).
        public var chunkSize: Int
        /// Called with the watched directories each time the follower's source is ready:
        /// tests wait on it instead of sleeping.
        package var didStartWatching: (@Sendable ([FilePath]) -> Void)?

        /// A `chunkSize` below 1 is raised to 1. The defaults start at the end of the file, keep a
        /// rotated file for five seconds and read at most 256 KiB at a time.
        public init(
            startPosition: FileFollowerStartPosition = .end,
            rotationGracePeriod: Duration = .seconds(5),
            chunkSize: Int = 256 * 1024
        ) {
            self.startPosition = startPosition
            self.rotationGracePeriod = rotationGracePeriod
            self.chunkSize = Swift.max(1, chunkSize)
        }
    }
}
