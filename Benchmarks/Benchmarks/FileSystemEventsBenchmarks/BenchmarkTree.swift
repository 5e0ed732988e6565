import FileSystemEvents
import Foundation

/// Trees to benchmark on, made once per size under a private temporary directory.
///
/// Layout: directories of ten files each, nested ten to a parent, so "N entries" means a
/// realistic mix (about 9% directories), and the large tree of the issue (10,000 directories
/// with 10 files each) is `directories(10_000, filesEach: 10)`.
enum BenchmarkTree {
    static let base: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("filewatch-benchmarks-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// A tree with about `entries` entries (10 files per directory).
    static func entries(_ entries: Int) -> FilePath {
        directories(max(1, entries / 11), filesEach: 10)
    }

    static func directories(_ directories: Int, filesEach: Int) -> FilePath {
        let root = base.appendingPathComponent("tree-\(directories)x\(filesEach)")
        let marker = root.appendingPathComponent(".complete")
        if FileManager.default.fileExists(atPath: marker.path) { return FilePath(root.path) }
        try? FileManager.default.removeItem(at: root)
        var made = 0
        var queue: [URL] = [root]
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        while made < directories, !queue.isEmpty {
            let parent = queue.removeFirst()
            for index in 0..<10 where made < directories {
                let directory = parent.appendingPathComponent("d\(index)")
                try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                for file in 0..<filesEach {
                    _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("f\(file).txt").path, contents: Data("x".utf8))
                }
                queue.append(directory)
                made += 1
            }
        }
        _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
        return FilePath(root.path)
    }

    /// An empty scratch directory for live changes.
    static func scratch(_ name: String) -> FilePath {
        let url = base.appendingPathComponent("scratch-\(name)")
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return FilePath(url.path)
    }
}

/// The backends measured side by side.
enum BenchmarkBackends {
    static var all: [FileSystemEventBackend] {
        [.inotify, .inotifytools, .polling].filter { $0.availability.isAvailable }
    }

    static func options(_ root: FilePath) -> WatchOptions {
        var options = WatchOptions(roots: [root])
        // Polling at 10 ms: its latency is about half the interval, plus the scan.
        options.pollInterval = .milliseconds(10)
        return options
    }
}
