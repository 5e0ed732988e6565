#if os(Linux)
import Glibc
import CFileSystemEventsShims
import Synchronization
import FileSystemEventsCore
import SystemPackage

/// Opens, watches and lists the directories of a start-up's crawl on a thread of its own, in
/// the order the crawl asks for them, while the watch's thread builds the model from what it
/// has already listed.
///
/// Why: `ready` on a large tree is two kinds of work, the kernel's (`openat`, `statx` of the
/// descriptor, `inotify_add_watch`, `getdents64`, a `statx` per file for its link count
/// (``InotifyWatch/CrawlState/examinesFiles``), `close`: two thirds of a 110k-entry
/// start-up in a profile taken before that last `statx` was added) and the model's (tables of names, inode numbers for hard links).
/// On one thread they add up; here they overlap, on two cores in about the time of the larger.
///
/// Nothing about the watch-then-list rule changes: each directory is opened, checked, watched
/// through its descriptor and only then listed, exactly as ``InotifyWatch/crawl(_:emitting:state:parentDescriptor:identityFromListing:)``
/// does it. What the prefetcher does not do is decide: whether the directory opened is the one
/// the model means, what a failure means, and where a watch goes in the model stay with the
/// crawl, which takes each ``Listed`` in turn. Events are not read until the crawl is done, so
/// a watch added here and registered a moment later by the crawl misses nothing.
///
/// The thread has a working directory of its own (``Syscalls/separateWorkingDirectory()``)
/// and watches a directory as `.` once it is in it, where the crawl goes through
/// `/proc/self/fd`: the same directory, for half the cost, which took `ready` on 110,101
/// entries from 180 to 174 ms. Where it may not go in (no search permission), or the kernel
/// refuses it a working directory of its own, it goes through `/proc/self/fd` too.
///
/// The walk descends into exactly the directories the crawl does in that case (entries that
/// the listing types as directories, in listing order, depth first), so the two stay in step;
/// where the crawl does not descend (the directory is not the one the model means), it skips
/// the directory's descendants (``skipDescendants(below:)``). A directory met twice (a bind
/// mount of one of the tree's, or of the root) is entered once, as by the crawl, whose second
/// node finds the watch held by the first. It is only used where the crawl makes
/// no other choice (no filter, no followed symlinks, recursive, no settling), with a kernel
/// that lets another thread add watches (``InotifyKernel/concurrentWatchAdder``), `/proc/self/fd` visible, and two
/// processors to run on: on one, the two threads would only take turns.
final class CrawlPrefetcher: @unchecked Sendable {
    /// One directory as the prefetcher found it.
    struct Listed {
        enum Opening {
            /// Opened and examined. `descriptor` is the crawl's to close (or hold), or -1 where
            /// the prefetcher keeps it (to open the directory's subdirectories by name) or has
            /// closed it, which it does when it holds many handed over already.
            case opened(FileStatus, isMountRoot: Bool, descriptor: CInt)
            /// `openat` failed.
            case failed(Errno)
            /// Opened, but `statx` of the descriptor failed: treated as stale, as the crawl does.
            case unexamined
        }

        /// Depth below the root (the root is 0), and the name the crawl must be asking for:
        /// a check that the two walks are in step.
        let depth: Int
        let name: [UInt8]
        let opening: Opening
        /// Attempted only once opened and examined.
        let watch: Result<CInt, Errno>?
        /// Attempted only once watched, and then `nil` only for a directory left for the crawl
        /// to list (see ``isLeftToList``). The prefetcher descends only where this succeeded.
        let listing: Result<DirectoryListing, Errno>?
        let listedAt: Int64

        /// Watched but not listed: a directory with no subdirectory that the crawl lists
        /// itself, with the descriptor handed over.
        var isLeftToList: Bool {
            if case .success? = watch, listing == nil { return true }
            return false
        }
    }

    /// Adds a watch from the prefetcher's thread, with the mask the crawl would ask for: the
    /// kernel's ``InotifyKernel/concurrentWatchAdder``.
    struct WatchAdder: Sendable {
        let mask: Inotify.Mask
        let add: ConcurrentWatchAdder
    }

