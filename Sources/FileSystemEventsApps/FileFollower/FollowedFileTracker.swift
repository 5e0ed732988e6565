import FileSystemEventsCore
import SystemPackage

/// The follower's bookkeeping, without any waiting: which files are held open, how far each
/// has been delivered, and what to deliver next. ``FileFollowerSession`` calls ``step(now:)``
/// until it returns `nil`, then waits for a wake-up (a directory event, a timer) and asks again.
///
/// The rules that make delivery exactly-once and in order:
///
/// - Events only say "look again". Each look stats the path and reads every held file to its
///   end, so coalesced, late or missing events cannot lose bytes.
/// - A file is told from its successor by identity (device and inode), compared with the
///   descriptor held open, so an inode number cannot be reused meanwhile.
/// - A new file at the path is opened as soon as it is seen, but delivered only after every
///   byte of the files before it. A superseded file is closed only once a later file has data
///   (the writer has moved on; anything it wrote before that is visible to the final read,
///   which comes after the observation) or the grace period has passed.
/// - Truncation is the held file's size dropping below the delivered offset.
/// - A file that comes back to the path over its successors is a new generation that starts
///   where its earlier one stopped: still held, by its descriptor's identity; let go, by its
///   identity, birth time and last bytes (``ReleasedFile``).
final class FollowedFileTracker {
    let path: FollowedPath
    /// Opens new files at the path from the watch's thread (see ``FollowedPathObserver``).
    let observer: FollowedPathObserver
    private let options: FileFollower.Options
    /// Oldest first; the first is the one being delivered.
    private var generations: [FollowedGeneration] = []
    private var pendingNotices: [FileFollowerNotice] = []
    private var nextGenerationNumber = 1
    /// Observations applied so far: the clock that orders files by when they left the path
    /// (``FollowedGeneration/departure``).
    private var observationsApplied = 0
    /// The path was seen without a followable file since the newest generation was opened.
    private var sawGap = false
    /// The last few files let go, with where their delivery stopped, so that one coming back
    /// to the path (`mv log log.1; echo > log; mv log.1 log`) resumes there instead of being
    /// delivered again from its first byte.
    private var released: [ReleasedFile] = []
    private(set) var isFinishing = false
    private let buffer: UnsafeMutableRawBufferPointer

    init(path: FollowedPath, options: FileFollower.Options) {
        self.path = path
        self.options = options
        observer = FollowedPathObserver(path: path.bytes)
        buffer = .allocate(byteCount: options.chunkSize, alignment: 16)
    }

    deinit {
        closeAll()
        buffer.deallocate()
    }

    /// Descriptors currently held (for tests and diagnostics).
    var heldDescriptors: [CInt] { generations.map(\.descriptor) }

    // MARK: Start

    /// Opens the file at the path, if there is one, at the start position. Fails only for
    /// what waiting cannot fix: an ancestor that is a file, a directory at the path, a file
    /// that may not be read.
    func start() throws(FileSystemEventsError) {
        if let problem = path.startProblem() { throw problem }
        guard case .success(let status) = FollowerSyscalls.status(path.bytes, followSymlinks: true) else {
            sawGap = true
            observer.prime(identity: nil)
            return
        }
        guard status.itemType == .file else {
            throw .invalidOptions("cannot follow \(FilePath(bytes: path.bytes)): it is not a regular file")
        }
        let descriptor: CInt
        switch FollowerSyscalls.openForReading(path.bytes) {
        case .success(let opened): descriptor = opened
        case .failure(.permissionDenied), .failure(.notPermitted):
            throw .permissionDenied(FilePath(bytes: path.bytes), operation: "read")
        case .failure:
            // Gone between the stat and the open: it will be followed when it reappears.
            sawGap = true
            return
        }
        guard case .success(let opened) = FollowerSyscalls.status(ofDescriptor: descriptor) else {
            Syscalls.close(descriptor)
            sawGap = true
            return
        }
        let offset = startOffset(descriptor, size: opened.size)
        if offset != 0, case .failure(let errno) = FollowerSyscalls.seek(descriptor, to: offset) {
            Syscalls.close(descriptor)
            throw .systemCallFailed(call: "lseek", path: FilePath(bytes: path.bytes), errno: errno)
        }
        generations.append(FollowedGeneration(number: nextGenerationNumber, descriptor: descriptor, identity: opened.identity, offset: offset))
        nextGenerationNumber += 1
        observer.prime(identity: opened.identity, birthTime: opened.birthTime)
    }

