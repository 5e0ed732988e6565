package import SystemPackage

/// Joins a root's bytes and a root-relative path without going through `String`, so names
/// that are not valid UTF-8 survive intact.
package struct PathBuilder: Sendable {
    package let root: FilePath
    private let rootBytes: [CChar]

    package init(root: FilePath) {
        self.root = root
        self.rootBytes = root.bytes.map { CChar(bitPattern: $0) }
    }

    /// The absolute path of a root-relative path (`/`-separated bytes, empty for the root).
    package func path(_ relative: [UInt8]) -> FilePath {
        if relative.isEmpty { return root }
        var bytes = rootBytes
        if bytes.last != CChar(bitPattern: UInt8(ascii: "/")) { bytes.append(CChar(bitPattern: UInt8(ascii: "/"))) }
        bytes.reserveCapacity(bytes.count + relative.count + 1)
        for byte in relative { bytes.append(CChar(bitPattern: byte)) }
        bytes.append(0)
        return bytes.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
    }

    /// The root-relative bytes of `path`, or `nil` if it is not below the root.
    package func relative(_ path: FilePath) -> [UInt8]? {
        let full = path.bytes.map { CChar(bitPattern: $0) }
        if full == rootBytes { return [] }
        var prefix = rootBytes
        if prefix.last != CChar(bitPattern: UInt8(ascii: "/")) { prefix.append(CChar(bitPattern: UInt8(ascii: "/"))) }
        guard full.count > prefix.count, Array(full[..<prefix.count]) == prefix else { return nil }
        return full[prefix.count...].map { UInt8(bitPattern: $0) }
    }
}

extension FilePath {
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

extension Array where Element == [UInt8] {
    /// Components joined with `/`: how a tree node's relative path is spelled.
    package func joinedAsPath() -> [UInt8] {
        var path: [UInt8] = []
        for component in self {
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            path.append(contentsOf: component)
        }
        return path
    }
}

extension Array where Element == UInt8 {
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
