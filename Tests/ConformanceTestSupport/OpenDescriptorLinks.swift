#if os(Linux)
import Glibc

/// The process's open descriptors and what each refers to (the targets of the
/// `/proc/self/fd` links: a path, `pipe:[…]`, `anon_inode:inotify`), sorted by number as
/// text. For tests that check what a watch left open: counting every descriptor also counts
/// the runtime's own, and other tests' watches closing on their own threads.
///
/// The names are read first and the listing closed before the links are read, so the
/// listing's own descriptor is not among them (its link is gone by then).
public func openDescriptorLinks() -> [(number: String, target: String)] {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if Int(name) != nil { names.append(name) }
    }
    closedir(directory)
    var buffer = [CChar](repeating: 0, count: 4096)
    return names.sorted().compactMap { name in
        let length = readlink("/proc/self/fd/" + name, &buffer, buffer.count)
        guard length > 0 else { return nil }
        return (name, String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
#endif

/// Each open descriptor as "number→target" (``openDescriptorLinks()``), for a test that checks
/// what a source left open: the set after it, less the set before it, is what it leaked,
/// whatever other tests' sources closed on their own threads meanwhile. Empty where there is
/// no `/proc/self/fd`.
public func openDescriptorDescriptions() -> Set<String> {
    #if os(Linux)
    Set(openDescriptorLinks().map { "\($0.number)→\($0.target)" })
    #else
    []
    #endif
}