    private func startOffset(_ descriptor: CInt, size: Int64) -> Int64 {
        switch options.startPosition {
        case .start: return 0
        case .end: return size
        case .lastLines(let count): return LastLinesLocator.offset(ofLast: count, in: descriptor, size: size)
        }
    }

    // MARK: Looking at the path

    /// Looks at the path once more and applies every observation made since the last call,
    /// in order (the watch's thread makes them too, as events arrive): a removal is noted, a
    /// new file becomes a generation delivered after the ones before it.
    func examinePath(now: ContinuousClock.Instant) {
        observer.observe()
        for observation in observer.take() { apply(observation, now: now) }
    }

    /// One observation of the path, in the order they were made; takes over the descriptor.
    private func apply(_ observation: FollowedPathObserver.Observation, now: ContinuousClock.Instant) {
        observationsApplied += 1
        let newestIndex = generations.indices.last.flatMap { generations[$0].isSuperseded ? nil : $0 }
        let descriptor: CInt, identity: FileIdentity
        switch observation {
        case .missing:
            // Seen gone by a look, now: the source's events, which order departures, may
            // still be behind (``FollowedGeneration/departure``).
            if let newestIndex { supersede(newestIndex, now: now, notice: .removed) }
            supersedeAllStanding(now: now)
            sawGap = true
            return
        case .departed(let departed):
            if let index = generations.lastIndex(where: { $0.identity == departed }) { noteDeparture(of: index) }
            return
        case .eventsLost:
            pendingNotices.append(FileFollowerNotice(kind: .overflowed, generation: nextGenerationNumber - 1))
            return
        case .movedAwayUnseen(let opened, let openedIdentity):
            insertMovedAwayUnseen(descriptor: opened, identity: openedIdentity, now: now)
            return
        case .file(let opened, let openedIdentity):
            (descriptor, identity) = (opened, openedIdentity)
        }
        var startOffset: Int64 = 0
        if let held = generations.lastIndex(where: { $0.identity == identity }) {
            if held == generations.count - 1 {
                // The newest file, still there, or renamed away and back with nothing in
                // between: the same bytes, so no new generation.
                Syscalls.close(descriptor)
                if generations[held].isSuperseded {
                    generations[held].supersededAt = nil
                    if generations[held].arrival != nil {
                        // Gone and back before it was announced: its arrival says it is there.
                        generations[held].noticeAfterArrival = nil
                    } else {
                        pendingNotices.append(FileFollowerNotice(kind: .appeared, generation: generations[held].number))
                    }
                }
                return
            }
            // An earlier file back at the path over its successors (`mv log log.tmp; : > log;
            // mv log.tmp log`), where its writer appends again. Dropped, it was released
            // once its grace period ran out, and every byte written to it after that was lost
            // (the path's identity had not changed, so nothing opened it again). Its bytes so
            // far are delivered where they are, before its successors'; the rest come after
            // them, as a generation of their own read through this descriptor from there.
            guard let resumeAt = cutForResumption(of: held, reopenedAs: descriptor) else {
                Syscalls.close(descriptor)
                return
            }
            startOffset = resumeAt
        } else if let resumeAt = resumptionOffset(ofReturning: identity, descriptor: descriptor) {
            startOffset = resumeAt
        }
        // A file found late that stood at the path just before this one was replaced by it.
        let followsFileFoundLate = generations.last?.stoodAtPathUnseen == true
        let arrival: FileFollowerNotice.Kind = (newestIndex != nil || followsFileFoundLate) && !sawGap ? .replaced : .appeared
        // The newest, and any other still thought to stand there (one a file found late was put
        // after, or the rest of a split), have left it.
        supersedeAllStanding(now: now)
        var generation = FollowedGeneration(
            number: nextGenerationNumber, descriptor: descriptor, identity: identity, offset: startOffset,
            arrival: arrival)
        if !observer.wasTold(identity) { generation.foundBeforeTold = now }
        generations.append(generation)
        nextGenerationNumber += 1
        sawGap = false
    }

