import PlatformLibc

/// A scenario's verdict when a backend breaks the contract. The message says what was
/// expected, what arrived, and (for replay failures) where the trees differ.
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// What was expected and what arrived; it may span several lines.
    public var message: String

    /// A failure with `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}

/// Thrown by a scenario that cannot run for a backend because the kernel or the environment
/// makes it impossible; the reason is part of the test output.
public struct ConformanceSkip: Error, CustomStringConvertible, Sendable {
    /// Why the scenario cannot run here.
    public var reason: String

    /// A skip for `reason`.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// `skipped: ` and the reason.
    public var description: String { "skipped: \(reason)" }

    /// Skips a scenario about directories this process may not read or search: as root,
    /// `CAP_DAC_READ_SEARCH` reads every one, and the scenario would prove nothing.
    public static func unlessUnprivileged() throws(ConformanceSkip) {
        guard geteuid() != 0 else {
            throw ConformanceSkip("running as root: CAP_DAC_READ_SEARCH reads every directory; scripts/test.sh reruns this as an unprivileged user")
        }
    }
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(ConformanceFailure) {
    if !condition { throw ConformanceFailure(message()) }
}
