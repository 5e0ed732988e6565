import FileSystemEvents
import Dispatch
import FileSystemEventsCore
import Glibc
import Synchronization

/// A source's `updates(deliveringTo:)`, seen through `updates()` so the conformance harness
/// can consume it: the handler hands each update over to an ordinary stream and, when that
/// stream's buffer is full, blocks until the harness makes room, as a slow handler would.
/// That is the delivery mode's contract under a stalled consumer: the watch waits, the kernel
/// queue overflows, and a rescan recovers.
struct HandlerDeliveredSource: FileSystemEventSource {
    let base: any FileSystemEventSource

    var backendName: String { base.backendName }
    var options: WatchOptions { base.options }
    var capabilities: FileSystemEventSourceCapabilities { base.capabilities }

    func updates() -> FileSystemEventStream {
        let base = self.base
        return FileSystemEventStream(bufferLimit: base.options.bufferLimit) { channel in
            let inner = Mutex<FileSystemEventStream?>(nil)
            let innerIsSet = DispatchSemaphore(value: 0)
            let stream = base.updates(deliveringTo: { update in
                if case .ready = update {
                    // The handler can run before `updates(deliveringTo:)` has returned.
                    innerIsSet.wait()
                    innerIsSet.signal()
                    if let state = inner.withLock({ $0 })?.initialState { channel.setInitialState(state) }
                }
                Self.send(update, to: channel)
            })
            inner.withLock { $0 = stream }
            innerIsSet.signal()
            channel.link(onTerminate: { stream.terminate() }, onFinish: { stream.finish() })
            var iterator = stream.makeBlockingIterator()
            do throws(FileSystemEventsError) {
                while try iterator.next() != nil {}
                channel.finish()
            } catch {
                channel.finish(throwing: error)
            }
        }
    }

    /// Blocks while the harness's buffer is full (the producer protocol of
    /// `FileSystemEventSource`: wait on the wakeup descriptor for room).
    private static func send(_ update: FileSystemWatchUpdate, to channel: FileSystemEventChannel) {
        guard case .enqueued(hasRoom: false) = channel.send(update) else { return }
        while !channel.requestWakeupWhenRoom() {
            var descriptor = pollfd(fd: channel.wakeupDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, -1)
            channel.drainWakeups()
            if channel.isTerminated { return }
        }
    }
}
