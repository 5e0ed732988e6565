#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that every rename read whole has another event put between its
/// two halves: what a `write(2)` by another process, queued while the renaming one was
/// between its two `fsnotify_move` notifications, looks like. The event is a write to the
/// renamed item under its new name, as the kernel reports one made after the rename (for a
/// directory, a change of its attributes).
///
/// Splitting reads, the read also ends after that write, and the second half (with whatever
/// followed it) comes with the next read: the reader found the queue between the halves.
struct InterleavedMoveKernel: RealKernelWrapper {
    /// Renames interleaved so far, for a test to see that it tested something.
    static let interleaved = Atomic<Int>(0)

    var real: RawInotifyKernel
    private let splitsReads: Bool
    private var held: [Inotify.Event] = []

    init(splittingReads: Bool = false) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        splitsReads = splittingReads
    }

    func hasPendingEvents() -> Bool { !held.isEmpty || real.hasPendingEvents() }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        var read = held
        held = []
        let result = real.read(into: &read, maximumBytes: maximumBytes)
        if case .failure = result, read.isEmpty { return result }
        var index = read.startIndex
        while index < read.endIndex {
            let event = read[index]
            index += 1
            if event.mask.contains(.movedFrom), index < read.endIndex, read[index].mask.contains(.movedTo),
               read[index].cookie == event.cookie {
                let second = read[index]
                let between: Inotify.Mask = second.mask.contains(.isDirectory) ? [.attrib, .isDirectory] : .modify
                events.append(event)
                events.append(Inotify.Event(watch: second.watch, mask: between, cookie: 0, name: second.name))
                Self.interleaved.add(1, ordering: .relaxed)
                if splitsReads {
                    held = Array(read[index...])
                    return .success(())
                }
                events.append(second)
                index += 1
                continue
            }
            events.append(event)
        }
        return .success(())
    }
}
#endif
