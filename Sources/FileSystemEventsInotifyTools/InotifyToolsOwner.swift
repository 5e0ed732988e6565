#if os(Linux)
import CInotifyTools
import CFileSystemEventsShims
import Dispatch
import FileSystemEventsCore
import FileSystemEventsInotify
import Glibc
import Synchronization
import SystemPackage

/// The one owner of libinotifytools in this process.
///
/// The library keeps a single global inotify instance, is not thread-safe, and returns events
/// in a static buffer. So every call into it runs on this owner's thread, several sources
/// share the instance (each sees only the watches it asked for), and the owner copies each
/// event out before handing it on.
///
/// The owner blocks in the library's own `inotifytools_next_event`, whose timeout is in whole
/// seconds; a negative timeout blocks (0 means "do not wait" in the library's documentation,
/// and older versions spin on it). To be woken at once, for a new request or a stop, it also
/// watches a private *sentinel* file: touching it (`futimens` on the owner's descriptor) makes
/// an `IN_ATTRIB` that ends the library's wait, and the owner filters it out. The sentinel is
/// unlinked as soon as the library watches it (the watch and the descriptor keep the inode
/// alive), so nothing is left in `$TMPDIR` however the process ends: a clean stop, SIGTERM, a
/// closed stdout, even SIGKILL. When the last source leaves, the library is cleaned up, the
/// sentinel closed and the thread ends, so a stopped watch leaves no descriptor behind.
final class InotifyToolsOwner: Sendable {
    static let shared = InotifyToolsOwner()

    /// A source's connection: its event queue and the pipe that says the queue is not empty.
    ///
    /// The queue is bounded like a kernel queue (at `fs.inotify.max_queued_events`): the owner
    /// reads the shared instance for every source, so one stalled source must not hold the
    /// others back or grow without bound. Past the limit it gets its own `IN_Q_OVERFLOW` and
    /// reconciles with a rescan, exactly as after a kernel overflow.
    final class Subscription: Sendable {
        let readable: CInt
        fileprivate let writable: CInt
        fileprivate let queue = Mutex<[Inotify.Event]>([])
        private let limit = InotifyLimits.current("max_queued_events") ?? 16_384

        fileprivate init(readable: CInt, writable: CInt) {
            self.readable = readable
            self.writable = writable
        }

        /// Whether events wait in this source's queue.
        var hasQueuedEvents: Bool { queue.withLock { !$0.isEmpty } }

        /// Takes up to `limit` queued events (never splitting the two halves of a rename), so
        /// a stalled consumer leaves the rest here, where the queue's bound applies.
        func take(into events: inout [Inotify.Event], limit: Int = .max) -> Bool {
            Syscalls.drainWakeups(readable)
            let (taken, hasMore) = queue.withLock { queue -> ([Inotify.Event], Bool) in
                var count = min(queue.count, max(1, limit))
                if count < queue.count, count > 0, queue[count - 1].mask.contains(.movedFrom) { count += 1 }
                let taken = Array(queue[..<count])
                queue.removeFirst(count)
                return (taken, !queue.isEmpty)
            }
            // More is waiting: the readable pipe must say so again.
            if hasMore { Syscalls.signalWakeup(writable) }
            events.append(contentsOf: taken)
            return !taken.isEmpty
        }

        /// Appends events in one step, so the two halves of a rename are never seen apart.
        fileprivate func deliver(_ events: [Inotify.Event]) {
            queue.withLock { queue in
                for event in events {
                    if queue.count < limit {
                        queue.append(event)
                    } else if queue.last?.mask.contains(.queueOverflow) != true {
                        queue.append(Inotify.Event(watch: -1, mask: .queueOverflow, cookie: 0, name: []))
                    }
                }
            }
            Syscalls.signalWakeup(writable)
        }
    }