    private let rootPath: [UInt8]
    private let examinesFiles: Bool
    private let adder: WatchAdder
    /// The crawl's descriptor budget, shared: at most this many held to open subdirectories
    /// by name (the deepest on the descent: ``DescentDescriptors``), the rest for directories handed
    /// over and not yet taken (their descriptors with them). The crawl itself holds none while
    /// it takes from the prefetcher.
    private let heldDescriptorLimit: Int
    private let inFlightDescriptorLimit: Int
    /// Set by ``finish()``; the walk stops at the next directory rather than at its next
    /// hand-over, so that nothing more is opened or watched once the crawl has stopped.
    private let cancelRequested = Atomic<Bool>(false)

    // Shared state, under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var published: [Listed] = []
    private var publishedEntries = 0
    private var isFinished = false
    private var isCancelled = false
    private var consumerWaits = false
    private var producerWaits = false

    /// Directories handed over and not yet taken by the crawl: while there are few, the crawl
    /// is waiting for work, and directories with no subdirectory are left for it to list.
    private let outstanding = Atomic<Int>(0)
    private static var outstandingForListingHere: Int { 2 * publishBatch }
    /// Descriptors in directories handed over and not yet taken. No more than
    /// ``inFlightDescriptorLimit`` are: beyond, the prefetcher closes them itself, so that the
    /// descriptors a start-up holds stay bounded by the open file limit however far it runs
    /// ahead of the crawl.
    private let descriptorsInFlight = Atomic<Int>(0)

    // The consumer's side: what it took from `published`, read in order.
    private var taken: [Listed] = []
    private var nextTaken = 0

    /// The producer hands over this many directories at a time (and whatever it has when it
    /// ends): one lock, and at most one wake-up, per batch rather than per directory.
    private static var publishBatch: Int { 32 }
    /// At most this many descriptors are held on the walk's descent.
    private static var descentDescriptors: Int { 16 }
    /// It stops and waits while this many directories, or entries, are handed over and not
    /// yet taken, so that a crawl slower than the kernel does not hold every listing at once.
    private static var maximumPublished: Int { 2_048 }
    private static var maximumPublishedEntries: Int { 1 << 16 }

