#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// What a test kernel has read from the real queue and not handed out yet, gathered until one
/// of the events is the one its race is cut at: everything before it then comes out in one
/// read, as a consumer that fell behind would read it.
struct EventsHeldUntilMatch {
    private(set) var queued: [Inotify.Event] = []

    var isEmpty: Bool { queued.isEmpty }

    /// Reads everything the real kernel holds into ``queued``, then finds the first event that
    /// `matches`. Not there yet: the failure for the watch's read to return meanwhile (the
    /// real read's own, or `EAGAIN`: nothing handed out, so the events to cut at come in one
    /// read).
    mutating func readUntil(from real: inout RawInotifyKernel, _ matches: (Inotify.Event) -> Bool) -> Result<Int, Errno> {
        var read: [Inotify.Event] = []
        let result = real.read(into: &read, maximumBytes: Int.max)
        queued += read
        if let index = queued.firstIndex(where: matches) { return .success(index) }
        if case .failure(let errno) = result { return .failure(errno) }
        return .failure(.resourceTemporarilyUnavailable)
    }

    /// The events up to `index`, taken out; the rest stay.
    mutating func take(through index: Int) -> [Inotify.Event] {
        defer { queued.removeFirst(index + 1) }
        return Array(queued[...index])
    }

    /// Every event held, taken out.
    mutating func takeAll() -> [Inotify.Event] {
        defer { queued = [] }
        return queued
    }
}
#endif
