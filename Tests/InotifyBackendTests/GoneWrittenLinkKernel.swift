#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import SystemPackage

/// The real kernel, with its reads cut where a held consumer cuts them: a new hard link
/// written through (`ln a b; echo >> b`) is handed out alone, and before the watcher can look
/// at `b` this kernel renames it (`mv b c`), whose events come with the next read. So `b` is
/// examined, found gone, and only then is its rename read.
struct GoneWrittenLinkKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let nudgeFile: NudgeFile
    private let name: [UInt8]
    private let source: String
    private let destination: String
    private var phase = 0
    private var held = EventsHeldUntilMatch()

    init(name: String, movingFrom source: String, to destination: String) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        nudgeFile = try NudgeFile(on: &real)
        self.name = Array(name.utf8)
        self.source = source
        self.destination = destination
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        switch phase {
        case 0:
            let written: Int
            switch held.readUntil(from: &real, { [name] in $0.mask.contains(.modify) && $0.name == name }) {
            case .success(let index): written = index
            case .failure(let errno): return .failure(errno)
            }
            guard rename(source, destination) == 0 else { return .failure(Errno(rawValue: errno)) }
            events += held.take(through: written)
            phase = 1
            // Keeps the descriptor readable for the rename's events.
            nudgeFile.nudge()
            return .success(())
        default:
            var read: [Inotify.Event] = []
            let result = real.read(into: &read, maximumBytes: maximumBytes)
            let hadHeld = !held.isEmpty
            events += held.takeAll() + read
            return hadHeld ? .success(()) : result
        }
    }

    func hasPendingEvents() -> Bool { !held.isEmpty || real.hasPendingEvents() }

    mutating func close() {
        real.close()
        nudgeFile.remove()
    }
}
#endif