    private init(rootPath: [UInt8], adder: WatchAdder, maximumHeldDescriptors: Int, examinesFiles: Bool) {
        self.rootPath = rootPath
        self.examinesFiles = examinesFiles
        self.adder = adder
        // The descent needs few (a deep tree's deepest levels); the rest go with directories
        // handed over (see ``ProcessDescriptors/startUpBudget()``).
        self.heldDescriptorLimit = min(Self.descentDescriptors, maximumHeldDescriptors / 2)
        self.inFlightDescriptorLimit = maximumHeldDescriptors - heldDescriptorLimit
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Whether this process may run on two processors at least: on one, the two threads would
    /// only take turns, and pay for handing over what they share.
    static let hasProcessorsToOverlap: Bool = cfse_usable_processors() >= 2

    /// Starts a prefetcher for the root at `rootPath`, or returns `nil` if no thread could be
    /// started (the crawl then lists for itself).
    /// - Parameter examinesFiles: each regular file listed is examined too (``CrawlState/examinesFiles``).
    static func start(rootPath: [UInt8], adder: WatchAdder, maximumHeldDescriptors: Int, examinesFiles: Bool = false) -> CrawlPrefetcher? {
        let prefetcher = CrawlPrefetcher(rootPath: rootPath, adder: adder, maximumHeldDescriptors: maximumHeldDescriptors,
                                         examinesFiles: examinesFiles)
        guard ProducerThread.start({ prefetcher.walk() }) else { return nil }
        return prefetcher
    }

    // MARK: The crawl's side

    /// The next directory, which must be `name` at `depth`; `nil` when the walks are out of
    /// step or the prefetcher has nothing more (then the crawl goes on by itself).
    func take(name: [UInt8], depth: Int) -> Listed? {
        guard let next = peek() else { return nil }
        guard next.depth == depth, next.name == name else { return nil }
        nextTaken += 1
        noteTaken(next)
        return next
    }

    /// Drops what the prefetcher listed below the directory just taken at `depth`, which the
    /// crawl does not enter. Returns the watches they were given, for the crawl to release
    /// where the model does not hold them.
    func skipDescendants(below depth: Int) -> [CInt] {
        var watches: [CInt] = []
        while let next = peek(), next.depth > depth {
            Self.discard(next, collectingWatches: &watches)
            nextTaken += 1
            noteTaken(next)
        }
        return watches
    }

    private func noteTaken(_ listed: Listed) {
        outstanding.subtract(1, ordering: .relaxed)
        if case .opened(_, _, let descriptor) = listed.opening, descriptor >= 0 {
            descriptorsInFlight.subtract(1, ordering: .relaxed)
        }
    }

    /// Closes what `listed` handed over, and notes its watch.
    private static func discard(_ listed: Listed, collectingWatches watches: inout [CInt]) {
        if case .opened(_, _, let descriptor) = listed.opening, descriptor >= 0 { Syscalls.close(descriptor) }
        if case .success(let watch)? = listed.watch { watches.append(watch) }
    }

    /// Stops the walk and waits for its thread to be done with every descriptor. Returns the
    /// watches of what was listed and never taken, for the crawl to release where the model
    /// does not hold them.
    func finish() -> [CInt] {
        cancelRequested.store(true, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        isCancelled = true
        pthread_cond_broadcast(condition)
        while !isFinished {
            consumerWaits = true
            pthread_cond_wait(condition, mutex)
        }
        consumerWaits = false
        let rest = published
        published = []
        pthread_mutex_unlock(mutex)
        var watches: [CInt] = []
        for listed in taken[nextTaken...] + rest {
            Self.discard(listed, collectingWatches: &watches)
        }
        taken = []
        nextTaken = 0
        return watches
    }

    /// Whether the walk has ended (for tests: what it holds then is what it hands over).
    var hasEnded: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return isFinished
    }

    private func peek() -> Listed? {
        if nextTaken < taken.count { return taken[nextTaken] }
        pthread_mutex_lock(mutex)
        while published.isEmpty && !isFinished {
            consumerWaits = true
            pthread_cond_wait(condition, mutex)
        }
        consumerWaits = false
        swap(&taken, &published)
        published.removeAll(keepingCapacity: true)
        publishedEntries = 0
        if producerWaits { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
        nextTaken = 0
        return taken.first
    }

    // MARK: The prefetcher's thread

    /// A directory on the current descent: the subdirectories still to visit. Its descriptor,
    /// when held for opening them by name, is the walk's ``DescentDescriptors``'.
    private struct Level {
        var listing: DirectoryListing
        var nextEntry: Int
        /// Where this directory's path ends in the walk's one path buffer, for opening its
        /// subdirectories by path when its descriptor is not held. One buffer, cut back on the
        /// way up: a path per level would cost the square of a deep tree's depth.
        var pathCount: Int
    }

    private func walk() {
        let reader = DirectoryEntryReader()
        var pending: [Listed] = []
        var pendingEntries = 0
        var stack: [Level] = []
        var path = rootPath
        var descent = DescentDescriptors(budget: heldDescriptorLimit)
        // Every watch this walk was given. A directory whose watch was given already is one
        // met before: a bind mount of a directory of the tree (or of the root itself), which
        // the crawl does not enter either (another node holds its watch).
        var watches: Set<CInt> = []
        // Watched through `.` once in the directory, a thread of its own being in it: half the
        // cost of `/proc/self/fd/N`. Not where the root's path is relative (the walk opens
        // deep directories by path, from the process's working directory).
        var watchesFromInside = false
        if rootPath.first == UInt8(ascii: "/"), case .success = Syscalls.separateWorkingDirectory() { watchesFromInside = true }
        defer {
            for _ in stack { descent.leave() }
            if watchesFromInside { Syscalls.leaveWorkingDirectory() }
            pthread_mutex_lock(mutex)
            published += pending
            isFinished = true
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }

        // Visits one directory: `name` in the directory on top of `stack` (or the root).
        func visit(name: [UInt8], depth: Int) -> Bool {
            if cancelRequested.load(ordering: .relaxed) { return false }
            let opened: Result<CInt, Errno>
            if let parent = stack.last {
                path.removeSubrange(parent.pathCount...)
                path.append(UInt8(ascii: "/"))
                path.append(contentsOf: name)
                if descent.deepest >= 0 {
                    opened = withCString(name) { Syscalls.openDirectory($0, relativeTo: descent.deepest, followSymlinks: false) }
                } else {
                    opened = Syscalls.openDirectory(atPath: path, followSymlinks: false)
                }
            } else {
                opened = Syscalls.openDirectory(atPath: rootPath, followSymlinks: true)
            }
            var result = Listed(depth: depth, name: name, opening: .unexamined, watch: nil, listing: nil, listedAt: 0)
            var keep: CInt = -1
            var listing: DirectoryListing?
            switch opened {
            case .failure(let errno):
                result = Listed(depth: depth, name: name, opening: .failed(errno), watch: nil, listing: nil, listedAt: 0)
            case .success(let descriptor):
                guard case .success(let (status, isMountRoot)) = Syscalls.statusAndMountRoot(ofDescriptor: descriptor) else {
                    Syscalls.close(descriptor)
                    break  // `.unexamined`
                }
                let watch: Result<CInt, Errno>
                if watchesFromInside, case .success = Syscalls.changeWorkingDirectory(to: descriptor) {
                    watch = adder.add(Syscalls.workingDirectoryPath, adder.mask)
                } else {
                    watch = adder.add(Syscalls.processDescriptorPath(descriptor), adder.mask)
                }
                var isMetBefore = false
                if case .success(let found) = watch { isMetBefore = !watches.insert(found).inserted }
                var listed: Result<DirectoryListing, Errno>?
                var listedAt: Int64 = 0
                // A directory's link count is 2 plus its subdirectories on most file systems
                // (btrfs says 1, and is listed here): one with none is left for the crawl to
                // list while it has little else to do, which shares the work between the
                // two threads. Should it have a subdirectory after all (made since), the
                // crawl lists that too.
                let mayHandOver = descriptorsInFlight.load(ordering: .relaxed) < inFlightDescriptorLimit
                let leavesListing = mayHandOver && status.linkCount == 2
                    && outstanding.load(ordering: .relaxed) < Self.outstandingForListingHere
                if case .success = watch, !leavesListing {
                    listedAt = WallClock.wallNanoseconds()
                    listed = DirectoryListing.read(descriptor: descriptor, with: reader, statEach: false,
                                                   examinesDirectories: false, examinesFiles: examinesFiles, followSymlinks: false)
                    if case .success(let found)? = listed, !isMetBefore { listing = found }
                }
                let hasSubdirectories = listing?.entries.contains(where: \.isDirectory) ?? false
                var handed: CInt = -1
                if hasSubdirectories && descent.budget > 0 {
                    keep = descriptor
                } else if mayHandOver {
                    handed = descriptor
                    descriptorsInFlight.add(1, ordering: .relaxed)
                } else {
                    Syscalls.close(descriptor)
                }
                result = Listed(depth: depth, name: name, opening: .opened(status, isMountRoot: isMountRoot, descriptor: handed),
                                watch: watch, listing: listed, listedAt: listedAt)
            }
            pendingEntries += listing?.entries.count ?? 0
            pending.append(result)
            if pending.count >= Self.publishBatch || pendingEntries >= Self.maximumPublishedEntries / 4 {
                guard publish(&pending, entries: &pendingEntries) else {
                    if keep >= 0 { Syscalls.close(keep) }
                    return false
                }
            }
            if let listing {
                stack.append(Level(listing: listing, nextEntry: 0, pathCount: stack.isEmpty ? rootPath.count : path.count))
                descent.enter(keep)
            }
            return true
        }

        guard visit(name: [], depth: 0) else { return }
        while !stack.isEmpty {
            let top = stack.count - 1
            var child: [UInt8]?
            while stack[top].nextEntry < stack[top].listing.entries.count {
                let entry = stack[top].listing.entries[stack[top].nextEntry]
                stack[top].nextEntry += 1
                if entry.isDirectory {
                    child = stack[top].listing.name(of: entry)
                    break
                }
            }
            guard let child else {
                stack.removeLast()
                descent.leave()
                continue
            }
            guard visit(name: child, depth: top + 1) else { return }
        }
    }

    /// Hands `pending` over; waits while too much is handed over and not taken. `false` once
    /// the crawl has cancelled the walk.
    private func publish(_ pending: inout [Listed], entries: inout Int) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !isCancelled && !published.isEmpty
            && (published.count >= Self.maximumPublished || publishedEntries >= Self.maximumPublishedEntries)
        {
            producerWaits = true
            pthread_cond_wait(condition, mutex)
        }
        producerWaits = false
        if isCancelled { return false }
        published += pending
        publishedEntries += entries
        outstanding.add(pending.count, ordering: .relaxed)
        pending.removeAll(keepingCapacity: true)
        entries = 0
        if consumerWaits { pthread_cond_broadcast(condition) }
        return true
    }
}
#endif
