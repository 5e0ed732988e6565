import PlatformLibc

/// Starts `body` on a detached thread of its own.
///
/// Backends block: in `poll` on a kernel descriptor, in a directory scan of a million entries.
/// Doing that on Swift's cooperative pool (two threads on a two-core machine) would stall
/// every other task in the process, so each watch gets a plain POSIX thread.
package enum ProducerThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Returns `false` if the thread could not be created (the caller reports the failure).
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
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
        if result != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            return false
        }
        return true
    }
}
