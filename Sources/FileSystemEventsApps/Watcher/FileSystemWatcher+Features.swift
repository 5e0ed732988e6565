import FileSystemEventsCore
public import SystemPackage

// The app features on a shared watch: a process that lists a folder, follows a log in it and
// waits for uploads below it holds one source for the tree (one inotify instance, one watch
// per directory, one crawl), not one per feature. Each is a subscription of `watcher`, whose
// roots must contain what it watches.

extension DirectoryListing {
    /// A listing of `directory` (inside `watcher`'s roots) on `watcher`'s watch.
    public init(directory: FilePath, options: Options = Options(), watcher: FileSystemWatcher) {
        self.init(directory: directory, options: options) { watchOptions in watcher.source(for: watchOptions) }
    }
}

extension FileFollower {
    /// A follower of `path` on `watcher`'s watch; the file's directory must lie inside
    /// `watcher`'s roots (the follower watches the directory, to see the file replaced).
    public init(path: FilePath, options: Options = Options(), watcher: FileSystemWatcher) {
        self.init(path: path, options: options) { watchOptions in watcher.source(for: watchOptions) }
    }
}

extension SettledFiles {
    /// The files below `subtrees` (the watcher's roots when empty) as they finish being
    /// written, on `watcher`'s watch, whose options must set a quiet period
    /// (``WatchOptions/settleQuietPeriod``).
    public init(watching subtrees: [FilePath] = [], watcher: FileSystemWatcher) {
        var options = watcher.options
        if !subtrees.isEmpty { options.roots = subtrees.map(WatchOptions.absolute) }
        options.capturesInitialState = false
        self.init(source: watcher.source(for: options))
    }
}
