public import FileSystemEventsCore
public import SystemPackage

/// A regular file that has finished being written: its content was final when the event was
/// made (see ``FileSystemEvent/Kind/settled`` for what "finished" means on each backend).
public struct SettledFile: Sendable, Hashable, CustomStringConvertible {
    /// The file's path, under the name it was settled by (a download renamed into place is
    /// settled under its final name).
    public var path: FilePath
    /// The file's device and inode, when the backend knows them: a file written again later is
    /// settled again, and the identity tells an importer whether it is the same file.
    public var identity: FileIdentity?
    /// When the backend decided the file was settled.
    public var timestamp: FileSystemEvent.Timestamp
    /// The file was already in the tree at `ready`, unchanged for the quiet period (an inbox's
    /// backlog), rather than written while watched.
    public var wasPresentAtReady: Bool

    /// Takes each field as given; ``init(_:)`` makes one from a `settled` event.
    public init(path: FilePath, identity: FileIdentity?, timestamp: FileSystemEvent.Timestamp, wasPresentAtReady: Bool) {
        self.path = path
        self.identity = identity
        self.timestamp = timestamp
        self.wasPresentAtReady = wasPresentAtReady
    }

    /// The file a `settled` event names; `nil` for any other event.
    public init?(_ event: FileSystemEvent) {
        guard event.kind == .settled else { return nil }
        self.init(path: event.path, identity: event.identity, timestamp: event.timestamp, wasPresentAtReady: event.isSynthetic)
    }

    /// The path.
    public var description: String { path.string }
}
