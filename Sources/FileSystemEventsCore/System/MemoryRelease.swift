import CFileSystemEventsShims
import PlatformLibc
import SystemPackage

/// Hands memory the process has freed back to the kernel.
package enum MemoryRelease {
    /// glibc keeps freed memory in its arenas for reuse; `malloc_trim(0)` releases what it can
    /// (whole free pages, anywhere in the heap). Elsewhere this does nothing.
    package static func returnFreedPages() {
        _ = cfse_release_free_memory()
    }

    /// Unmaps the pages of the process's read-only file mappings (its own code and
    /// metadata, and its libraries') that start-up mapped, so that what stays resident is
    /// what the process goes on to use. Returns the bytes of the mappings it released.
    ///
    /// Why: a process's resident memory counts every page mapped into it, and on a read fault
    /// of a file mapping the kernel maps the 64 KiB around the page too (fault-around), used
    /// or not. A start-up runs argument parsing, configuration, the first crawl and their
    /// error paths once, and touches pages all over a static binary's code: a watch of an empty
    /// directory had 4.3 MiB of its code resident, most of it never run again. The pages stay
    /// in the page cache, so nothing is read from disk again, and the kernel maps back, the
    /// same way, whatever runs later: what is left is the working set of a running watch.
    ///
    /// Only private mappings that are not writable and hold no page of the process's own
    /// (`Anonymous: 0 kB` in `/proc/self/smaps`) are released, so that nothing but a copy of
    /// the file is dropped: a mapping where relocations, or a debugger's breakpoints, wrote
    /// is left as it is. Linux only; elsewhere (or where `/proc` cannot be read) it does nothing.
    @discardableResult
    package static func unmapStartUpFilePages() -> Int {
        #if os(Linux)
        guard case .bytes(let smaps)? = try? WholeFile.read(FilePath("/proc/self/smaps")) else { return 0 }
        var released = 0
        for mapping in ReadOnlyFileMapping.all(inSmaps: smaps) where mapping.anonymousKiB == 0 {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.end > mapping.start else { continue }
            if case .success = Syscalls.adviseDontNeed(start, length: mapping.end - mapping.start) {
                released += Int(mapping.end - mapping.start)
            }
        }
        return released
        #else
        return 0
        #endif
    }
}

/// A private, not writable, file-backed mapping listed in `/proc/self/smaps`, with how much
/// of it is the process's own (copied on write).
package struct ReadOnlyFileMapping: Equatable, Sendable {
    package var start: UInt
    package var end: UInt
    package var anonymousKiB: Int

    package init(start: UInt, end: UInt, anonymousKiB: Int) {
        self.start = start
        self.end = end
        self.anonymousKiB = anonymousKiB
    }

    /// The read-only private file mappings of an `smaps` listing, in its order. A mapping
    /// whose `Anonymous:` line is missing is taken to hold pages of its own.
    package static func all(inSmaps text: [UInt8]) -> [ReadOnlyFileMapping] {
        var found: [ReadOnlyFileMapping] = []
        var current: ReadOnlyFileMapping?
        for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            if let range = fields.first, let dash = range.firstIndex(of: UInt8(ascii: "-")),
               let start = hexadecimal(range[..<dash]), let end = hexadecimal(range[(dash + 1)...]) {
                // A mapping's header: range, permissions, offset, device, inode, path.
                if let mapping = current { found.append(mapping) }
                current = nil
                guard fields.count >= 6, fields[1].elementsEqual("r--p".utf8) || fields[1].elementsEqual("r-xp".utf8),
                      !fields[4].elementsEqual("0".utf8), fields[5].first == UInt8(ascii: "/")
                else { continue }
                current = ReadOnlyFileMapping(start: start, end: end, anonymousKiB: Int.max)
            } else if current != nil, fields.count >= 2, fields[0].elementsEqual("Anonymous:".utf8),
                      let kib = Int(String(decoding: fields[1], as: UTF8.self)) {
                current?.anonymousKiB = kib
            }
        }
        if let mapping = current { found.append(mapping) }
        return found
    }

    private static func hexadecimal(_ digits: ArraySlice<UInt8>) -> UInt? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        return UInt(String(decoding: digits, as: UTF8.self), radix: 16)
    }
}
