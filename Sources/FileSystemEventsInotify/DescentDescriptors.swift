#if os(Linux)
import FileSystemEventsCore

/// The directory descriptors a walk down the model holds on its way, so that each
/// subdirectory is opened by its name relative to its parent (`openat`) rather than at its
/// whole path: a crawl, and the examination of every file for hard links out of view.
///
/// At most ``budget`` are held (``ProcessDescriptors/heldBudget()``), and they are the deepest
/// of the descent: past the budget, the shallowest held one is closed for the deeper
/// directory, whose siblings are then few levels down. Holding the first ones instead opened
/// every directory below them at its whole path, a walk of as many components as it is deep:
/// the square of a deep tree's depth (a chain of 10,000 directories took 8.8 s to `ready`, one
/// of 30,000 over 109 s). The shallow directory that gave up its descriptor opens its
/// remaining subdirectories at its own path, which is short.
struct DescentDescriptors {
    /// How many descriptors are held at most.
    let budget: Int
    /// The descriptor of each level of the descent, -1 where it holds none (past the budget,
    /// or given up for a deeper level).
    private var levels: [CInt] = []
    /// No level above this index holds a descriptor.
    private var shallowestHeld = 0
    private var held = 0

    init(budget: Int = ProcessDescriptors.heldBudget()) {
        self.budget = budget
    }

    /// The descriptor of the deepest level entered and not left, or -1 (none held, or no level).
    var deepest: CInt { levels.last ?? -1 }

    /// Enters a level whose directory is open at `descriptor` (-1 for none), which this takes
    /// over: it is closed when the level is left, or earlier for a deeper level, or at once
    /// where the budget is nothing.
    mutating func enter(_ descriptor: CInt) {
        guard descriptor >= 0 else {
            levels.append(-1)
            return
        }
        guard budget > 0 else {
            Syscalls.close(descriptor)
            levels.append(-1)
            return
        }
        if held >= budget { releaseShallowest() }
        levels.append(descriptor)
        held += 1
    }

    /// Leaves the deepest level, closing its descriptor if it still holds one.
    mutating func leave() {
        guard let descriptor = levels.popLast() else { return }
        if descriptor >= 0 {
            Syscalls.close(descriptor)
            held -= 1
        }
        shallowestHeld = min(shallowestHeld, levels.count)
    }

    private mutating func releaseShallowest() {
        while shallowestHeld < levels.count && levels[shallowestHeld] < 0 { shallowestHeld += 1 }
        guard shallowestHeld < levels.count else { return }
        Syscalls.close(levels[shallowestHeld])
        levels[shallowestHeld] = -1
        held -= 1
        shallowestHeld += 1
    }
}
#endif
