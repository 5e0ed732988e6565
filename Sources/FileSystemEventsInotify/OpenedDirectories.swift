#if os(Linux)
import FileSystemEventsCore

extension InotifyWatch {
    /// The directories opened (and checked by identity) while one batch of creations is
    /// examined, so that a burst of creations in one directory costs one `open` and one
    /// `fstat`, not one per name.
    ///
    /// Only valid while no event is applied: nothing moves the model between the creations of
    /// a batch. Entries keep their node alive, so a node is never mistaken for another.
    ///
    /// A short array searched by identity, not a dictionary: it holds at most ``capacity``
    /// entries, and a dictionary's storage type is made by the Swift runtime the first time
    /// one is created, which checks its key's `Hashable` conformance by searching every
    /// conformance record of the binary. In the static CLI that search was most of the
    /// 200 µs by which the first event after `ready` came later than the next ones (`perf
    /// record` of the first event, 2026-12-03).
    struct OpenedDirectories {
        private var entries: [(node: WatchedDirectory, opening: Opening)] = []

        /// At most this many are kept open: a batch spread over thousands of directories
        /// (`touch */new`) must not need a descriptor for each at once, which under the usual
        /// `ulimit -n` of 1024 would stop the watch. A batch comes in event order, so the
        /// names of one directory mostly come together and still share one `open`.
        static var capacity: Int { 32 }

        /// The cached opening of `directory`, or `open`'s answer, remembered. A descriptor it
        /// returns is valid until the next call.
        mutating func opening(of directory: WatchedDirectory, opening open: (WatchedDirectory) -> Opening) -> Opening {
            if let entry = entries.first(where: { $0.node === directory }) { return entry.opening }
            if entries.count >= Self.capacity { closeAll() }
            var opening = open(directory)
            // Out of descriptors while holding some: those are handed back and the open tried
            // again. Under a low `ulimit -n` (16 to 32, which the CLI accepts), the 32 this may
            // hold ran the process out during a burst of `mkdir -p` chains, and the watch
            // ended with the open file limit named (inotify 7 runs of 9), where a start-up
            // crawl of a 500-level tree gets by on 16.
            if case .inaccessible(let errno) = opening, FileSystemEventsError.isDescriptorShortage(errno), !entries.isEmpty {
                closeAll()
                opening = open(directory)
            }
            entries.append((directory, opening))
            return opening
        }

        /// An empty set whose storage is allocated (see
        /// ``InotifyWatch/prepareEventPathTypes()``).
        static func withStorage() -> OpenedDirectories {
            var directories = OpenedDirectories()
            directories.entries.reserveCapacity(1)
            return directories
        }

        /// Closes every descriptor and forgets them.
        mutating func closeAll() {
            for entry in entries {
                if case .opened(let descriptor, _) = entry.opening { Syscalls.close(descriptor) }
            }
            entries.removeAll()
        }
    }
}
#endif
