#if os(Linux)
/// Puts a rename's two halves back together when other events were queued between them.
///
/// The kernel queues `IN_MOVED_FROM` and `IN_MOVED_TO` one after the other, not at once
/// (`fsnotify_move` notifies the old directory, then the new one), holding only the locks of
/// the two directories. An event that needs neither lock can be queued between the halves: a
/// `write(2)` to any file in view (a writer appending to the very file being renamed, which
/// the kernel then reports under its new name), or a change in another watched directory.
/// Read that way, the first half was followed by something else and was taken for a move out
/// of the tree: the rename became a removal and a creation. The watch's replay was still
/// right, but the item lost its identity through the move, and a follower lost a whole rotated
/// file: `created app.log`, `removed app.log`, `created app.log.417` with nothing to say that
/// the last was made at the path (a writer appending in a tight loop while another process
/// renamed its log every millisecond lost 1 file in 40).
///
/// The cookie ties the halves together: the kernel gives every rename one of its own. And the
/// rename was complete on disk before either half was queued, so whatever came between
/// happened after it: moving the second half up to the first is the order the changes
/// happened in.
package enum MoveHalves {
    /// Moves each `IN_MOVED_TO` of `events` up to just after its `IN_MOVED_FROM`, or to the
    /// front for the `IN_MOVED_FROM` that ended the previous read (`pending`), wherever other
    /// events came between. Returns `false`, leaving `events` as they are, when every pair is
    /// already together (the common case, one pass with no allocation). A first half whose
    /// second is not in `events` stays where it is.
    @discardableResult
    package static func reunite(_ events: inout [Inotify.Event], pending: Inotify.Event?) -> Bool {
        guard hasSeparatedFirstHalf(events, pending: pending) else { return false }
        var secondHalves: [UInt32: Int] = [:]
        for index in events.indices where events[index].mask.contains(.movedTo) && events[index].cookie != 0 {
            // The first of a cookie: cookies are not reused while both halves are queued.
            if secondHalves[events[index].cookie] == nil { secondHalves[events[index].cookie] = index }
        }
        var taken = [Bool](repeating: false, count: events.count)
        var reordered: [Inotify.Event] = []
        reordered.reserveCapacity(events.count)
        var moved = false
        func takeSecondHalf(of first: Inotify.Event, after position: Int) {
            guard first.cookie != 0, let second = secondHalves[first.cookie], second > position, !taken[second] else { return }
            taken[second] = true
            reordered.append(events[second])
            if second != position + 1 { moved = true }
        }
        if let pending { takeSecondHalf(of: pending, after: -1) }
        for index in events.indices where !taken[index] {
            let event = events[index]
            taken[index] = true
            reordered.append(event)
            if event.mask.contains(.movedFrom) { takeSecondHalf(of: event, after: index) }
        }
        // Only moves out of the tree were apart from anything: nothing to change.
        guard moved else { return false }
        events = reordered
        return true
    }

    /// Whether every one of `events` may have been queued between the two halves of a rename
    /// read before them: changes that need no directory's lock (writes, attribute changes,
    /// closes). Anything that creates, removes or moves a name, or concerns a watch itself,
    /// may not.
    package static func mayAllHaveComeBetweenHalves(_ events: ArraySlice<Inotify.Event>) -> Bool {
        let interleavable: Inotify.Mask = [.modify, .attrib, .closeWrite, .isDirectory]
        return events.allSatisfy { $0.cookie == 0 && !$0.name.isEmpty && $0.mask.isSubset(of: interleavable) }
    }

    /// Whether some `IN_MOVED_FROM` of `events` (or `pending`) is followed by something other
    /// than its `IN_MOVED_TO`: one pass, no allocation. Usually none is; when one is, it is
    /// usually a move out of the tree, whose second half is nowhere.
    private static func hasSeparatedFirstHalf(_ events: [Inotify.Event], pending: Inotify.Event?) -> Bool {
        func isSecondHalf(_ event: Inotify.Event, of first: Inotify.Event) -> Bool {
            event.mask.contains(.movedTo) && event.cookie == first.cookie
        }
        if let pending, let first = events.first, !isSecondHalf(first, of: pending) { return true }
        var index = events.startIndex
        while index + 1 < events.endIndex {
            if events[index].mask.contains(.movedFrom) {
                if !isSecondHalf(events[index + 1], of: events[index]) { return true }
                index += 1
            }
            index += 1
        }
        return false
    }
}
#endif
