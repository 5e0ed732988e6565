#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Holds events for the ``WatchOptions/latency`` window and hands them out coalesced.
///
/// With zero latency every batch is due at once, so a kernel read becomes one delivery.
/// Backends put ``millisecondsUntilDue(now:)`` into their `poll` timeout, which is how a
/// window closes without any timer thread.
package struct EventBatcher {
    package let latencyNanoseconds: UInt64
    private var pending: [FileSystemEvent] = []
    private var windowOpenedAt: UInt64 = 0

    package init(latency: Duration) {
        let (seconds, attoseconds) = latency.components
        let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        self.latencyNanoseconds = UInt64(nanos)
    }

    package var isEmpty: Bool { pending.isEmpty }

    package mutating func add(_ events: [FileSystemEvent], now: UInt64) {
        guard !events.isEmpty else { return }
        if pending.isEmpty { windowOpenedAt = now }
        pending.append(contentsOf: events)
    }

    /// The `poll` timeout that ends the current window; -1 when nothing is pending.
    package func millisecondsUntilDue(now: UInt64) -> CInt {
        guard !pending.isEmpty else { return -1 }
        let due = windowOpenedAt &+ latencyNanoseconds
        guard due > now else { return 0 }
        return CInt(min(UInt64(Int32.max), (due - now + 999_999) / 1_000_000))
    }

    /// The coalesced batch if its window has closed.
    package mutating func takeIfDue(now: UInt64) -> [FileSystemEvent]? {
        guard !pending.isEmpty, now >= windowOpenedAt &+ latencyNanoseconds else { return nil }
        return takeAll()
    }

    package mutating func takeAll() -> [FileSystemEvent] {
        let events = EventCoalescer.coalesce(pending)
        pending = []
        return events
    }
}

/// Monotonic time in nanoseconds, for windows and deadlines that must not jump with the wall clock.
package enum MonotonicClock {
    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
