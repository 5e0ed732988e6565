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
    /// 1 GiB of address space: about a million levels at the deepest frame per level measured
    /// here (a polling scan and its diff). Where the system refuses that much, the thread
    /// starts with the default stack instead.
    package static var stackSize: Int { 1 << 30 }

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Returns `false` if the thread could not be created (the caller reports the failure).
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        if create(box, stackSize: stackSize) || create(box, stackSize: nil) { return true }
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
