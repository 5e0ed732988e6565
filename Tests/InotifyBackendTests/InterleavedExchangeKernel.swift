#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that an event of another watch is put between the two pairs of
/// every exchange read whole: what another thread's change, queued while the exchanging
/// thread was between its two `fsnotify_move` calls, looks like.
struct InterleavedExchangeKernel: RealKernelWrapper {
    /// Exchanges interleaved so far, for a test to see that it tested something.
    static let interleaved = Atomic<Int>(0)
    /// A watch number no watch of the tree has: the event says nothing about the tree.
    static let foreignWatch: CInt = .max

    var real: RawInotifyKernel

    init() throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        var read: [Inotify.Event] = []
        let result = real.read(into: &read, maximumBytes: maximumBytes)
        guard case .success = result else { return result }
        var index = read.startIndex
        while index < read.endIndex {
            events.append(read[index])
            index += 1
            // After a pair, past its IN_MOVE_SELF: a pair whose names mirror it is the
            // exchange's second half.
            guard index >= 2, read[index - 1].mask.contains(.movedTo), read[index - 2].mask.contains(.movedFrom),
                  read[index - 1].cookie == read[index - 2].cookie else { continue }
            let (from, to) = (read[index - 2], read[index - 1])
            var next = index
            while next < read.endIndex && read[next].name.isEmpty && read[next].mask.contains(.moveSelf) {
                events.append(read[next])
                next += 1
            }
            index = next
            guard next + 1 < read.endIndex else { continue }
            let (mirrorFrom, mirrorTo) = (read[next], read[next + 1])
            if mirrorFrom.mask.contains(.movedFrom), mirrorTo.mask.contains(.movedTo), mirrorFrom.cookie == mirrorTo.cookie,
               mirrorFrom.cookie != from.cookie, mirrorFrom.watch == to.watch, mirrorFrom.name == to.name,
               mirrorTo.watch == from.watch, mirrorTo.name == from.name {
                events.append(Inotify.Event(watch: Self.foreignWatch, mask: .modify, cookie: 0, name: []))
                Self.interleaved.add(1, ordering: .relaxed)
                events.append(mirrorFrom)
                events.append(mirrorTo)
                index = next + 2
            }
        }
        return .success(())
    }
}
#endif
