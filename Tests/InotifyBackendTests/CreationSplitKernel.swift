#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import SystemPackage

/// The real kernel, except that a creation whose name is renamed, removed or created again
/// later in the same read ends that read, and the rest is held back for `delay`. Meanwhile
/// every read yields one write to a file outside the tree, as from a tree that never stops
/// changing elsewhere: the queue never drains.
///
/// That is a watch that falls behind: a creation read while the events that explain what its
/// name holds now are still queued, and a queue that does not drain before the watch stops
/// waiting for it (half a second) and examines the name anyway. The name may then hold an
/// item renamed onto it later (`ln -s x L; mv L S; mv F L` finds the file F at L), or a newer
/// item of the same name (`mkdir c; mv c d; mkdir c`).
///
/// The writes are to a private file the kernel watches, and the watch ignores them: their
/// watch descriptor is not one it added. One real write keeps the inotify descriptor readable
/// while events are held, so a watch asleep in `poll` wakes for them.
struct CreationSplitKernel: RealKernelWrapper {
    var real: RawInotifyKernel
    private let delay: Duration
    private var held: [Inotify.Event] = []
    private var releaseAt: ContinuousClock.Instant?
    /// Splits left: each costs `delay`, and a scenario that removes a flood of files it
    /// created would otherwise spend minutes in them.
    private var splitsLeft = 16
    private let nudgeFile: NudgeFile

    init(delay: Duration) throws(FileSystemEventsError) {
        real = try RawInotifyKernel()
        self.delay = delay
        nudgeFile = try NudgeFile(on: &real)
    }

    mutating func read(into events: inout [Inotify.Event], maximumBytes: Int) -> Result<Void, Errno> {
        var read: [Inotify.Event]
        if let releaseAt {
            guard ContinuousClock.now >= releaseAt else {
                events.append(nudgeFile.event)
                return .success(())
            }
            self.releaseAt = nil
            read = held
            held = []
        } else {
            read = []
            // As much as the kernel has, so that a creation and what follows it meet in one read.
            let result = real.read(into: &read, maximumBytes: .max)
            guard case .success = result else { return result }
        }
        if splitsLeft > 0, let split = Self.splitPoint(in: read) {
            splitsLeft -= 1
            events += read[..<split]
            held = Array(read[split...])
            releaseAt = ContinuousClock.now + delay
            nudgeFile.nudge()
        } else {
            events += read
        }
        return .success(())
    }

    /// Just after the first creation whose name a later event in `events` creates, removes or
    /// renames again (a write to it changes nothing the examination sees).
    private static func splitPoint(in events: [Inotify.Event]) -> Int? {
        let structural: Inotify.Mask = [.create, .delete, .movedFrom, .movedTo]
        for (index, event) in events.enumerated() where event.mask.contains(.create) {
            if events[(index + 1)...].contains(where: {
                $0.watch == event.watch && $0.name == event.name && !$0.mask.isDisjoint(with: structural)
            }) {
                return index + 1
            }
        }
        return nil
    }

    func hasPendingEvents() -> Bool { !held.isEmpty || real.hasPendingEvents() }

    mutating func close() {
        real.close()
        nudgeFile.remove()
    }
}
#endif
