package import SystemPackage

/// Joins a root's bytes and a root-relative path without going through `String`, so names
/// that are not valid UTF-8 survive intact.
package struct PathBuilder: Sendable {
    package let root: FilePath
    private let rootBytes: [UInt8]

    package init(root: FilePath) {
        self.root = root
        self.rootBytes = root.bytes
    }

    /// The absolute path of a root-relative path (`/`-separated bytes, empty for the root).
    package func path(_ relative: [UInt8]) -> FilePath {
        if relative.isEmpty { return root }
        return FilePath(nulTerminated: joined(relative, terminator: 0))
    }

    /// The same path as ``path(_:)``, as bytes, for system calls that take them.
    package func bytes(_ relative: [UInt8]) -> [UInt8] {
        joined(relative, terminator: nil)
    }

    /// The root-relative bytes of `path`, or `nil` if it is not below the root.
    package func relative(_ path: FilePath) -> [UInt8]? {
        let full = path.bytes
        if full == rootBytes { return [] }
        var prefix = rootBytes
        if prefix.last != UInt8(ascii: "/") { prefix.append(UInt8(ascii: "/")) }
        guard full.count > prefix.count, full[..<prefix.count].elementsEqual(prefix) else { return nil }
        return Array(full[prefix.count...])
    }

    /// One allocation per path: event paths are built on the hot path.
    private func joined(_ relative: [UInt8], terminator: UInt8?) -> [UInt8] {
        var bytes = rootBytes
        bytes.reserveCapacity(rootBytes.count + relative.count + 2)
        if !relative.isEmpty {
            if bytes.last != UInt8(ascii: "/") { bytes.append(UInt8(ascii: "/")) }
            bytes += relative
        }
        if let terminator { bytes.append(terminator) }
        return bytes
    }
}

extension FilePath {
    /// A path from its bytes, exactly as the kernel sees them (no terminating NUL).
    package init(bytes: [UInt8]) {
        self.init(nulTerminated: bytes + [0])
    }

    /// A path from bytes that end in their NUL terminator.
    init(nulTerminated bytes: [UInt8]) {
        self = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { FilePath(platformString: $0.baseAddress!) }
        }
    }

    /// The path's bytes, exactly as the kernel sees them (no terminating NUL).
    package var bytes: [UInt8] {
        withPlatformString { pointer in
            var bytes: [UInt8] = []
            var cursor = pointer
            while cursor.pointee != 0 {
                bytes.append(UInt8(bitPattern: cursor.pointee))
                cursor += 1
            }
            return bytes
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether this path (names joined by `/`) lies below `ancestor`: see
    /// ``Swift/ArraySlice/isBelow(_:)``.
    package func isBelow(_ ancestor: [UInt8]) -> Bool { self[...].isBelow(ancestor[...]) }

    /// Whether this path is `ancestor` or lies below it.
    package func isWithin(_ ancestor: [UInt8]) -> Bool { self[...].isWithin(ancestor[...]) }

    /// `self + "/" + name`, the way relative paths grow during a walk.
    @inline(__always)
    package func appendingComponent(_ name: [UInt8]) -> [UInt8] {
        if isEmpty { return name }
        var path = self
        path.reserveCapacity(count + 1 + name.count)
        path.append(UInt8(ascii: "/"))
        path.append(contentsOf: name)
        return path
    }
}

extension ArraySlice where Element == UInt8 {
    /// Whether this path (names joined by `/`) lies below `ancestor`: `ancestor`, a `/`, then
    /// more. A byte prefix is not enough: `a-`, `a.` and `a0` start with `a` and sort between
    /// `a` and `a/x`, and lie beside it. Every path but the empty one lies below the empty one
    /// (the root of a relative path).
    package func isBelow(_ ancestor: ArraySlice<UInt8>) -> Bool {
        guard !ancestor.isEmpty else { return !isEmpty }
        guard count > ancestor.count, self[startIndex + ancestor.count] == UInt8(ascii: "/") else { return false }
        return self[startIndex..<startIndex + ancestor.count].elementsEqual(ancestor)
    }

    /// Whether this path is `ancestor` or lies below it.
    package func isWithin(_ ancestor: ArraySlice<UInt8>) -> Bool {
        count == ancestor.count ? elementsEqual(ancestor) : isBelow(ancestor)
    }
}