    /// Puts the file found late at `late` next, splitting the file being delivered where its
    /// delivery stands: what it holds from there on becomes a generation of its own after the
    /// late one (read through a second descriptor of the same open file), so generation
    /// numbers still grow in the order chunks are delivered. `false` if the split cannot be
    /// made (no descriptor left): the late file then waits its turn.
    private func deliverLateFileNext(_ late: Int, now: ContinuousClock.Instant) -> Bool {
        guard case .success(let rest) = FollowerSyscalls.duplicate(generations[0].descriptor) else { return false }
        let current = generations[0]
        let file = generations.remove(at: late)
        var remainder = FollowedGeneration(number: 0, descriptor: rest, identity: current.identity,
                                           offset: current.offset, arrival: .replaced)
        remainder.limit = current.limit
        remainder.departure = current.departure
        generations[0].limit = current.offset
        generations[0].supersededAt = generations[0].supersededAt ?? now
        generations.insert(contentsOf: [file, remainder], at: 1)
        renumber(from: 1)
        return true
    }

    /// Numbers the generations from `index` on one after another, following the one before,
    /// and the notices still to deliver with them.
    private func renumber(from index: Int) {
        var renumbered: [Int: Int] = [:]
        for position in generations.indices where position >= index {
            let number = generations[position - 1].number + 1
            if generations[position].number != 0 { renumbered[generations[position].number] = number }
            generations[position].number = number
        }
        for notice in pendingNotices.indices {
            if let number = renumbered[pendingNotices[notice].generation] { pendingNotices[notice].generation = number }
        }
        nextGenerationNumber = (generations.last?.number ?? nextGenerationNumber - 1) + 1
    }

    /// Whether `generation` is known to have left the path before `other` did (a file still
    /// there, or whose leaving was not told, has not).
    private static func leftPath(_ generation: FollowedGeneration, before other: FollowedGeneration) -> Bool {
        guard let left = generation.departure else { return false }
        return other.departure.map { left < $0 } ?? true
    }

    /// Notes that the file of the generation at `index` has left the path, now (in the order
    /// of observations), unless that was known already.
    private func noteDeparture(of index: Int) {
        if generations[index].departure == nil { generations[index].departure = observationsApplied }
    }

    /// A file that stood at the path only between two looks, opened where it went: delivered
    /// whole, in the order the files left the path, among the generations not yet delivered.
    /// It goes before the first one that left after it or has not been seen to leave (the
    /// file at the path may have been seen by this follower's own look before the source told
    /// where this one went); each file before it has left the path, since this one was made
    /// there after.
    private func insertMovedAwayUnseen(descriptor: CInt, identity: FileIdentity, now: ContinuousClock.Instant) {
        if let held = generations.lastIndex(where: { $0.identity == identity }) {
            // Held already (found at the path by a look, and no longer among the files the
            // observer remembers opening after a burst of more rotations than it keeps): the
            // source has just told that it left the path, which places it among the others.
            // Dropped without that, it stayed "not seen to leave", and every file told after
            // it went in front of it: delivered out of order, and the file before it released
            // as soon as one of those had data, its last writes unread.
            Syscalls.close(descriptor)
            noteDeparture(of: held)
            return
        }
        // Before the file being delivered only if nothing of it is out yet (its notice waits).
        let first = generations.first?.arrival != nil ? 0 : 1
        let index = generations.indices.dropFirst(first).first { generations[$0].departure == nil } ?? generations.count
        for earlier in generations.indices where earlier < index && generations[earlier].departure != nil {
            supersede(earlier, now: now, notice: nil)
        }
        var generation = FollowedGeneration(number: 0, descriptor: descriptor, identity: identity, offset: 0,
                                            arrival: index == 0 && sawGap ? .appeared : .replaced)
        generation.supersededAt = now
        generation.stoodAtPathUnseen = true
        generation.departure = observationsApplied
        generations.insert(generation, at: index)
        if index == 0 {
            // Nothing of the one it goes before was delivered: it takes that one's number.
            generations[0].number = generations.count > 1 ? generations[1].number : nextGenerationNumber
            renumber(from: 1)
        } else {
            renumber(from: index)
        }
    }

