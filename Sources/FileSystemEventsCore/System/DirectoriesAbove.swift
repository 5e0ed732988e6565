import PlatformLibc

extension Syscalls {
    /// The identities of the directories above the directory at `path`, up to `/`, found by
    /// opening `..` step by step from it (so after symlinks on the way are resolved, as the
    /// kernel resolves them).
    ///
    /// A watch that follows symlinks must not enter a link to one of these: it leads back to
    /// a directory on the root's own path, so entering it walks the root's parent (and, for a
    /// link to `/`, every file system) and meets the root again inside it. A walk's check for
    /// loops sees only the directories it went through; these are the ones above where it
    /// started. Empty where `path` cannot be opened, and as far as it got where a `..` cannot.
    package static func identitiesAbove(directoryAt path: [UInt8]) -> [FileIdentity] {
        guard case .success(var descriptor) = openDirectory(atPath: path, followSymlinks: true, forLookupOnly: true) else {
            return []
        }
        defer { close(descriptor) }
        guard case .success(var current) = status(ofDescriptor: descriptor) else { return [] }
        var above: [FileIdentity] = []
        // Bounded, as any walk up a file system others may change while it is walked.
        for _ in 0..<4096 {
            guard case .success(let parent) = openDirectory("..", relativeTo: descriptor, followSymlinks: false, forLookupOnly: true)
            else { break }
            close(descriptor)
            descriptor = parent
            guard case .success(let found) = status(ofDescriptor: parent), found.identity != current.identity else { break }
            above.append(found.identity)
            current = found
        }
        return above
    }
}
