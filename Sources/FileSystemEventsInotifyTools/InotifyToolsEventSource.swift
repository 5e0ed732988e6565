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
    public let options: WatchOptions

    public init(options: WatchOptions) {
        self.options = options
    }

    public static let name = "inotifytools"

    public var backendName: String { Self.name }

    /// The same kernel watches, and the same guarantees, as the raw backend.
    public static let capabilities = InotifyEventSource.capabilities

    public var capabilities: FileSystemEventSourceCapabilities { Self.capabilities }


    public func makeStream(handler: FileSystemEventHandler?) -> FileSystemEventStream {
        let options = self.options
        return FileSystemEventStream(options: options, handler: handler) { channel in
            var watch = InotifyWatch<InotifyToolsKernel>(options: options, channel: channel)
            watch.run { () throws(FileSystemEventsError) in try InotifyToolsKernel() }
        }
    }
}
#endif
