import PlatformLibc

/// Holds events for the ``WatchOptions/latency`` window and hands them out coalesced: the
/// latency window every backend owes its consumer, as a building block for third-party ones.
///
/// With zero latency every batch is due at once, so a kernel read becomes one delivery.
/// Backends put ``timeUntilDue(at:)`` into their `poll` timeout, which is how a window closes
/// without any timer thread. Time is read from ``MonotonicClock``, which the wall clock does
/// not move.
///
/// Held events count against ``WatchOptions/bufferLimit`` like delivered ones: a window that
/// reaches the limit closes early, so a long window over a flood costs memory in proportion to
/// the limit, never without bound, and a batch gathered from several reads or scans never holds
/// more than the limit. One ``add(_:at:)`` is never split, though: it is one kernel read or one
/// scan's diff, whose events are only consistent together (a polling diff lists its changes by
/// name, not by time, so a consumer that syncs on a marker file must get the whole diff at once).
/// Backends keep each add small (a kernel backend stops reading at the limit). What is buffered
/// downstream, in the channel, is bounded by the same limit: the producer stops reading once
/// the channel is full.
public struct EventBatcher: Sendable {
    /// How long a window stays open after its first event.
    public let latency: Duration
    package let latencyNanoseconds: UInt64
    /// The most events one batch holds; the window closes early when it is reached.
    public let limit: Int
    private var pending: [FileSystemEvent] = []
    /// Windows closed early because they reached ``limit``, coalesced, oldest first: due now.
    private var closed: [[FileSystemEvent]] = []
    private var windowOpenedAt: UInt64 = 0

    /// - Parameters:
    ///   - latency: how long a window stays open.
    ///   - bufferLimit: the most events held in one window (``WatchOptions/bufferLimit``).
    ///     The default is ``WatchOptions``' default; pass `options.bufferLimit`.
    public init(latency: Duration, bufferLimit: Int = WatchOptions.defaultBufferLimit) {
        self.latency = latency
        self.latencyNanoseconds = latency.saturatingNanoseconds
        self.limit = max(1, bufferLimit)
    }

    /// Nothing held: no window open, none closed and waiting.
    public var isEmpty: Bool { pending.isEmpty && closed.isEmpty }

    /// Events held, in the open window and in windows closed early but not taken yet.
    public var heldCount: Int { pending.count + closed.reduce(0) { $0 + $1.count } }

    /// Adds one kernel read's or one scan's events, in order, read or scanned at `instant`;
    /// the first of a window opens it.
    public mutating func add(_ events: [FileSystemEvent], at instant: MonotonicClock.Instant) {
        add(events, now: instant.nanoseconds)
    }

    /// ``add(_:at:)`` in the clock's nanoseconds, as the built-in backends' loops keep time.
    package mutating func add(_ events: [FileSystemEvent], now: UInt64) {
        guard !events.isEmpty else { return }
        if !pending.isEmpty && pending.count + events.count > limit {
            // These would overfill the open window: it closes now, and they open the next.
            closeWindow()
        }
        if pending.isEmpty { windowOpenedAt = now }
        pending.append(contentsOf: events)
        if pending.count >= limit {
            // The window is full: it closes now instead of at the end of the latency.
            closeWindow()
        }
    }

    private mutating func closeWindow() {
        closed.append(EventCoalescer.coalesce(pending))
        pending = []
    }

    /// How long until a batch is due: zero when one is due already, `nil` when nothing is held
    /// (wait for the next read or scan, however long it takes).
    public func timeUntilDue(at instant: MonotonicClock.Instant) -> Duration? {
        if !closed.isEmpty { return .zero }
        guard !pending.isEmpty else { return nil }
        let due = dueAt
        return due > instant.nanoseconds ? .nanoseconds(due - instant.nanoseconds) : .zero
    }

    /// The `poll` timeout that ends the current window; -1 when nothing is pending.
    package func millisecondsUntilDue(now: UInt64) -> CInt {
        if !closed.isEmpty { return 0 }
        guard !pending.isEmpty else { return -1 }
        return MonotonicClock.pollTimeout(from: now, until: dueAt)
    }

    /// The oldest coalesced batch whose window has closed by `instant` (by time or by reaching
    /// the limit). Call again while it returns batches: a window that filled early may be
    /// followed by another.
    public mutating func takeIfDue(at instant: MonotonicClock.Instant) -> [FileSystemEvent]? {
        takeIfDue(now: instant.nanoseconds)
    }

