import Synchronization

/// How the follower's source and timers tell it to look again.
///
/// A flag plus a one-slot stream: the flag lets the follower notice a wake-up between two
/// chunks of a long read without waiting, and the stream lets it sleep until one arrives.
/// Wake-ups coalesce, which is safe because each look reads everything there is.
final class FollowerWakeup: Sendable {
    private let pending = Mutex(false)
    let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        self.continuation = continuation
    }

    func wake() {
        pending.withLock { $0 = true }
        continuation.yield()
    }

    /// Whether a wake-up came since the last call.
    func takePending() -> Bool {
        pending.withLock { flag in
            defer { flag = false }
            return flag
        }
    }

    func finish() {
        continuation.finish()
    }
}