    private struct State: ~Copyable {
        var isRunning = false
        var requests: [@Sendable () -> Void] = []
        /// The descriptor of the running owner thread's (unlinked) sentinel file, touched to wake it.
        var sentinel: CInt?
        var subscriptions: [ObjectIdentifier: Subscription] = [:]
        /// Which subscriptions asked for each watch (the kernel gives one watch per inode).
        var holders: [CInt: Set<ObjectIdentifier>] = [:]
        var initializationError: FileSystemEventsError?
        /// Watches the last subscription left behind, for `inotifytools_cleanup` to drop, or
        /// for the owner to remove if a new subscription arrived first.
        var deferredRemovals: [CInt] = []
        /// Sources that left last, waiting for the library to close its descriptor (or for a
        /// new source to take it over), so that stopping a source closes every descriptor.
        var shutdownWaiters: [DispatchSemaphore] = []
        /// The library's inotify descriptor, found through `/proc/self/fdinfo` (-1 if not).
        var libraryDescriptor: CInt = -1
        /// Watches that sources which left held and no source holds now, for the owner to
        /// remove a batch at a time with the queue read in between (see ``removeUnheldWatches()``).
        var unheldWatches: [CInt] = []
    }

    private let state = Mutex(State())

    // MARK: Subscriptions

    func subscribe() throws(FileSystemEventsError) -> Subscription {
        let pipe: (read: CInt, write: CInt)
        switch Syscalls.pipe() {
        case .success(let fds): pipe = fds
        case .failure(let errno): throw .systemCallFailed(call: "pipe", path: nil, errno: errno)
        }
        let subscription = Subscription(readable: pipe.read, writable: pipe.write)
        state.withLock { $0.subscriptions[ObjectIdentifier(subscription)] = subscription }
        do {
            try startIfNeeded()
        } catch {
            state.withLock { $0.subscriptions[ObjectIdentifier(subscription)] = nil }
            Syscalls.close(pipe.read)
            Syscalls.close(pipe.write)
            throw error
        }
        let failure: FileSystemEventsError? = perform { [self] in
            state.withLock { $0.initializationError }
        }
        if let failure {
            unsubscribe(subscription)
            throw failure
        }
        return subscription
    }

    func unsubscribe(_ subscription: Subscription) {
        let id = ObjectIdentifier(subscription)
        let shutdown = perform { [self] () -> DispatchSemaphore? in
            var shutdown: DispatchSemaphore?
            state.withLock { state in
                state.subscriptions[id] = nil
                var unused: [CInt] = []
                for (watch, holders) in state.holders where holders.contains(id) {
                    var remaining = holders
                    remaining.remove(id)
                    state.holders[watch] = remaining.isEmpty ? nil : remaining
                    if remaining.isEmpty { unused.append(watch) }
                }
                // The last source out: the owner is about to close the library's descriptor,
                // which drops every kernel watch at once. Removing them one by one instead
                // races with the host deleting the tree right after stopping: the kernel has
                // then dropped the watch already, and libinotifytools prints "Failed to remove
                // watch" to stderr.
                if state.subscriptions.isEmpty {
                    state.deferredRemovals += unused
                    let waiter = DispatchSemaphore(value: 0)
                    state.shutdownWaiters.append(waiter)
                    shutdown = waiter
                    return
                }
                // Removed by the owner a batch at a time, the queue read in between: each
                // removal queues an `IN_IGNORED` on the instance the other sources share, and a
                // source leaving with more watches than `fs.inotify.max_queued_events` overflowed
                // it, so that every other source was told of an overflow and rescanned its tree.
                state.unheldWatches += unused
            }
            // Closed here, on the owner thread that routes events, so no delivery can be
            // writing to these descriptors (or to whatever reuses their numbers) meanwhile.
            Syscalls.close(subscription.readable)
            Syscalls.close(subscription.writable)
            return shutdown
        }
        // The owner notices it has no subscriptions left and shuts the library down. The
        // last source waits for that: the library's descriptor is, for now, its descriptor.
        wake()
        shutdown?.wait()
    }

    // MARK: Library calls (all on the owner thread)