    /// Ends the delivery of the held generation at `index` at its file's size now, and puts
    /// `descriptor` (the same file, opened again) where the rest starts: that size, or 0 if
    /// the file is now shorter than what was delivered (truncated while away). `nil` if the
    /// file cannot be examined or positioned; it is then seen again on a later look.
    private func cutForResumption(of index: Int, reopenedAs descriptor: CInt) -> Int64? {
        guard case .success(let status) = FollowerSyscalls.status(ofDescriptor: descriptor) else { return nil }
        let delivered = generations[index].offset
        let cut = status.size >= delivered ? status.size : 0
        if cut != 0, case .failure = FollowerSyscalls.seek(descriptor, to: cut) { return nil }
        let end = max(cut, delivered)
        generations[index].limit = min(generations[index].limit ?? end, end)
        return cut
    }

    /// Supersedes, without a notice, every generation not superseded yet: a look found the
    /// path empty or holding another file, so none of them stands there any more.
    private func supersedeAllStanding(now: ContinuousClock.Instant) {
        for index in generations.indices where !generations[index].isSuperseded { supersede(index, now: now, notice: nil) }
    }

    private func supersede(_ index: Int, now: ContinuousClock.Instant, notice: FileFollowerNotice.Kind?) {
        guard !generations[index].isSuperseded else { return }
        generations[index].supersededAt = now
        guard let notice else { return }
        if generations[index].arrival != nil {
            generations[index].noticeAfterArrival = notice
        } else {
            pendingNotices.append(FileFollowerNotice(kind: notice, generation: generations[index].number))
        }
    }

    // MARK: Delivering

    /// The next update, or `nil` when every held file has been read to its end and nothing
    /// else is due (then wait for a wake-up, or ``nextDeadline(now:)``).
    func step(now: ContinuousClock.Instant) throws(FileSystemEventsError) -> FileFollowerUpdate? {
        if !pendingNotices.isEmpty { return .notice(pendingNotices.removeFirst()) }
        while !generations.isEmpty {
            if let found = generations[0].foundBeforeTold {
                // Seen at the path by this follower's own look, ahead of the source's events:
                // a file that stood at the path before it, and left it unseen, may still be
                // told of (``FollowedPathObserver/observeArrivals(in:)``), and goes first.
                // Not when finishing: what is readable now goes out, told or not.
                if !isFinishing && !observer.wasTold(generations[0].identity) && now < found + Self.confirmationWait { return nil }
                generations[0].foundBeforeTold = nil
                // What the batch that told of it found goes in first (it is queued before the
                // batch is marked told).
                let pending = observer.take()
                if !pending.isEmpty {
                    for observation in pending { apply(observation, now: now) }
                    continue
                }
            }
            if let arrival = generations[0].arrival {
                generations[0].arrival = nil
                if let later = generations[0].noticeAfterArrival {
                    generations[0].noticeAfterArrival = nil
                    pendingNotices.insert(FileFollowerNotice(kind: later, generation: generations[0].number), at: 0)
                }
                return .notice(FileFollowerNotice(kind: arrival, generation: generations[0].number))
            }
            if let chunk = try readChunk() { return .data(chunk) }
            // At the end of the file being delivered, or at its limit: when finishing, or where
            // a later generation takes over the same file.
            if isFinishing || generations[0].limit.map({ generations[0].offset >= $0 }) == true {
                release()
                continue
            }
            if let truncated = detectTruncation() { return .notice(truncated) }
            guard let supersededAt = generations[0].supersededAt else {
                // Every byte of the file at the path is out. A file found late that left the
                // path before it goes now, rather than after this one leaves the path, which
                // may be never.
                if let late = generations.indices.dropFirst().first(where: { generations[$0].stoodAtPathUnseen
                    && Self.leftPath(generations[$0], before: generations[0]) }),
                   deliverLateFileNext(late, now: now) {
                    continue
                }
                return nil
            }
            let writerMovedOn = laterGenerationHasData() || now >= supersededAt + options.rotationGracePeriod
            guard writerMovedOn else { return nil }
            // What the writer wrote before its first byte in the later file is visible now.
            if let chunk = try readChunk() { return .data(chunk) }
            release()
        }
        return nil
    }

