#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import SystemPackage

/// The real kernel, with its reads cut where a race would cut them, so that a creation held
/// behind one that waits for a rename is examined, and its name then moved away, between
/// two reads.
///
/// The test makes, in the root: a symlink `L`, a directory `D`, then `mv L S` and `mv F L`.
/// Everything is read at once from the real queue once `F`'s arrival at `L` is there, and
/// handed out in two parts:
/// 1. the two creations alone, while the queue still looks busy: `L` then holds `F`, which
///    the model has at `F` (its rename is not read yet), so `L` waits for it, and `D`,
///    found a directory, waits behind `L` with what it was found to be;
/// 2. on the next read, after `D` is moved out of the tree (by this kernel, so it happens
///    exactly there), the two renames and `D`'s departure.
struct HeldCreationKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let nudgeFile: NudgeFile
    /// `D` and where it goes, outside the tree.
    private let source: String
    private let destination: String
    private var phase = 0
    private var gathered = EventsHeldUntilMatch()
    private var held: [Inotify.Event] = []

    init(movingOut source: String, to destination: String) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        nudgeFile = try NudgeFile(on: &real)
        self.source = source
        self.destination = destination
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        switch phase {
        case 0:
            let arrival: Int
            switch gathered.readUntil(from: &real, { $0.mask.contains(.movedTo) && $0.name == Array("L".utf8) }) {
            case .success(let index): arrival = index
            case .failure(let errno): return .failure(errno)
            }
            guard let created = gathered.queued.firstIndex(where: { $0.mask.contains(.create) && $0.name == Array("D".utf8) }),
                  created < arrival
            else { return .failure(.ioError) }
            events += gathered.take(through: created)
            held = gathered.takeAll()
            phase = 1
            // Keeps the descriptor readable for the second part.
            nudgeFile.nudge()
            return .success(())
        case 1:
            phase = 2
            guard rename(source, destination) == 0 else { return .failure(Errno(rawValue: errno)) }
            var read: [Inotify.Event] = []
            _ = real.read(into: &read, maximumBytes: Int.max)
            events += held + read
            held = []
            return .success(())
        default:
            return real.read(into: &events, maximumBytes: maximumBytes)
        }
    }

    func hasPendingEvents() -> Bool { !gathered.isEmpty || !held.isEmpty || real.hasPendingEvents() }

    mutating func close() {
        real.close()
        nudgeFile.remove()
    }
}
#endif
