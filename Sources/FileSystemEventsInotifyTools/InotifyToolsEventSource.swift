#if os(Linux)
public import FileSystemEventsCore
import FileSystemEventsInotify

/// Watches through Debian's libinotifytools (GPL-2; built only with the `InotifyTools` trait).
///
/// The library provides the inotify instance, its recursive crawl
/// (`inotifytools_watch_recursively`), watch bookkeeping and event reading. Everything that
/// makes a watch lose nothing is added on top, shared with the raw backend: one owner thread
/// for the library, prompt stops, new directories listed after the library's crawl and their
/// contents synthesised, renames paired by cookie with renamed directories re-linked, overflow
/// rescans, and the same typed errors when the library's crawl stops at `ENOSPC`.
public struct InotifyToolsEventSource: ProducerThreadEventSource {
    /// The options every watch of this source uses.
    public let options: WatchOptions

    /// Checks nothing yet: each watch validates the options and connects to the library when it
    /// starts, and fails through its stream.
    public init(options: WatchOptions) {
        self.options = options
    }

    /// The name configuration uses for this backend.
    public static let name = "inotifytools"

    /// Always ``name``.
    public var backendName: String { Self.name }

    /// The same kernel watches, and the same guarantees, as the raw backend.
    public static let capabilities = InotifyEventSource.capabilities

    /// The static `capabilities`: they do not depend on the options.
    public var capabilities: FileSystemEventSourceCapabilities { Self.capabilities }


    /// Starts one watch on a producer thread of its own. The library itself is driven from one
    /// owner thread that every watch of this backend in the process shares (it is not thread-safe).
    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        // The shared watch is compiled in its own module for a wrapped kernel: instantiated
        // here, generic over this module's kernel, it would run unspecialized.
        InotifyEventSource.updatesOverForeignKernel(options: options, handler: handler) { () throws(FileSystemEventsError) -> any InotifyKernel in
            try InotifyToolsKernel()
        }
    }
}
#endif
