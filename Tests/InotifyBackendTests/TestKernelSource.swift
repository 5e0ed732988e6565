#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify

/// The inotify backend over one of this suite's test kernels, as a source the conformance
/// scenarios run against. Each test kernel changes one thing about the real one; this is all
/// it takes to run a scenario on it.
struct TestKernelSource<Kernel: InotifyKernel>: ProducerThreadEventSource {
    let options: WatchOptions
    let backendName: String
    let makeKernel: @Sendable () throws(FileSystemEventsError) -> Kernel
    var capabilities: FileSystemEventSourceCapabilities { InotifyEventSource.capabilities }

    func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        InotifyEventSource.updates(options: options, handler: handler, kernel: makeKernel)
    }
}
#endif
