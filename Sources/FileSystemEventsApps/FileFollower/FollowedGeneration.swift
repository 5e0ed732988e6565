import FileSystemEventsCore

/// One file that stood at the followed path, held open by the follower until every byte a
/// writer put in it has been delivered.
///
/// Holding the descriptor is what makes rotation lossless: a renamed or deleted file keeps its
/// data (and its inode number, so identity comparisons cannot be fooled by reuse) for as long
/// as it is open.
struct FollowedGeneration {
    let number: Int
    let descriptor: CInt
    let identity: FileIdentity
    /// The next byte to deliver.
    var offset: Int64
    /// When the path was first seen not to name this file any more; `nil` while it does.
    var supersededAt: ContinuousClock.Instant?
    /// The notice that announces this generation, delivered when its first chunk is next
    /// (after every byte of the generations before it); `nil` for the file present at start.
    var arrival: FileFollowerNotice.Kind?
    /// Where delivering this generation ends, if not at the end of the file: its size when
    /// finishing was asked for, or when the file came back to the path over its successors
    /// (the rest is a later generation). Nothing past it is read.
    var limit: Int64?

    var isSuperseded: Bool { supersededAt != nil }
}