    func addWatch(_ path: [UInt8], mask: Inotify.Mask, for subscription: Subscription) -> Result<CInt, Errno> {
        let id = ObjectIdentifier(subscription)
        // With the library's descriptor known, the watch is a plain syscall on it that touches
        // no library state, so it is made here, on the caller's thread: a hand-off to the owner
        // per directory (a sentinel touch, a wake-up and a semaphore each way) made the crawl
        // of 10,000 directories three times slower than raw inotify's. The state lock is held
        // across the call, so the owner cannot route the new watch's first event (which the
        // kernel can queue only after the call) before the holder is recorded. The descriptor
        // stays open meanwhile: it closes only after the last subscription, this one, leaves.
        if let added = addWatchOnLibraryDescriptor(path, mask: mask, holder: id) { return added }
        return perform { [self] in
            // The descriptor may have become known since: then the same direct call.
            if let added = addWatchOnLibraryDescriptor(path, mask: mask, holder: id) { return added }
            let ok = withCString(path) { inotifytools_watch_file($0, Int32(bitPattern: mask.union(.maskAdd).rawValue)) }
            guard ok == 1 else { return .failure(Errno(rawValue: inotifytools_error())) }
            let key = path + [UInt8(ascii: "/")]
            var watch = withCString(key) { inotifytools_wd_from_filename($0) }
            if watch < 0 { watch = withCString(path) { inotifytools_wd_from_filename($0) } }
            guard watch >= 0 else { return .failure(.noSuchFileOrDirectory) }
            state.withLock { _ = $0.holders[watch, default: []].insert(id) }
            return .success(watch)
        }
    }

    /// ``addWatch(_:mask:for:)`` on the calling thread, for a caller that knows the library's
    /// descriptor is known (``knowsLibraryDescriptor``): it stays known while `subscription` is
    /// subscribed. A path relative to the working directory means the calling thread's, which
    /// the owner thread's hand-off would not.
    func addWatchOnCallingThread(_ path: [UInt8], mask: Inotify.Mask, for subscription: Subscription) -> Result<CInt, Errno> {
        addWatchOnLibraryDescriptor(path, mask: mask, holder: ObjectIdentifier(subscription)) ?? .failure(.badFileDescriptor)
    }

    /// Whether the library's descriptor is known, so that watches are added on it directly.
    var knowsLibraryDescriptor: Bool { state.withLock { $0.libraryDescriptor >= 0 } }

    /// The watch added on the library's descriptor (`nil` while it is not known), and its
    /// holder recorded in the same critical section.
    ///
    /// Never through the library's path-to-watch table: the path is a /proc/self/fd link to a
    /// directory the watch opened and checked, and a table keyed by path answers for whatever
    /// stood at that path before; on the descriptor, the number is the kernel's own answer.
    ///
    /// Sources share the kernel's one watch per inode, and a plain `inotify_add_watch` on a
    /// watched inode replaces its mask: a source that does not settle files would take
    /// `IN_CLOSE_WRITE` away from one that does. `IN_MASK_ADD` makes the watch's mask the
    /// union of what its holders asked for; each source ignores what it did not ask for.
    private func addWatchOnLibraryDescriptor(_ path: [UInt8], mask: Inotify.Mask, holder: ObjectIdentifier) -> Result<CInt, Errno>? {
        state.withLock { state in
            guard state.libraryDescriptor >= 0 else { return nil }
            let added = Inotify.addWatch(state.libraryDescriptor, path: path, mask: mask.union(.maskAdd))
            if case .success(let watch) = added { state.holders[watch, default: []].insert(holder) }
            return added
        }
    }

    /// Queues a marker for `subscription` (see `InotifyKernel.queueMarker()`): a watch on
    /// the subscription's own pipe, added on the library's descriptor and removed at once. The
    /// subscription stays its holder until the owner routes the watch's `IN_IGNORED` to it,
    /// behind every event the kernel queued before. `nil` while the descriptor is not known.
    func queueMarker(for subscription: Subscription) -> CInt? {
        let id = ObjectIdentifier(subscription)
        let path = Syscalls.processDescriptorPath(subscription.readable)
        return state.withLock { state -> CInt? in
            guard state.libraryDescriptor >= 0,
                  case .success(let watch) = Inotify.addWatch(state.libraryDescriptor, path: path, mask: .attrib)
            else { return nil }
            state.holders[watch, default: []].insert(id)
            guard case .success = Inotify.removeWatch(state.libraryDescriptor, watch: watch) else {
                state.holders[watch] = nil
                return nil
            }
            return watch
        }
    }

    func removeWatch(_ watch: CInt, for subscription: Subscription) {
        let id = ObjectIdentifier(subscription)
        perform { [self] in
            state.withLock { state in
                guard var holders = state.holders[watch] else { return }
                holders.remove(id)
                state.holders[watch] = holders.isEmpty ? nil : holders
                if holders.isEmpty { Self.removeKernelWatch(watch, state: &state) }
            }
        }
    }

