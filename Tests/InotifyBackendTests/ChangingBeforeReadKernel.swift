#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import SystemPackage

/// The real kernel, except that the changes handed to ``ChangesBeforeNextRead`` are made just
/// before the watch's next read: their events are read together.
struct ChangingBeforeReadKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let changes: ChangesBeforeNextRead

    init(changes: ChangesBeforeNextRead) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.changes = changes
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        changes.makeWaiting()
        return real.read(into: &events, maximumBytes: maximumBytes)
    }
}
#endif
