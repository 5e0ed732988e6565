import FileSystemEvents
import Foundation

/// Trees to benchmark on.
///
/// Layout: directories of ten (empty) files each, nested ten to a parent, so "N entries" means
/// a realistic mix (about 9% directories), and the large tree of the issue (10,000 directories
/// with 10 files each) is `directories(10_000, filesEach: 10)`.
///
/// Every benchmark runs in a process of its own, so the trees live at a fixed place
/// (`$TMPDIR/filewatch-benchmark-trees`, or `FILEWATCH_BENCHMARK_TREES`) and are made once: a
/// tree is complete when its `.complete` marker exists. Nothing measured changes them.
enum BenchmarkTree {
    static let base: URL = {
        let configured = ProcessInfo.processInfo.environment["FILEWATCH_BENCHMARK_TREES"]
        let url = configured.map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("filewatch-benchmark-trees")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Whether the 1,000,000-entry trees are measured (about 4 minutes more; the tree takes
    /// about a million inodes). `FILEWATCH_BENCHMARK_SKIP_LARGE=1` leaves them out.
    static var includesMillion: Bool {
        ProcessInfo.processInfo.environment["FILEWATCH_BENCHMARK_SKIP_LARGE"] == nil
    }

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
        var next = 0
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        while made < directories, next < queue.count {
            let parent = queue[next]
            next += 1
            for index in 0..<10 where made < directories {
                let directory = parent.appendingPathComponent("d\(index)")
                mkdir(directory.path, 0o755)
                for file in 0..<filesEach {
                    touch(FilePath(directory.appendingPathComponent("f\(file).txt").path))
                }
                queue.append(directory)
                made += 1
            }
        }
        touch(FilePath(marker.path))
        return FilePath(root.path)
    }

    /// An empty scratch directory for live changes, private to this process.
    static func scratch(_ name: String) -> FilePath {
        fresh(base.appendingPathComponent("scratch-\(getpid())-\(name)"))
    }

    /// An empty scratch directory on tmpfs (`/dev/shm`) where there is one, for bursts whose
    /// cost should be the watcher's, not the disk file system's.
    static func memoryScratch(_ name: String) -> FilePath {
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        let isTmpfs = mounts.split(separator: "\n").contains { $0.hasPrefix("tmpfs /dev/shm tmpfs ") }
        guard isTmpfs else { return scratch(name) }
        return fresh(URL(fileURLWithPath: "/dev/shm/filewatch-benchmark-\(getpid())-\(name)"))
    }

    /// Removes a scratch directory once its benchmark is done.
    static func remove(_ path: FilePath) {
        try? FileManager.default.removeItem(atPath: path.string)
    }

    private static func fresh(_ url: URL) -> FilePath {
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
