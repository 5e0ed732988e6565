#if os(Linux)
import FileSystemEventsCore

/// Changes the kernel reported for names the model does not have yet, while their creations
/// wait to be examined (``InotifyWatch/changesWhilePending``).
///
/// Why a log and not a dictionary: in a burst of files created and written (`tar -x`, a build
/// writing its outputs) every file's write is read before its creation is examined, and while
/// the queue stays busy the creations wait (``InotifyWatch/pendingCreations``), so every write
/// of the burst lands here; but the changes are only ever looked up for a creation that turns
/// out to be a new hard link, which almost none is. With a dictionary, the function that
/// records a change took 5.6% of the watcher's samples in such a burst (`perf record` of the
/// deployment CLI, 20 rounds of 5,000 files created and written), 3.2% with this log, whose
/// append costs a retain; the dictionary is built from the log at the first lookup after it
/// was emptied.
///
/// It holds what the waiting creations hold, for as long: both are emptied together once
/// none waits, which the deferral limit bounds.
struct PendingNameChanges {
    private var log: [(name: NameInModel, kind: FileSystemEvent.Kind)] = []
    /// Built at the first lookup (or once the log grows past ``logLimit``); from then on until
    /// ``removeAll()`` changes go straight into it.
    private var index: [NameInModel: Set<FileSystemEvent.Kind>]?

    /// Past this many entries the log is folded into the index, which keeps one entry per
    /// name: writes to a few files interleaved (two copies at once), which the kernel does not
    /// merge, would otherwise be kept each.
    private static var logLimit: Int { 1 << 16 }

    var isEmpty: Bool { log.isEmpty && (index?.isEmpty ?? true) }

    mutating func record(_ kind: FileSystemEvent.Kind, for name: NameInModel) {
        if index != nil {
            index![name, default: []].insert(kind)
            return
        }
        // A copy's writes come in a row, or interleaved with a few others'.
        for recent in log.suffix(4) where recent.kind == kind && recent.name == name { return }
        log.append((name, kind))
        if log.count > Self.logLimit { buildIndex() }
    }

    /// Whether `kind` was recorded for `name`; builds the index, as a lookup does.
    mutating func contains(_ kind: FileSystemEvent.Kind, for name: NameInModel) -> Bool {
        if isEmpty { return false }
        if index == nil { buildIndex() }
        return index![name]?.contains(kind) ?? false
    }

    /// The changes recorded for `name`, which are forgotten.
    mutating func take(for name: NameInModel) -> Set<FileSystemEvent.Kind> {
        if isEmpty { return [] }
        if index == nil { buildIndex() }
        let changes = index!.removeValue(forKey: name) ?? []
        // Emptied: back to the log, or the next burst would be hashed until the next drain.
        if index!.isEmpty { index = nil }
        return changes
    }

    mutating func removeAll() {
        log.removeAll(keepingCapacity: log.capacity <= Self.keptCapacity)
        index = nil
    }

    /// The log's storage is kept between bursts up to this many entries, and given back
    /// beyond, so that one long burst does not hold its peak for the life of the watch.
    private static var keptCapacity: Int { 4_096 }

    private mutating func buildIndex() {
        var built = index ?? [:]
        for (name, kind) in log { built[name, default: []].insert(kind) }
        log.removeAll(keepingCapacity: log.capacity <= Self.keptCapacity)
        index = built
    }
}
#endif