    /// ``takeIfDue(at:)`` in the clock's nanoseconds.
    package mutating func takeIfDue(now: UInt64) -> [FileSystemEvent]? {
        if !closed.isEmpty { return closed.removeFirst() }
        guard !pending.isEmpty, now >= dueAt else { return nil }
        closeWindow()
        return closed.removeFirst()
    }

    /// When the open window closes by time (saturating: a window of years never wraps round).
    private var dueAt: UInt64 {
        let (due, overflow) = windowOpenedAt.addingReportingOverflow(latencyNanoseconds)
        return overflow ? .max : due
    }

    /// Everything held, in order, as one delivery (for a stop or a final flush).
    public mutating func takeAll() -> [FileSystemEvent] {
        var events = closed.flatMap { $0 }
        events += EventCoalescer.coalesce(pending)
        closed = []
        pending = []
        return events
    }
}

extension Duration {
    /// Whole nanoseconds, 0 for negative durations and `UInt64.max` past what fits, so no
    /// conversion of a user's value can trap.
    package var saturatingNanoseconds: UInt64 {
        self > .zero ? saturatingMagnitudeNanoseconds : 0
    }

    /// Whole nanoseconds of the duration's size, whatever its sign (`UInt64.max` past what
    /// fits): the components share the duration's sign, so their magnitudes add up.
    package var saturatingMagnitudeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.magnitude.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds.magnitude / 1_000_000_000))
        return carry ? .max : total
    }
}

/// `CLOCK_MONOTONIC` as a Swift `Clock`: the time latency windows (``EventBatcher``) and
/// settle deadlines (``SettleTracker``) are kept in, which neither a wall-clock change nor a
/// leap second moves. A `poll` timeout computed from it never ends a window early.
public struct MonotonicClock: Clock {
    /// A point on `CLOCK_MONOTONIC`. It has no meaning across processes or reboots: keep
    /// only the durations between instants.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Nanoseconds since the clock's (unspecified) origin.
        package let nanoseconds: UInt64

        package init(nanoseconds: UInt64) {
            self.nanoseconds = nanoseconds
        }

        /// Saturates rather than wrapping: an instant years ahead (a window of
        /// ``WatchOptions/latencyRange``'s upper end) stays the latest instant there is.
        public func advanced(by duration: Duration) -> Instant {
            let step = duration.saturatingMagnitudeNanoseconds
            if duration > .zero {
                let (sum, overflow) = nanoseconds.addingReportingOverflow(step)
                return Instant(nanoseconds: overflow ? .max : sum)
            }
            return Instant(nanoseconds: nanoseconds > step ? nanoseconds - step : 0)
        }

        /// Negative when `other` is earlier than this instant.
        public func duration(to other: Instant) -> Duration {
            other.nanoseconds >= nanoseconds
                ? .nanoseconds(other.nanoseconds - nanoseconds) : .zero - .nanoseconds(nanoseconds - other.nanoseconds)
        }

        /// Earlier instants order first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

        /// The nanoseconds since the clock's origin, for logs.
        public var description: String { "MonotonicClock.Instant(\(nanoseconds) ns)" }
    }

    /// Holds nothing: every instance reads the same `CLOCK_MONOTONIC`.
    public init() {}

    /// Now, read with `clock_gettime(CLOCK_MONOTONIC)`.
    public var now: Instant { Instant(nanoseconds: Self.nanoseconds()) }

    /// The clock counts nanoseconds.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps until `deadline`. Watches do not sleep on it, they put the time left into `poll`;
    /// this is here so the clock can be handed to code that takes any `Clock`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let left = now.duration(to: deadline)
        if left > .zero { try await Task.sleep(for: left, tolerance: tolerance) }
    }

    /// `CLOCK_MONOTONIC`, in nanoseconds.
    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// A `poll` timeout that lasts until `deadline`: whole milliseconds rounded up (so the
    /// wait never ends before the deadline), 0 once it has passed, at most `Int32.max`.
    package static func pollTimeout(from now: UInt64, until deadline: UInt64) -> CInt {
        guard deadline > now else { return 0 }
        let remaining = deadline - now
        let milliseconds = remaining / 1_000_000 + (remaining % 1_000_000 == 0 ? 0 : 1)
        return CInt(min(UInt64(Int32.max), milliseconds))
    }

    /// A `poll` timeout (whole milliseconds rounded up, -1 for none, at most `Int32.max`) that
    /// lasts `duration`, for a watch that waits in `poll(2)` on ``EventBatcher/timeUntilDue(at:)``.
    public static func pollTimeout(_ duration: Duration?) -> CInt {
        guard let duration else { return -1 }
        let nanoseconds = duration.saturatingNanoseconds
        return pollTimeout(from: 0, until: nanoseconds)
    }
}
