import PlatformLibc
package import FileSystemEventsCore
package import SystemPackage

/// Reads a listed directory: the whole listing at the start, a subtree that was renamed into
/// place, and one entry per changed name.
///
/// Each read opens the directory once and works relative to that descriptor (`openat`, `statx`
/// with a relative name) and on bytes, so an entry costs one system call and no path string,
/// and a name that is not valid UTF-8 is read like any other. The descriptor is closed after
/// each batch rather than held for the listing's lifetime: an open descriptor would keep the
/// kernel from reporting the directory's deletion (inotify sends `IN_DELETE_SELF` only once
/// the last reference to a removed directory is gone), and the listing must end then.
package struct DirectoryReader: Sendable {
    package let directory: FilePath
    package let isRecursive: Bool
    package let includesHidden: Bool

    /// Checks `directory`, failing with the error a user can act on: it does not exist, is not
    /// a directory, or may not be read.
    package init(_ directory: FilePath, isRecursive: Bool, includesHidden: Bool) throws(FileSystemEventsError) {
        switch Syscalls.status(directory, followSymlinks: true) {
        case .success(let status):
            guard status.itemType == .directory else { throw .notADirectory(directory) }
        case .failure(let errno):
            throw .forRoot(directory, call: "statx", errno: errno)
        }
        self.directory = directory
        self.isRecursive = isRecursive
        self.includesHidden = includesHidden
        let descriptor = try open()
        Syscalls.close(descriptor)
    }

    /// Opens the directory for one batch of reads; the caller closes it.
    package func open() throws(FileSystemEventsError) -> CInt {
        switch Syscalls.open(directory, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
        case .success(let descriptor):
            return descriptor
        case .failure(let errno):
            if errno == .notDirectory { throw .notADirectory(directory) }
            throw .forRoot(directory, call: "open", errno: errno)
        }
    }

    /// What the listing's source must leave out: hidden entries (and, recursively, everything
    /// below a hidden directory) unless they are wanted.
    package static func filter(includesHidden: Bool) -> PathFilter {
        includesHidden ? .everything : PathFilter(exclude: [PathGlob(".*")])
    }

    private var scanner: SnapshotScanner {
        SnapshotScanner(isRecursive: isRecursive, followsSymlinks: false, filter: Self.filter(includesHidden: includesHidden))
    }

    /// Every entry of the directory, unsorted.
    package func listAll() throws(FileSystemEventsError) -> [DirectoryEntry] {
        try listAllNamingUnreadable().entries
    }

    /// Every entry of the directory, unsorted, and the subdirectories that could not be listed
    /// (their entries are missing), relative to the directory, for a caller that says so.
    package func listAllNamingUnreadable() throws(FileSystemEventsError) -> (entries: [DirectoryEntry], unreadable: [(relativePath: [UInt8], errno: Errno)]) {
        let descriptor = try open()
        // The scan, the flattening and the release of the scanned tree each descend one call
        // per level of the directory, which can be nested to any depth: on a task's stack, a
        // listing of a chain 3,000 directories deep crashed (`filewatch list --recursive`,
        // debug build). So here, in listSubtree and in entries(of:).
        let (entries, unreadable) = ProducerThread.withLargeStack { [self] in
            let (tree, unreadable) = scanner.scanDirectory(descriptor, relativePath: [])
            var entries: [DirectoryEntry] = []
            entries.reserveCapacity(tree.entries.count)
            flatten(tree, prefix: [], into: &entries)
            return (entries, unreadable)
        }
        if let failure = unreadable.first(where: { $0.relativePath.isEmpty }) {
            throw .forRoot(directory, call: DirectoryEntryReader.callName, errno: failure.errno)
        }
        return (entries, unreadable)
    }


    /// The entries below `relativePath` (a directory renamed into the tree), and the entry of
    /// the directory they were read from, taken from the same descriptor: none if it is not a
    /// directory any more or cannot be read, `nil` if nothing is there (renamed on, or
    /// removed), for the caller to look for it where the next events put it.
    package func listSubtree(_ relativePath: [UInt8], in descriptor: CInt) -> (directory: DirectoryEntry?, entries: [DirectoryEntry])? {
        let opened = withCString(relativePath) { Syscalls.openDirectory($0, relativeTo: descriptor) }
        let fd: CInt
        switch opened {
        case .success(let opened): fd = opened
        case .failure(let errno): return errno == .noSuchFileOrDirectory ? nil : (nil, [])
        }
        let directory = try? Syscalls.status(ofDescriptor: fd).get()
        return ProducerThread.withLargeStack { [self] in
            let (tree, _) = scanner.scanDirectory(fd, relativePath: relativePath)
            var entries: [DirectoryEntry] = []
            flatten(tree, prefix: relativePath, into: &entries)
            return (directory.map { DirectoryEntry(nameBytes: relativePath, status: $0) }, entries)
        }
    }

    /// What a look at one path of the listing found.
    package enum Lookup {
        case found(DirectoryEntry)
        /// Nothing is there (or it is hidden and hidden entries are not listed).
        case absent
        /// Something may be there but cannot be examined now (``ListedNameFailure``: `EIO`,
        /// `ENOMEM`, or a directory on the way that may be read but not searched): the listing
        /// keeps what it had at the path, as a scan does, rather than drop a name that is there.
        case unexaminable
    }

    /// What is now at `relativePath` (of any length: a deep recursive listing's paths pass
    /// PATH_MAX, and are then looked at in steps).
    package func entry(at relativePath: [UInt8], in descriptor: CInt) -> Lookup {
        if !includesHidden && DirectoryEntry.isHidden(relativePath) { return .absent }
        let found = Syscalls.withParent(of: relativePath, relativeTo: descriptor) { directory, name in
            Syscalls.status(name, relativeTo: directory)
        }
        switch found {
        case .success(let status): return .found(DirectoryEntry(nameBytes: relativePath, status: status))
        case .failure(let errno):
            if case .gone = ListedNameFailure(errno) { return .absent }
            return .unexaminable
        }
    }

    /// The entries of a tree a scan already made (a polling source's model at `ready`), as
    /// ``listAll()`` would give them. The source of a listing that is not recursive watches a
    /// level deeper (a change inside a subdirectory changes its time and size), which is left
    /// out here.
    package func entries(of tree: SnapshotDirectory) -> [DirectoryEntry] {
        ProducerThread.withLargeStack { [self] in
            var entries: [DirectoryEntry] = []
            flatten(tree, prefix: [], into: &entries, descends: isRecursive)
            return entries
        }
    }

    private func flatten(_ directory: SnapshotDirectory, prefix: [UInt8], into entries: inout [DirectoryEntry], descends: Bool = true) {
        for entry in directory.entries where !entry.isVacant {
            let name = prefix.appendingComponent(entry.name)
            if !includesHidden && entry.name.withBytes({ $0.first }) == UInt8(ascii: ".") { continue }
            entries.append(DirectoryEntry(nameBytes: name, status: entry.status))
            if descends, let child = entry.directory { flatten(child, prefix: name, into: &entries) }
        }
    }
}