    /// Removes a watch added by ``addWatch(_:mask:for:)`` that no source holds any more (on
    /// the owner thread).
    ///
    /// Called in the same critical section that found the watch unused. Another source's
    /// thread may add a watch on the same inode at any moment (``addWatch(_:mask:for:)`` works
    /// on the library's descriptor under this lock), and the kernel answers it with the same
    /// watch number while the watch stands: decided in one section and removed in another,
    /// the removal would take away the watch the newcomer was just given, and it would hear
    /// nothing more of that directory (a waited-for file root's directory, retired by its
    /// ancestor watch as the root's own watch took it over, went deaf that way).
    private static func removeKernelWatch(_ watch: CInt, state: inout State) {
        if state.libraryDescriptor >= 0 {
            Inotify.removeWatch(state.libraryDescriptor, watch: watch)
        } else {
            inotifytools_remove_watch_by_wd(watch)
        }
    }

    /// The library keeps its inotify descriptor to itself. It is the inotify instance whose
    /// watch `watch` stands on the sentinel's inode, as `/proc/self/fdinfo` lists them.
    private static func libraryDescriptor(watching sentinel: CInt, as watch: CInt) -> CInt {
        guard case .success(let status) = Syscalls.status(ofDescriptor: sentinel),
              let listing = opendir("/proc/self/fdinfo")
        else { return -1 }
        defer { closedir(listing) }
        let needle = Array("wd:\(String(watch, radix: 16)) ino:\(String(status.inode, radix: 16)) ".utf8)
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let number = Int32(String(decoding: name, as: UTF8.self)) else { continue }
            let text = Self.contents(of: Array("/proc/self/fdinfo/".utf8) + name)
            if text.starts(with: Array("pos:".utf8)), Self.contains(text, needle) { return number }
        }
        return -1
    }

    private static func contents(of path: [UInt8]) -> [UInt8] {
        guard case .success(let fd) = Syscalls.open(atPath: path, flags: O_RDONLY) else { return [] }
        defer { Syscalls.close(fd) }
        var result: [UInt8] = []
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { buffer in
            while case .success(let count) = Syscalls.read(fd, into: buffer), count > 0, result.count < 1 << 20 {
                result += buffer[..<count]
            }
        }
        return result
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    // MARK: The owner thread

    /// Held by an owner thread from `inotifytools_initialize` to `inotifytools_cleanup`, so a
    /// thread started for a new source never calls into the library while the previous one
    /// is still shutting it down.
    private let libraryLifetime = Mutex<Void>(())

    private func startIfNeeded() throws(FileSystemEventsError) {
        let mustStart = state.withLock { state -> Bool in
            guard !state.isRunning else { return false }
            state.isRunning = true
            state.initializationError = nil
            return true
        }
        guard mustStart else { return }
        let ready = DispatchSemaphore(value: 0)
        let started = ProducerThread.start { [self] in
            libraryLifetime.withLock { _ in
                run(ready: ready)
            }
        }
        if !started {
            state.withLock { $0.isRunning = false }
            throw .systemCallFailed(call: "pthread_create", path: nil, errno: .resourceTemporarilyUnavailable)
        }
        // Requests may only be queued once the owner can be woken.
        ready.wait()
    }

    private func run(ready: DispatchSemaphore) {
        let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RawInotifyKernel.readBufferSize, alignment: 8)
        defer { readBuffer.deallocate() }
        let library = openLibrary()
        ready.signal()

        while true {
            // Leaving is decided under the same lock that subscribe() uses to decide whether
            // to start a thread, so a source arriving now gets a thread of its own.
            let (requests, done) = state.withLock { state -> ([@Sendable () -> Void], Bool) in
                let requests = state.requests
                state.requests = []
                if requests.isEmpty && state.subscriptions.isEmpty {
                    state.isRunning = false
                    state.sentinel = nil
                    state.libraryDescriptor = -1
                    state.deferredRemovals = []
                    state.unheldWatches = []  // closing the library's descriptor drops them
                    return ([], true)
                }
                return (requests, false)
            }
            if done { break }
            // A new source arrived before the library shut down: the previous one's watches
            // go now (a batch at a time, as any leaving source's), unless the new source takes
            // them meanwhile.
            state.withLock { state in
                state.unheldWatches += state.deferredRemovals
                state.deferredRemovals = []
            }
            // The library stays up for the new source: whoever waited for it to close stops
            // waiting.
            let handedOver = state.withLock { state -> [DispatchSemaphore] in
                guard !state.subscriptions.isEmpty else { return [] }
                defer { state.shutdownWaiters = [] }
                return state.shutdownWaiters
            }
            for waiter in handedOver { waiter.signal() }
            for request in requests { request() }
            if let library, removeUnheldWatches() {
                // What they queued is read before the next batch, without waiting: a wait for
                // the sentinel could miss a touch whose event this reading took.
                dispatchEvents(until: library.watch, buffer: readBuffer, waits: false)
                continue
            }
            // A request whose sentinel touch a reading without a wait took has had its event
            // read: it is served before the owner blocks, or it would wait for ever.
            if !requests.isEmpty || hasPendingRequests { continue }
            guard let library else {
                // Only failing subscribers to serve: wait for their requests.
                waitForRequests()
                continue
            }
            dispatchEvents(until: library.watch, buffer: readBuffer)
        }
        if let library {
            inotifytools_cleanup()
            Syscalls.close(library.sentinel)
        }
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            defer { state.shutdownWaiters = [] }
            return state.shutdownWaiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Initializes the library and watches a new sentinel; the sentinel's descriptor and
    /// watch, or `nil` with ``State/initializationError`` set. `inotifytools_cleanup` and
    /// closing the sentinel undo it.
    private func openLibrary() -> (sentinel: CInt, watch: CInt)? {
        var opened: (sentinel: CInt, watch: CInt)?
        if inotifytools_initialize() == 0 {
            let errno = Errno(rawValue: inotifytools_error())
            let error = InotifyLimits.initializationError(errno, call: "inotifytools_initialize")
            state.withLock { $0.initializationError = error }
            return nil
        }
        switch Self.makeSentinelFile() {
        case .success(let (descriptor, path)):
            let sentinelMask: Inotify.Mask = [.attrib, .modify]
            let watched = withCString(path) { inotifytools_watch_file($0, Int32(bitPattern: sentinelMask.rawValue)) }
            let watchError = Errno(rawValue: inotifytools_error())
            let sentinelWatch = withCString(path) { inotifytools_wd_from_filename($0) }
            // The name goes at once: the watch follows the inode, which the descriptor
            // keeps alive, so there is nothing to clean up later (and no later to rely on).
            _ = withCString(path) { unlink($0) }
            if watched == 1 && sentinelWatch >= 0 {
                opened = (descriptor, sentinelWatch)
                let library = Self.libraryDescriptor(watching: descriptor, as: sentinelWatch)
                state.withLock { $0.libraryDescriptor = library }
            } else {
                state.withLock { $0.initializationError = .systemCallFailed(call: "inotifytools_watch_file", path: nil, errno: watchError) }
                Syscalls.close(descriptor)
            }
        case .failure(let errno):
            state.withLock { $0.initializationError = .systemCallFailed(call: "mkstemp", path: nil, errno: errno) }
        }
        guard let opened else {
            inotifytools_cleanup()
            return nil
        }
        Self.discardPreviousInstancesEvents(sentinel: opened.sentinel, watch: opened.watch)
        state.withLock { $0.sentinel = opened.sentinel }
        return opened
    }

    private let idle = DispatchSemaphore(value: 0)

    private func waitForRequests() {
        _ = idle.wait(timeout: .now() + .milliseconds(100))
    }

    /// Waits for events and hands each real event to the sources holding its watch (all of
    /// them for an overflow). Returns when the sentinel fires, so requests are served.
    ///
    /// The events are read from the library's descriptor directly, all of a read at once, not
    /// through `inotifytools_next_event`: that reads ahead into a buffer of its own, and events
    /// waiting there are invisible to `FIONREAD`, so ``libraryHasUnreadEvents`` said "nothing
    /// unread" while they waited. A source then examined a name as if its model were current,
    /// with the renames that explain what it holds still in that buffer (scenario 47 failed
    /// so: `ln -s x L; mv L T2; mv F L` examined `L` as the file F). Reading into its own
    /// buffer, the owner knows when every event read is handed on. (Where the descriptor could
    /// not be found, the library reads, as before.)
    ///
    /// An `IN_MOVED_FROM` that ends a read is held until the next read: if that starts with
    /// its `IN_MOVED_TO` both go out in one append, as the kernel queues them, so a source
    /// never mistakes the first half for a move out of the tree. Touching the sentinel makes
    /// sure the next read comes: a matching `IN_MOVED_TO` is queued before the sentinel's event.
    ///
    /// Whether the kernel holds events the owner has not read, or the owner holds events it
    /// has not handed out yet: the sources' models are then behind the disk. Asked in this
    /// order, before a source looks at its own queue, so that an event is always seen in one
    /// of the three places.
    var libraryHasUnreadEvents: Bool {
        let descriptor = state.withLock { $0.libraryDescriptor }
        if descriptor >= 0 && cfse_bytes_waiting(descriptor) > 0 { return true }
        return isRouting.load(ordering: .acquiring) || isHoldingMove.load(ordering: .acquiring)
    }

    private let isHoldingMove = Atomic<Bool>(false)
    /// Raised before a read takes events out of the kernel's queue, lowered once every one
    /// of them is with its sources.
    private let isRouting = Atomic<Bool>(false)

    ///
    /// - Parameter waits: `false` reads only what is queued now, and returns once the queue
    ///   is empty (or the sentinel fires, or requests wait).
    private func dispatchEvents(until sentinelWatch: CInt, buffer: UnsafeMutableRawBufferPointer, waits: Bool = true) {
        var held: Inotify.Event? {
            didSet { isHoldingMove.store(held != nil, ordering: .releasing) }
        }
        // What a read hands on, in order, routed in one step at the end of the read: one lock
        // and one wakeup per source and read, not per event. Routed one by one, every
        // `IN_MODIFY` of a writer appending at full speed cost the owner a dictionary, a lock
        // and a pipe write, the owner fell behind the kernel, and its queue overflowed into
        // rescans (a follower then lagged by half a second and missed truncations).
        var outgoing: [Inotify.Event] = []
        func flush() {
            guard !outgoing.isEmpty else { return }
            route(outgoing)
            outgoing.removeAll(keepingCapacity: true)
        }
        // A held half is routed before the flag drops, so `libraryHasUnreadEvents` never says
        // "nothing unread" while an event is on its way to a source's queue. (Routed without
        // clearing `held`, the flag once stayed set after a move out of the tree, and every
        // inotifytools source in the process then saw a queue that never went quiet: stale
        // crawls waited for ever instead of being rescanned.) `isRouting` covers what waits
        // in `outgoing`: it is lowered only after ``flush()``.
        func routeHeld(followedBy second: Inotify.Event? = nil) {
            guard let first = held else { return }
            outgoing.append(first)
            if let second { outgoing.append(second) }
            held = nil
        }
        defer {
            // Routed before `held` is cleared, so the flag covers it on its way.
            if let first = held { outgoing.append(first) }
            flush()
            held = nil
        }
        /// Hands on one event; true when it was the sentinel's.
        func dispatch(_ event: Inotify.Event) -> Bool {
            if event.watch == sentinelWatch { return true }
            if let first = held {
                if event.mask.contains(.movedTo) && event.cookie == first.cookie {
                    routeHeld(followedBy: event)
                    return false
                }
                routeHeld()
            }
            if event.mask.contains(.movedFrom) {
                held = event
                return false
            }
            outgoing.append(event)
            return false
        }
        let descriptor = state.withLock { $0.libraryDescriptor }
        guard descriptor >= 0 else {
            guard waits else { return }  // the library's reads cannot be bounded
            // A negative timeout blocks until an event (the sentinel's, at the latest).
            while let pointer = inotifytools_next_event(-1) {
                isRouting.store(true, ordering: .releasing)
                let isSentinel = dispatch(Inotify.event(at: UnsafeRawPointer(pointer)))
                flush()
                isRouting.store(false, ordering: .releasing)
                if isSentinel { return }
                if held != nil {
                    wake()
                } else if hasPendingRequests {
                    return
                }
            }
            return
        }
        var events: [Inotify.Event] = []
        while true {
            if !waits && cfse_bytes_waiting(descriptor) <= 0 { return }
            guard case .success = Syscalls.pollReadable([descriptor], timeoutMilliseconds: -1) else { return }
            isRouting.store(true, ordering: .releasing)
            events.removeAll(keepingCapacity: true)
            switch Syscalls.read(descriptor, into: buffer) {
            case .success(let count):
                Inotify.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]), into: &events)
            case .failure(.resourceTemporarilyUnavailable):
                break
            case .failure:
                isRouting.store(false, ordering: .releasing)
                return
            }
            var sawSentinel = false
            for event in events where dispatch(event) { sawSentinel = true }
            flush()
            isRouting.store(false, ordering: .releasing)
            if sawSentinel { return }
            if held != nil {
                wake()
            } else if hasPendingRequests {
                return
            }
        }
    }

    /// Removes up to ``ReleasedWatches/batchSize`` of the watches no source holds (on the owner
    /// thread); whether any was taken off the list. A watch a source took again meanwhile is
    /// kept: the kernel answers a new watch of the same inode with the one that still stands,
    /// and the source is its holder now.
    private func removeUnheldWatches() -> Bool {
        state.withLock { state in
            guard !state.unheldWatches.isEmpty else { return false }
            let batch = state.unheldWatches.suffix(ReleasedWatches.batchSize)
            state.unheldWatches.removeLast(batch.count)
            for watch in batch where state.holders[watch] == nil { Self.removeKernelWatch(watch, state: &state) }
            return true
        }
    }

    private var hasPendingRequests: Bool {
        state.withLock { !$0.requests.isEmpty }
    }

    /// Hands events to every source holding their watches (every source, for an overflow).
    private func route(_ events: [Inotify.Event]) {
        var batches: [ObjectIdentifier: (Subscription, [Inotify.Event])] = [:]
        state.withLock { state in
            for event in events {
                let receivers: [ObjectIdentifier]
                if event.mask.contains(.queueOverflow) {
                    receivers = Array(state.subscriptions.keys)
                } else {
                    receivers = Array(state.holders[event.watch] ?? [])
                    if event.mask.contains(.ignored) { state.holders[event.watch] = nil }
                }
                for id in receivers {
                    guard let subscription = state.subscriptions[id] else { continue }
                    batches[id, default: (subscription, [])].1.append(event)
                }
            }
        }
        for (subscription, batch) in batches.values { subscription.deliver(batch) }
    }

    /// Runs `body` on the owner thread and waits for its result.
    @discardableResult
    private func perform<T>(_ body: @escaping @Sendable () -> T) -> T {
        let slot = ResultSlot<T>()
        let done = DispatchSemaphore(value: 0)
        state.withLock { state in
            state.requests.append {
                slot.value = body()
                done.signal()
            }
        }
        wake()
        done.wait()
        // The semaphore orders the owner's write before this read.
        return slot.value!
    }

    /// Touches the sentinel, ending the owner's wait in the library.
    private func wake() {
        idle.signal()
        state.withLock { state in
            guard let sentinel = state.sentinel else { return }
            _ = futimens(sentinel, nil)
        }
    }

    /// Reads and drops what the library still holds from the previous instance.
    ///
    /// `inotifytools_next_event` reads ahead into a static buffer that `inotifytools_cleanup`
    /// does not empty: events the last owner had not handed out when its last source left
    /// would be this instance's first, under watch numbers this instance hands out again from
    /// 1, and be routed to whichever new source holds the same number. The sentinel is this
    /// instance's only watch so far; writing to it queues an `IN_MODIFY` that no earlier
    /// owner ever caused (they only touched it), so everything read before that marker is old.
    private static func discardPreviousInstancesEvents(sentinel: CInt, watch: CInt) {
        let byte: UInt8 = 0
        guard case .success = withUnsafeBytes(of: byte, { Syscalls.write(sentinel, $0) }) else { return }
        while let pointer = inotifytools_next_event(-1) {
            let event = Inotify.event(at: UnsafeRawPointer(pointer))
            if event.watch == watch && event.mask.contains(.modify) { return }
        }
    }

    /// A new empty file in `$TMPDIR` (or `/tmp`), open for writing, and its path.
    private static func makeSentinelFile() -> Result<(CInt, [UInt8]), Errno> {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/filewatch-inotifytools-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return .failure(Errno(rawValue: errno)) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let path = template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return .success((descriptor, path))
    }

}

/// The result of one request, written by the owner thread before it signals the semaphore
/// the caller waits on (that hand-off is what makes the unchecked access safe).
private final class ResultSlot<T>: @unchecked Sendable {
    var value: T?
}
#endif
