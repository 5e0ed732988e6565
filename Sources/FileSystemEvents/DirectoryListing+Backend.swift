public import FileSystemEventsApps
import FileSystemEventsCore
public import SystemPackage

extension DirectoryListing {
    /// A listing watched by a built-in backend, chosen by name (`auto` picks inotify on local
    /// Linux file systems and polling elsewhere).
    public init(directory: FilePath, options: Options = Options(), backend: FileSystemEventBackend) {
        self.init(directory: directory, options: options) { watchOptions throws(FileSystemEventsError) in
            try backend.makeSource(options: watchOptions)
        }
    }

    /// A listing watched as `configuration` says (its backend, poll interval, buffer limit and
    /// logger; environment and file included when it was loaded with
    /// ``WatchConfiguration/load(roots:overrides:configFile:environment:)``). The listing's own
    /// options decide the directory, recursion, hidden entries and latency.
    public init(directory: FilePath, options: Options = Options(), configuration: WatchConfiguration) {
        self.init(directory: directory, options: options) { watchOptions throws(FileSystemEventsError) in
            try configuration.makeSource(watching: watchOptions)
        }
    }
}
