public import Dispatch
public import FileSystemEventsCore
public import SystemPackage

extension FileSystemObserver {
    /// Where a ``FileSystemObserver`` runs its handlers.
    public enum Delivery: Sendable {
        /// On the thread that delivers the source's updates
        /// (``FileSystemEventSource/updates(deliveringTo:)``), with no hand-over: the lowest
        /// latency, for handlers that do little (print a line, post to another loop). A slow
        /// handler slows the watch, which recovers from a kernel overflow by rescanning.
        case watchThread
        /// Asynchronously on `queue`, in the order of the updates when the queue is serial
        /// (`.main` for UI code). Updates wait in the queue, not in the watch's bounded buffer.
        case queue(DispatchQueue)
    }

    /// Why a ``FileSystemObserver``'s watch ended.
    public enum EndReason: Sendable, Hashable, CustomStringConvertible {
        /// ``FileSystemObserver/stop()`` was called.
        case stopped
        /// Every watched root was deleted or moved away (the updates ended with `rootRemoved`
        /// for each of these paths).
        case rootsRemoved([FilePath])
        /// ``FileSystemObserver/finish()`` was called, and the source delivered what it had seen.
        case finished
        /// The watch failed after it was ready; the error says what to do.
        case failed(FileSystemEventsError)

        /// A short phrase for logs: `stopped`, `finished`, the removed roots, or the error's message.
        public var description: String {
            switch self {
            case .stopped: return "stopped"
            case .rootsRemoved(let roots): return "removed or moved away: \(roots.map(\.string).joined(separator: ", "))"
            case .finished: return "finished"
            case .failed(let error): return error.description
            }
        }
    }
}
