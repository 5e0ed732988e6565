import PlatformLibc
package import SystemPackage

// The one place where a C return value becomes a `Result`, in the style of swift-system's
// Util.swift. Everything above this file speaks `Result<_, Errno>` or `throws(Errno)`.

@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(_ value: I) -> Result<I, Errno> {
    value == -1 ? .failure(Errno(rawValue: errno)) : .success(value)
}

/// Calls `body` until it stops failing with `EINTR`, so no caller has to remember the loop.
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(
    retryOnInterrupt: Bool,
    _ body: () -> I
) -> Result<I, Errno> {
    while true {
        switch valueOrErrno(body()) {
        case .success(let value):
            return .success(value)
        case .failure(let error):
            guard retryOnInterrupt && error == .interrupted else { return .failure(error) }
        }
    }
}

@inline(__always)
package func nothingOrErrno<I: FixedWidthInteger>(
    retryOnInterrupt: Bool,
    _ body: () -> I
) -> Result<Void, Errno> {
    valueOrErrno(retryOnInterrupt: retryOnInterrupt, body).map { _ in () }
}
