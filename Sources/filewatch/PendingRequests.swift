import Synchronization

/// Carries requests made before their target exists over to it when it arrives.
///
/// The termination monitor is installed before the work it ends has started (a signal sent the
/// instant `ready` is printed must find its handler), so a signal can ask to stop a watch or a
/// task that is not there yet: the request waits here and is carried out on ``attach(_:)``.
final class PendingRequests<Target: Sendable>: Sendable {
    private let state = Mutex<(target: Target?, waiting: [@Sendable (Target) -> Void])>((nil, []))

    /// Hands over the target, carrying out what was asked before, in order.
    func attach(_ target: Target) {
        let waiting = state.withLock { state in
            state.target = target
            defer { state.waiting = [] }
            return state.waiting
        }
        for request in waiting { request(target) }
    }

    /// Carries out `request` now if the target is there, else when it arrives.
    func request(_ request: @escaping @Sendable (Target) -> Void) {
        let target = state.withLock { state -> Target? in
            if state.target == nil { state.waiting.append(request) }
            return state.target
        }
        if let target { request(target) }
    }
}
