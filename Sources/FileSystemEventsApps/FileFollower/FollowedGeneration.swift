import FileSystemEventsCore

/// One file that stood at the followed path, held open by the follower until every byte a
/// writer put in it has been delivered.
///
/// Holding the descriptor is what makes rotation lossless: a renamed or deleted file keeps its
/// data (and its inode number, so identity comparisons cannot be fooled by reuse) for as long
/// as it is open.
struct FollowedGeneration {
    /// Renumbered only while nothing of it was delivered, when a file that stood at the path
    /// before it is found late (``FollowedPathObserver/Observation/movedAwayUnseen``), so
    /// numbers grow in the order chunks are delivered.
    var number: Int
    let descriptor: CInt
    let identity: FileIdentity
    /// The next byte to deliver.
    var offset: Int64
    /// When the path was first seen not to name this file any more; `nil` while it does.
    var supersededAt: ContinuousClock.Instant?
    /// The notice that announces this generation, delivered when its first chunk is next
    /// (after every byte of the generations before it); `nil` for the file present at start.
    var arrival: FileFollowerNotice.Kind?
    /// A notice of this generation heard before its ``arrival`` was out (the path found empty
    /// while the generations before it were still being delivered): delivered right after the
    /// arrival, not before it, which told of a file no notice had announced yet (and whose
    /// number a file found late could still change).
    var noticeAfterArrival: FileFollowerNotice.Kind?
    /// Where delivering this generation ends, if not at the end of the file: its size when
    /// finishing was asked for, or when the file came back to the path over its successors
    /// (the rest is a later generation). Nothing past it is read.
    var limit: Int64?

    /// When the follower's own look found the file at the path, while the source had not told
    /// of it yet: its delivery waits for the source (``FollowedFileTracker``), at most
    /// ``FollowedFileTracker/confirmationWait``. `nil` once told, and for files the source
    /// told of first.
    var foundBeforeTold: ContinuousClock.Instant?
    /// When the source told that the file left the path, in the order of the tracker's
    /// observations; `nil` until it does. Files stand at the path one after another, and the
    /// source tells of them in the kernel's order, so this is the order their bytes were
    /// written in: a file found late goes among the others by it. A departure the follower's
    /// own look saw does not count: it is later than whatever the source has still to tell.
    var departure: Int?
    /// Found only where it went after it left the path (``FollowedPathObserver/Observation/movedAwayUnseen``).
    var stoodAtPathUnseen = false

    var isSuperseded: Bool { supersededAt != nil }
}
