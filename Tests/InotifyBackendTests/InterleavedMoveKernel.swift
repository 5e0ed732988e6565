#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Synchronization
import SystemPackage

/// The real kernel, except that every rename read whole has another event put between its
/// two halves: what a `write(2)` by another process, queued while the renaming one was
/// between its two `fsnotify_move` notifications, looks like. The event is a write to the
/// renamed item under its new name, as the kernel reports one made after the rename.
struct InterleavedMoveKernel: RealKernelWrapper {
    /// Renames interleaved so far, for a test to see that it tested something.
    static let interleaved = Atomic<Int>(0)

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
            let event = read[index]
            index += 1
            if event.mask.contains(.movedFrom), index < read.endIndex, read[index].mask.contains(.movedTo),
               read[index].cookie == event.cookie, !read[index].mask.contains(.isDirectory) {
                let second = read[index]
                events.append(event)
                events.append(Inotify.Event(watch: second.watch, mask: .modify, cookie: 0, name: second.name))
                events.append(second)
                index += 1
                Self.interleaved.add(1, ordering: .relaxed)
                continue
            }
            events.append(event)
        }
        return .success(())
    }
}
#endif