    /// One `read(2)` from the file being delivered; `nil` at its end.
    private func readChunk() throws(FileSystemEventsError) -> FileChunk? {
        var wanted = buffer.count
        if let limit = generations[0].limit {
            wanted = Int(max(0, min(Int64(wanted), limit - generations[0].offset)))
            if wanted == 0 { return nil }
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted])
        switch Syscalls.read(generations[0].descriptor, into: target) {
        case .success(0):
            return nil
        case .success(let count):
            let chunk = FileChunk(bytes: Array(target[..<count]), generation: generations[0].number, offset: generations[0].offset)
            generations[0].offset += Int64(count)
            return chunk
        case .failure(let errno):
            throw .systemCallFailed(call: "read", path: FilePath(bytes: path.bytes), errno: errno)
        }
    }

    /// The file being delivered became shorter than what was delivered: start it over.
    private func detectTruncation() -> FileFollowerNotice? {
        guard case .success(let status) = FollowerSyscalls.status(ofDescriptor: generations[0].descriptor),
              status.size < generations[0].offset,
              case .success = FollowerSyscalls.seek(generations[0].descriptor, to: 0)
        else { return nil }
        generations[0].offset = 0
        return FileFollowerNotice(kind: .truncated, generation: generations[0].number)
    }

    /// Whether a writer has written to a later file: beyond where its delivery starts, which
    /// for a file that came back over its successors is past the bytes it already held.
    private func laterGenerationHasData() -> Bool {
        // A file found late (``insertMovedAwayUnseen``) that left the path before the one being
        // delivered says nothing of where its writer is now.
        let current = generations[0]
        return generations.dropFirst().contains { generation in
            if generation.stoodAtPathUnseen && Self.leftPath(generation, before: current) { return false }
            if case .success(let status) = FollowerSyscalls.status(ofDescriptor: generation.descriptor) { return status.size > generation.offset }
            return false
        }
    }

    private func release() {
        let generation = generations.removeFirst()
        if !isFinishing, let file = ReleasedFile(generation) {
            if released.count == Self.releasedFilesKept { released.removeFirst() }
            released.append(file)
        }
        Syscalls.close(generation.descriptor)
    }

    static let releasedFilesKept = 8

    /// Where delivery resumes for a file let go earlier that is back at the path, opened as
    /// `descriptor`: where it stopped, if the file is the same one (same identity and birth
    /// time, and the bytes before that point unchanged) and no shorter; `nil` to start at 0.
    private func resumptionOffset(ofReturning identity: FileIdentity, descriptor: CInt) -> Int64? {
        guard let index = released.lastIndex(where: { $0.identity == identity }) else { return nil }
        let file = released.remove(at: index)
        guard case .success(let status) = FollowerSyscalls.status(ofDescriptor: descriptor), file.isSame(as: status, descriptor),
              case .success = FollowerSyscalls.seek(descriptor, to: file.offset)
        else { return nil }
        return file.offset
    }

    /// When to look again without an event: while a superseded file is held, a writer may
    /// still append to it outside the watched directory, and its grace period runs out; and
    /// in any case once every ``pathRecheckInterval``.
    ///
    /// The path is looked at on every event the source reports, so the periodic look costs one
    /// `statx` a second and finds nothing new, unless an event that mattered never came: a
    /// backend (built-in or registered) that lost one, or a wake-up that went astray. Then a
    /// new file at the path is seen a second later instead of never, and none of its bytes is
    /// lost.
    func nextDeadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if let found = generations.first?.foundBeforeTold { return found + Self.confirmationWait }
        // A superseded file is read again more often than the path is looked at.
        guard let supersededAt = generations.first?.supersededAt else { return now + Self.pathRecheckInterval }
        return min(now + Self.supersededRereadInterval, supersededAt + options.rotationGracePeriod)
    }

    /// How long a file found at the path waits for the source to tell of it before it is
    /// delivered anyway (a source that reports no identities, or none at all): above the
    /// half-second a kernel backend holds creations back while its queue stays busy.
    static let confirmationWait: Duration = .seconds(1)

    /// How often a superseded file is read again while no event comes for it.
    static let supersededRereadInterval: Duration = .milliseconds(100)

    /// How often the path is looked at while no event comes (the default of `tail -F`'s
    /// `--sleep-interval` when it polls): the bound on how late a change the source did not
    /// report is noticed.
    static let pathRecheckInterval: Duration = .seconds(1)

    // MARK: Finishing

    /// Delivers what is readable now and nothing after: looks at the path once more, then
    /// bounds every held file at its current size. ``step(now:)`` returns `nil` once all is out.
    func beginFinishing(now: ContinuousClock.Instant) {
        guard !isFinishing else { return }
        examinePath(now: now)
        isFinishing = true
        for index in generations.indices {
            if case .success(let status) = FollowerSyscalls.status(ofDescriptor: generations[index].descriptor) {
                generations[index].limit = min(generations[index].limit ?? .max, max(status.size, generations[index].offset))
            } else {
                generations[index].limit = generations[index].offset
            }
        }
    }

    func closeAll() {
        observer.close()
        for generation in generations { Syscalls.close(generation.descriptor) }
        generations = []
    }
}

