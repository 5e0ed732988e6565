import CFileSystemEventsShims
import PlatformLibc

/// Starts `body` on a detached thread of its own.
///
/// Backends block: in `poll` on a kernel descriptor, in a directory scan of a million entries.
/// Doing that on Swift's cooperative pool (two threads on a two-core machine) would stall
/// every other task in the process, so each watch gets a plain POSIX thread.
///
/// The thread's stack is large (``stackSize``), because the work on it follows the tree's
/// depth: a crawl, a scan, a diff and the release of a model descend one call per level, and
/// a directory can be nested to any depth (each level opened relative to the one above, the
/// path grows past `PATH_MAX` without limit). On the default 8 MiB stack a polling watch of a
/// chain 10,000 directories deep, and an inotify watch of one 30,000 deep, crashed. The
/// stack is address space reserved, not memory used: only the pages a deep tree touches are
/// ever resident.
package enum ProducerThread {
    /// 1 GiB of address space. A polling watch of the deployment build crashed under 10,000
    /// levels on 8 MiB, some 800 bytes a level: this is room for about a hundred times that.
    /// A debug build's diff takes some 7.7 KB a level, and filled it at 138,000 levels. Where
    /// the system refuses that much, the thread starts with the largest of
    /// ``smallerStackSizes`` it grants, and with the default stack only where it grants none.
    package static var stackSize: Int { 1 << 30 }

    /// What a thread asks for in turn where ``stackSize`` is refused: under an address-space
    /// limit (`ulimit -v`, `prlimit --as=2G`), which refused the 1 GiB, a watch fell back to
    /// the default 8 MiB at once and crashed (SIGSEGV, nothing said) on a chain 12,000
    /// directories deep that 256 MiB holds many times over.
    private static var smallerStackSizes: [Int] { [1 << 28, 1 << 26] }

    /// Runs `body` on a thread with a stack of ``stackSize`` and waits for it: at once on this
    /// thread if its stack is that large already (a watch's own), otherwise on a thread made
    /// for the call. For what a library user calls on a thread of their own and descends one
    /// call per level of the tree (a scan of a snapshot, its diff, its encoding), which on an
    /// 8 MiB stack crashed on a tree 10,000 levels deep. Where no thread can be made, `body`
    /// runs here. (A throwing body returns a `Result`.)
    package static func withLargeStack<T>(_ body: () -> T) -> T {
        // A watch's own thread, even one that got a smaller large stack: another thread's
        // stack on top of it (the 1 GiB refused again, then one more 256 MiB) left a watch
        // under an address-space limit too little for its heap.
        if currentStackSize() >= smallerStackSizes.last ?? stackSize { return body() }
        var outcome: T?
        withoutActuallyEscaping(body) { escapable in
            let argument = Unmanaged.passRetained(LargeStackCall { outcome = escapable() }).toOpaque()
            var created = false
            for size in [stackSize] + smallerStackSizes where !created {
                var attributes = pthread_attr_t()
                pthread_attr_init(&attributes)
                defer { pthread_attr_destroy(&attributes) }
                #if canImport(Darwin)
                var thread: pthread_t?
                created = pthread_attr_setstacksize(&attributes, size) == 0
                    && pthread_create(&thread, &attributes, { argument in
                        Unmanaged<LargeStackCall>.fromOpaque(argument).takeRetainedValue().body()
                        return nil
                    }, argument) == 0
                if created, let thread { pthread_join(thread, nil) }
                #else
                var thread = pthread_t()
                created = pthread_attr_setstacksize(&attributes, size) == 0
                    && pthread_create(&thread, &attributes, { argument in
                        if let argument { Unmanaged<LargeStackCall>.fromOpaque(argument).takeRetainedValue().body() }
                        return nil
                    }, argument) == 0
                if created { pthread_join(thread, nil) }
                #endif
            }
            if !created { Unmanaged<LargeStackCall>.fromOpaque(argument).release() }
        }
        return outcome ?? body()
    }

    /// The size of the calling thread's stack, 0 where it cannot be told.
    private static func currentStackSize() -> Int {
        Int(cfse_current_stack_size())
    }

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Returns `false` if the thread could not be created (the caller reports the failure).
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        for size in [stackSize] + smallerStackSizes where create(box, stackSize: size) { return true }
        if create(box, stackSize: nil) { return true }
        Unmanaged<Box>.fromOpaque(box).release()
        return false
    }

    /// Starts a detached thread running `box`'s body with a stack of `stackSize` bytes (the
    /// default where `nil`); `false` if it could not be created.
    private static func create(_ box: UnsafeMutableRawPointer, stackSize: Int?) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        if let stackSize, pthread_attr_setstacksize(&attributes, stackSize) != 0 { return false }
        #if canImport(Darwin)
        var thread: pthread_t?
        let result = pthread_create(&thread, &attributes, { argument in
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, box)
        #else
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            if let argument { Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body() }
            return nil
        }, box)
        #endif
        return result == 0
    }
}

/// One call of ``ProducerThread/withLargeStack(_:)``, handed to the thread that runs it; the
/// caller joins that thread before it reads what the body stored.
private final class LargeStackCall: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
