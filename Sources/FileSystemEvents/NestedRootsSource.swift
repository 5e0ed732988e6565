import FileSystemEventsApps
import FileSystemEventsCore
import SystemPackage

/// A source whose roots nest (`filewatch watch /srv /srv/www`, or a root named twice): one
/// watch of the outermost roots, seen through one subscription of all the roots.
///
/// Watched as independent roots, every directory below the inner root would be watched twice
/// and every change there reported twice, once per root, and a consumer replaying the events
/// would apply the same creation twice. A ``FileSystemWatcher`` of the outer roots watches
/// each directory once, and its subscription reports each change once, with `ready` and
/// `rootRemoved` for every root the caller named.
struct NestedRootsSource: FileSystemEventSource {
    let options: WatchOptions
    let backendName: String
    let capabilities: FileSystemEventSourceCapabilities
    private let watcher: FileSystemWatcher

    private init(
        options: WatchOptions, outermost: [FilePath], backendName: String, capabilities: FileSystemEventSourceCapabilities,
        base: @escaping @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource
    ) {
        self.options = options
        self.backendName = backendName
        self.capabilities = capabilities
        var shared = options
        shared.roots = outermost
        // Each root's filter is relative to that root, so the subscription applies it; the
        // watch itself must see everything any root sees.
        shared.filter = .everything
        shared.latency = .zero
        self.watcher = FileSystemWatcher(options: shared, makeSource: base)
    }

    func updates() -> FileSystemEventStream {
        watcher.source(for: options).updates()
    }

    func updates(deliveringTo handler: @escaping FileSystemEventHandler) -> FileSystemEventStream {
        watcher.source(for: options).updates(deliveringTo: handler)
    }

    /// `base`, except that roots that nest are watched once, through a shared watch.
    static func sharingNestedRoots(
        backendName: String,
        capabilities: FileSystemEventSourceCapabilities?,
        base: @escaping @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource
    ) -> @Sendable (WatchOptions) throws(FileSystemEventsError) -> any FileSystemEventSource {
        { options throws(FileSystemEventsError) in
            guard let outermost = outermost(of: options) else { return try base(options) }
            // A registered backend that did not declare what it can do is asked by a source
            // of its own; nothing runs until `updates()`.
            let described: FileSystemEventSourceCapabilities
            if let capabilities {
                described = capabilities
            } else {
                described = try base(options.replacingRoots(with: outermost)).capabilities
            }
            return NestedRootsSource(options: options, outermost: outermost, backendName: backendName,
                                     capabilities: described, base: base)
        }
    }

    /// The roots no other root contains, when some root lies inside another (or is named
    /// twice); `nil` when none does, or when nesting cannot be shared safely.
    ///
    /// Shared only where the nesting is real: a recursive watch, and inner roots at canonical
    /// paths, so that each is the very item the outer watch reaches by name (a path through a
    /// symlink is not: the outer watch does not follow it). An outer root may be reached
    /// through a symlink (`watch A A/sub L` with `L -> A/sub`): the shared watch watches it as
    /// a root of its own, as a source of its own would. A root may be a directory or a file
    /// (`watch A A/f`, `watch A A/sub B/f`): the subscription watches a file by name, as a
    /// source of its own does. Anything else is watched root by root.
    static func outermost(of options: WatchOptions) -> [FilePath]? {
        guard options.isRecursive, options.roots.count > 1 else { return nil }
        // Absolute first: `cd /srv; filewatch watch . www` nests as `/srv /srv/www` does.
        let roots = options.roots.map { WatchOptions.absolute($0).lexicallyNormalized() }
        var outer: [FilePath] = []
        var nests = false
        for (index, root) in roots.enumerated() {
            let container = roots.indices.contains { other in
                other != index && (roots[other] == root ? other < index : root.starts(with: roots[other]))
            }
            if container { nests = true } else { outer.append(root) }
        }
        guard nests else { return nil }
        for root in roots {
            let bytes = root.bytes
            guard case .success(let status) = Syscalls.status(atPath: bytes, followSymlinks: true),
                  status.itemType == .directory || status.itemType == .file,
                  outer.contains(root) || Syscalls.realPath(bytes) == bytes
            else { return nil }
        }
        return outer
    }
}

extension WatchOptions {
    fileprivate func replacingRoots(with roots: [FilePath]) -> WatchOptions {
        var options = self
        options.roots = roots
        return options
    }
}
