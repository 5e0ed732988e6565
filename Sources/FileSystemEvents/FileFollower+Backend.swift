public import FileSystemEventsApps
import FileSystemEventsCore
public import SystemPackage

extension FileFollower {
    /// A follower whose directory is watched by a built-in backend, chosen by name (`auto`
    /// picks inotify on local Linux file systems and polling elsewhere).
    public init(path: FilePath, options: Options = Options(), backend: FileSystemEventBackend) {
        self.init(path: path, options: options) { watchOptions throws(FileSystemEventsError) in
            try backend.makeSource(options: watchOptions)
        }
    }

    /// A follower watched as `configuration` says (its backend, poll interval, buffer limit
    /// and logger). The follower decides what is watched: the path's directory, not recursively.
    public init(path: FilePath, options: Options = Options(), configuration: WatchConfiguration) {
        // The follower's own options watch the path's directory, not recursively, not
        // following symlinks.
        self.init(path: path, options: options) { watchOptions throws(FileSystemEventsError) in
            try configuration.makeSource(watching: watchOptions)
        }
    }
}