/// A file the follower let go, as much of it as tells it again: its identity and birth time
/// (an inode number is reused once a file is deleted), where delivery stopped, and the bytes
/// just before that (a file truncated and written again while away differs there).
private struct ReleasedFile {
    let identity: FileIdentity
    let birthTime: Int64
    let offset: Int64
    let lastBytes: [UInt8]

    static let fingerprintLength = 64

    /// `nil` for a file nothing was delivered from, or that cannot be read back.
    init?(_ generation: FollowedGeneration) {
        guard generation.offset > 0, case .success(let status) = FollowerSyscalls.status(ofDescriptor: generation.descriptor) else { return nil }
        let count = Int(min(Int64(Self.fingerprintLength), generation.offset))
        guard let bytes = Self.bytes(count, before: generation.offset, in: generation.descriptor) else { return nil }
        identity = generation.identity
        birthTime = status.birthTime
        offset = generation.offset
        lastBytes = bytes
    }

    func isSame(as status: FileStatus, _ descriptor: CInt) -> Bool {
        status.birthTime == birthTime && status.size >= offset
            && Self.bytes(lastBytes.count, before: offset, in: descriptor) == lastBytes
    }

    private static func bytes(_ count: Int, before offset: Int64, in descriptor: CInt) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { FollowerSyscalls.read(descriptor, into: $0, at: offset - Int64(count)) }
        guard case .success(count) = read else { return nil }
        return bytes
    }
}
