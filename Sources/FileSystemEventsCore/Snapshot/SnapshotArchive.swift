package import SystemPackage

/// The on-disk form of a ``FileTreeSnapshot``, version 1 (specified in docs/snapshot-format.md).
///
/// A fixed 40-byte header (magic, version, flags, total length, entry count, checksum), then
/// the root, the scan options, the root's status and the tree in pre-order. Each entry stores
/// its name once (sharing a prefix with the sibling before it) and its status as deltas from
/// the entry before it in the file, so a typical entry takes about 20 bytes.
///
/// Decoding refuses anything that is not exactly what was encoded: the checksum catches
/// accidents, and every structural rule the diff depends on (names sorted, unique, free of
/// `/` and NUL; listings only under directories; counts that add up) is checked again, so
/// even a deliberately crafted file cannot hand the diff a tree it would misread.
package enum SnapshotArchive {
    package static let magic: [UInt8] = [0x89, 0x46, 0x57, 0x53, 0x4E, 0x41, 0x50, 0x0A]  // "\x89FWSNAP\n"
    package static let version: UInt32 = 1
    package static let headerSize = 40

    private static let versionOffset = 8
    private static let flagsOffset = 12
    private static let lengthOffset = 16
    private static let entryCountOffset = 24
    private static let checksumOffset = 32

    private struct HeaderFlags: OptionSet {
        let rawValue: UInt32
        static let recursive = HeaderFlags(rawValue: 1 << 0)
        static let followsSymlinks = HeaderFlags(rawValue: 1 << 1)
        static let hasTree = HeaderFlags(rawValue: 1 << 2)
        static let rootUnreadable = HeaderFlags(rawValue: 1 << 3)
        static let known: HeaderFlags = [.recursive, .followsSymlinks, .hasTree, .rootUnreadable]
    }

    /// Bits of an entry's leading flags byte.
    private enum EntryFlag {
        static let classMask: UInt8 = 0b11
        static let modeRepeats: UInt8 = 1 << 2
        static let ownerRepeats: UInt8 = 1 << 3
        static let ownDevice: UInt8 = 1 << 4
        static let singleLink: UInt8 = 1 << 5
        static let hasListing: UInt8 = 1 << 6
        static let hasBirthTime: UInt8 = 1 << 7
    }

    /// The fewest bytes an entry can take (flags, prefix, suffix length, one name byte, inode,
    /// size, mtime, ctime): bounds every count before anything is reserved for it.
    private static let minimumEntryBytes = 8

    /// What a snapshot file holds.
    package struct Contents {
        package var root: [UInt8]
        package var scanner: SnapshotScanner
        package var snapshot: RootSnapshot
        package var entryCount: Int
    }

    // MARK: Encoding

    package static func encode(root: [UInt8], scanner: SnapshotScanner, snapshot: RootSnapshot) -> [UInt8] {
        // One call per level of the tree: on a stack made for any depth.
        ProducerThread.withLargeStack { encodeOnThisStack(root: root, scanner: scanner, snapshot: snapshot) }
    }

    private static func encodeOnThisStack(root: [UInt8], scanner: SnapshotScanner, snapshot: RootSnapshot) -> [UInt8] {
        var writer = SnapshotByteWriter(capacity: headerSize + root.count + 64 + 24 * snapshot.entryCountEstimate)
        writer.bytes.append(contentsOf: magic)
        writer.fixed(version)
        var flags: HeaderFlags = []
        if scanner.isRecursive { flags.insert(.recursive) }
        if scanner.followsSymlinks { flags.insert(.followsSymlinks) }
        if let tree = snapshot.tree {
            flags.insert(.hasTree)
            if tree.isUnreadable { flags.insert(.rootUnreadable) }
        }
        writer.fixed(flags.rawValue)
        writer.fixed(UInt64(0))  // length, patched below
        writer.fixed(UInt64(0))  // entry count, patched below
        writer.fixed(UInt64(0))  // checksum, patched below

        writer.data(root)
        writer.varint(scanner.filter.include.count)
        for glob in scanner.filter.include { writer.data(glob.patternBytes) }
        writer.varint(scanner.filter.exclude.count)
        for glob in scanner.filter.exclude { writer.data(glob.patternBytes) }
        let rootStatus = snapshot.status
        writer.varint(rootStatus.device)
        writer.varint(rootStatus.inode)
        writer.varint(UInt64(rootStatus.mode))
        writer.varint(UInt64(rootStatus.userID))
        writer.varint(UInt64(rootStatus.groupID))
        writer.varint(UInt64(rootStatus.linkCount))
        writer.signed(rootStatus.size)
        writer.signed(rootStatus.modificationTime)
        writer.signed(rootStatus.changeTime)
        writer.signed(rootStatus.birthTime)

        var entryCount = 0
        if let tree = snapshot.tree {
            entryCount = encodeTree(tree, rootStatus: rootStatus, into: &writer)
        }

        writer.patch(UInt64(writer.bytes.count), at: lengthOffset)
        writer.patch(UInt64(entryCount), at: entryCountOffset)
        writer.patch(checksum(of: writer.bytes), at: checksumOffset)
        return writer.bytes
    }

    /// Pre-order, with an explicit stack (a deep tree must not exhaust the thread's stack).
    private static func encodeTree(_ tree: SnapshotDirectory, rootStatus: FileStatus, into writer: inout SnapshotByteWriter) -> Int {
        var delta = DeltaState(root: rootStatus)
        var stack: [(directory: SnapshotDirectory, index: Int, device: UInt64)] = [(tree, 0, rootStatus.device)]
        writer.varint(tree.entries.count)
        var count = 0
        while let top = stack.last {
            let entries = top.directory.entries
            guard top.index < entries.count else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].index += 1
            let entry = entries[top.index]
            let status = entry.status
            let modeClass = Self.modeClass(status.mode)
            var flags = UInt8(modeClass)
            if delta.lastMode(ofClass: modeClass) == status.mode { flags |= EntryFlag.modeRepeats }
            if delta.userID == status.userID && delta.groupID == status.groupID { flags |= EntryFlag.ownerRepeats }
            if status.device != top.device { flags |= EntryFlag.ownDevice }
            if status.linkCount == 1 { flags |= EntryFlag.singleLink }
            let listing = modeClass == directoryClass ? entry.directory : nil
            if listing != nil { flags |= EntryFlag.hasListing }
            if status.birthTime != 0 { flags |= EntryFlag.hasBirthTime }
            writer.byte(flags)

            entry.name.withBytes { name in
                let shared = top.index > 0 ? entries[top.index - 1].name.withBytes { sharedPrefix($0, name) } : 0
                writer.varint(shared)
                writer.varint(name.count - shared)
                writer.bytes.append(contentsOf: name[shared...])
            }

            if flags & EntryFlag.modeRepeats == 0 {
                writer.varint(UInt64(status.mode))
                delta.setLastMode(status.mode, ofClass: modeClass)
            }
            if flags & EntryFlag.ownerRepeats == 0 {
                writer.varint(UInt64(status.userID))
                writer.varint(UInt64(status.groupID))
                delta.userID = status.userID
                delta.groupID = status.groupID
            }
            if flags & EntryFlag.ownDevice != 0 { writer.varint(status.device) }
            writer.signed(Int64(bitPattern: status.inode &- delta.inode))
            delta.inode = status.inode
            if flags & EntryFlag.singleLink == 0 { writer.varint(UInt64(status.linkCount)) }
            writer.varint(UInt64(bitPattern: status.size))
            writer.signed(status.modificationTime &- delta.modificationTime)
            delta.modificationTime = status.modificationTime
            writer.signed(status.changeTime &- status.modificationTime)
            if status.birthTime != 0 { writer.signed(status.birthTime &- status.modificationTime) }
            count += 1

            if let listing {
                writer.varint(UInt64(listing.entries.count) << 1 | (listing.isUnreadable ? 1 : 0))
                stack.append((listing, 0, status.device))
            }
        }
        return count
    }

    // MARK: Decoding

    /// Decodes the bytes of a snapshot file; `file` only names it in errors.
    package static func decode(_ bytes: [UInt8], file: FilePath) throws(SnapshotFileError) -> Contents {
        // One call per level of the tree: on a stack made for any depth.
        try ProducerThread.withLargeStack {
            Result { () throws(SnapshotFileError) in try decodeOnThisStack(bytes, file: file) }
        }.get()
    }

    private static func decodeOnThisStack(_ bytes: [UInt8], file: FilePath) throws(SnapshotFileError) -> Contents {
        let actual = UInt64(bytes.count)
        let header = UInt64(headerSize)
        guard bytes.count >= magic.count else {
            if bytes.elementsEqual(magic.prefix(bytes.count)) {
                throw .truncated(file, expectedBytes: header, actualBytes: actual)
            }
            throw .notASnapshot(file)
        }
        guard bytes[0..<magic.count].elementsEqual(magic) else { throw .notASnapshot(file) }
        guard bytes.count >= versionOffset + 4 else { throw .truncated(file, expectedBytes: header, actualBytes: actual) }
        let foundVersion: UInt32 = readFixed(bytes, at: versionOffset)
        guard foundVersion == version else { throw .unsupportedVersion(file, found: foundVersion, supported: version) }
        guard bytes.count >= headerSize else { throw .truncated(file, expectedBytes: header, actualBytes: actual) }
        let length: UInt64 = readFixed(bytes, at: lengthOffset)
        guard actual >= length else { throw .truncated(file, expectedBytes: length, actualBytes: actual) }
        guard actual == length else {
            throw .corrupted(file, reason: "\(actual - length) bytes past the end its header records")
        }
        let recorded: UInt64 = readFixed(bytes, at: checksumOffset)
        guard recorded == checksum(of: bytes) else { throw .corrupted(file, reason: "checksum mismatch") }

        let flags = HeaderFlags(rawValue: readFixed(bytes, at: flagsOffset))
        let entryCount: UInt64 = readFixed(bytes, at: entryCountOffset)
        do throws(SnapshotFormatFault) {
            guard flags.isSubset(of: .known) else { throw SnapshotFormatFault("unknown header flags") }
            guard entryCount <= UInt64(bytes.count / minimumEntryBytes) else {
                throw SnapshotFormatFault("entry count \(entryCount) does not fit in \(bytes.count) bytes")
            }
            return try bytes.withUnsafeBufferPointer { buffer throws(SnapshotFormatFault) in
                var reader = SnapshotByteReader(buffer, offset: headerSize)
                return try decodeBody(&reader, flags: flags, entryCount: Int(entryCount))
            }
        } catch {
            throw .corrupted(file, reason: error.reason)
        }
    }

    /// The scan options a snapshot file records, read from its header alone (no checksum,
    /// no entries), so that a rescan can start while the entries are decoded; `nil` where
    /// the header does not read. ``decode(_:file:)`` still checks the whole file.
    package static func scanner(in bytes: [UInt8]) -> SnapshotScanner? {
        guard bytes.count >= headerSize, bytes[0..<magic.count].elementsEqual(magic),
              readFixed(bytes, at: versionOffset) as UInt32 == version else { return nil }
        let flags = HeaderFlags(rawValue: readFixed(bytes, at: flagsOffset))
        return bytes.withUnsafeBufferPointer { buffer -> SnapshotScanner? in
            var reader = SnapshotByteReader(buffer, offset: headerSize)
            return try? decodeRootAndScanner(&reader, flags: flags).scanner
        }
    }

    private static func decodeRootAndScanner(_ reader: inout SnapshotByteReader, flags: HeaderFlags) throws(SnapshotFormatFault) -> (root: [UInt8], scanner: SnapshotScanner) {
        let root = try reader.data()
        guard root.first == UInt8(ascii: "/"), !root.contains(0) else { throw SnapshotFormatFault("the root is not an absolute path") }
        var include: [PathGlob] = []
        for _ in 0..<(try reader.count(atMost: reader.remaining, "a pattern count")) {
            include.append(PathGlob(bytes: try reader.data()))
        }
        var exclude: [PathGlob] = []
        for _ in 0..<(try reader.count(atMost: reader.remaining, "a pattern count")) {
            exclude.append(PathGlob(bytes: try reader.data()))
        }
        let scanner = SnapshotScanner(
            isRecursive: flags.contains(.recursive),
            followsSymlinks: flags.contains(.followsSymlinks),
            filter: PathFilter(include: include, exclude: exclude)
        )
        return (root, scanner)
    }

    private static func decodeBody(_ reader: inout SnapshotByteReader, flags: HeaderFlags, entryCount: Int) throws(SnapshotFormatFault) -> Contents {
        let (root, scanner) = try decodeRootAndScanner(&reader, flags: flags)
        let rootStatus = FileStatus(
            device: try reader.varint(),
            inode: try reader.varint(),
            mode: try narrow(reader.varint(), "the root's mode"),
            userID: try narrow(reader.varint(), "the root's owner"),
            groupID: try narrow(reader.varint(), "the root's group"),
            linkCount: try narrow(reader.varint(), "the root's link count"),
            size: try reader.signed(),
            modificationTime: try reader.signed(),
            changeTime: try reader.signed(),
            birthTime: try reader.signed()
        )
        var tree: SnapshotDirectory?
        if flags.contains(.hasTree) {
            guard modeClass(rootStatus.mode) == directoryClass else { throw SnapshotFormatFault("a listing under a root that is not a directory") }
            let directory = SnapshotDirectory(parent: nil, name: [], isUnreadable: flags.contains(.rootUnreadable))
            try decodeTree(into: directory, rootStatus: rootStatus, entryCount: entryCount, &reader)
            tree = directory
        } else if entryCount != 0 || flags.contains(.rootUnreadable) {
            throw SnapshotFormatFault("entries under a root without a listing")
        }
        guard reader.isAtEnd else { throw SnapshotFormatFault("\(reader.remaining) bytes after the last entry") }
        return Contents(root: root, scanner: scanner, snapshot: RootSnapshot(status: rootStatus, tree: tree), entryCount: entryCount)
    }

    private struct Frame {
        let directory: SnapshotDirectory
        var remaining: Int
        let device: UInt64
    }

    private static func decodeTree(
        into tree: SnapshotDirectory,
        rootStatus: FileStatus,
        entryCount: Int,
        _ reader: inout SnapshotByteReader
    ) throws(SnapshotFormatFault) {
        var delta = DeltaState(root: rootStatus)
        let rootCount = try reader.count(atMost: entryCount, "the root's entry count")
        tree.entries.reserveCapacity(rootCount)
        var stack = [Frame(directory: tree, remaining: rootCount, device: rootStatus.device)]
        var decoded = 0
        while !stack.isEmpty {
            let top = stack.count - 1
            guard stack[top].remaining > 0 else {
                stack.removeLast()
                continue
            }
            stack[top].remaining -= 1
            let directory = stack[top].directory
            decoded += 1
            guard decoded <= entryCount else { throw SnapshotFormatFault("more entries than the header's \(entryCount)") }

            let flags = try reader.byte()
            let previous = directory.entries.last?.name.bytes
            let shared = try reader.count(atMost: previous?.count ?? 0, "a shared name prefix")
            let suffixLength = try reader.count(atMost: reader.remaining, "a name length")
            guard suffixLength > 0 else { throw SnapshotFormatFault("an entry that repeats its sibling's name") }
            var name: [UInt8] = []
            name.reserveCapacity(shared + suffixLength)
            if let previous, shared > 0 { name.append(contentsOf: previous[0..<shared]) }
            try reader.append(suffixLength, to: &name)
            for index in shared..<name.count where name[index] == 0 || name[index] == UInt8(ascii: "/") {
                throw SnapshotFormatFault("a name holds a NUL or a slash")
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { throw SnapshotFormatFault("an entry named . or ..") }
            if let previous, compareBytes(previous, name) >= 0 { throw SnapshotFormatFault("names out of order") }

            let modeClass = Int(flags & EntryFlag.classMask)
            let mode: UInt32
            if flags & EntryFlag.modeRepeats != 0 {
                mode = delta.lastMode(ofClass: modeClass)
            } else {
                mode = try narrow(reader.varint(), "a mode")
                guard Self.modeClass(mode) == modeClass else { throw SnapshotFormatFault("a mode that contradicts its type") }
                delta.setLastMode(mode, ofClass: modeClass)
            }
            if flags & EntryFlag.ownerRepeats == 0 {
                delta.userID = try narrow(reader.varint(), "an owner")
                delta.groupID = try narrow(reader.varint(), "a group")
            }
            var device = stack[top].device
            if flags & EntryFlag.ownDevice != 0 { device = try reader.varint() }
            let inodeDelta = try reader.signed()
            delta.inode = delta.inode &+ UInt64(bitPattern: inodeDelta)
            var linkCount: UInt32 = 1
            if flags & EntryFlag.singleLink == 0 { linkCount = try narrow(reader.varint(), "a link count") }
            let size = Int64(bitPattern: try reader.varint())
            let modificationDelta = try reader.signed()
            delta.modificationTime = delta.modificationTime &+ modificationDelta
            let changeDelta = try reader.signed()
            let changeTime = delta.modificationTime &+ changeDelta
            var birthTime: Int64 = 0
            if flags & EntryFlag.hasBirthTime != 0 {
                let birthDelta = try reader.signed()
                birthTime = delta.modificationTime &+ birthDelta
                guard birthTime != 0 else { throw SnapshotFormatFault("a birth time of zero marked as present") }
            }
            let status = FileStatus(
                device: device, inode: delta.inode, mode: mode, userID: delta.userID, groupID: delta.groupID,
                linkCount: linkCount, size: size, modificationTime: delta.modificationTime, changeTime: changeTime,
                birthTime: birthTime
            )

            if flags & EntryFlag.hasListing != 0 {
                guard modeClass == directoryClass else { throw SnapshotFormatFault("a listing under an item that is not a directory") }
                let value = try reader.varint()
                let count = value >> 1
                guard count <= UInt64(reader.remaining / minimumEntryBytes) else {
                    throw SnapshotFormatFault("a directory of \(count) entries in \(reader.remaining) bytes")
                }
                let listing = SnapshotDirectory(parent: directory, name: name, isUnreadable: value & 1 != 0)
                listing.entries.reserveCapacity(Int(count))
                directory.entries.append(SnapshotEntry(name: name, status: status, directory: listing))
                stack.append(Frame(directory: listing, remaining: Int(count), device: device))
            } else {
                directory.entries.append(SnapshotEntry(name: name, status: status))
            }
        }
        guard decoded == entryCount else { throw SnapshotFormatFault("\(decoded) entries where the header records \(entryCount)") }
    }

    // MARK: Shared

    /// The values the next entry's fields are stored relative to: the entry before it in the
    /// file (pre-order), and the last mode seen for each type.
    private struct DeltaState {
        var inode: UInt64
        var modificationTime: Int64
        var userID: UInt32
        var groupID: UInt32
        var fileMode: UInt32 = 0o100644
        var directoryMode: UInt32 = 0o040755
        var symlinkMode: UInt32 = 0o120777
        var otherMode: UInt32 = 0o010644

        init(root: FileStatus) {
            inode = root.inode
            modificationTime = root.modificationTime
            userID = root.userID
            groupID = root.groupID
        }

        @inline(__always)
        func lastMode(ofClass modeClass: Int) -> UInt32 {
            switch modeClass {
            case 0: return fileMode
            case 1: return directoryMode
            case 2: return symlinkMode
            default: return otherMode
            }
        }

        @inline(__always)
        mutating func setLastMode(_ mode: UInt32, ofClass modeClass: Int) {
            switch modeClass {
            case 0: fileMode = mode
            case 1: directoryMode = mode
            case 2: symlinkMode = mode
            default: otherMode = mode
            }
        }
    }

    private static let directoryClass = 1

    /// The two-bit type class an entry's flags carry: file, directory, symlink, anything else.
    @inline(__always)
    private static func modeClass(_ mode: UInt32) -> Int {
        switch mode & 0o170000 {
        case 0o100000: return 0
        case 0o040000: return 1
        case 0o120000: return 2
        default: return 3
        }
    }

    @inline(__always)
    private static func sharedPrefix(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let limit = min(lhs.count, rhs.count)
        var index = 0
        while index < limit && lhs[index] == rhs[index] { index += 1 }
        // Keep at least one byte of suffix, so an entry never has an empty stored name part
        // (names are unique and sorted, so this only matters for a prefix of its successor).
        return index == rhs.count && index > 0 ? index - 1 : index
    }

    @inline(__always)
    private static func narrow(_ value: UInt64, _ what: StaticString) throws(SnapshotFormatFault) -> UInt32 {
        guard let narrowed = UInt32(exactly: value) else { throw SnapshotFormatFault("\(what) exceeds 32 bits") }
        return narrowed
    }

    private static func readFixed<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int) -> T {
        var value = T.zero
        for index in (0..<MemoryLayout<T>.size).reversed() {
            value = value << 8 | T(bytes[offset + index])
        }
        return value
    }

    /// `bytes` with their checksum recomputed: for tests that craft files the checksum
    /// does not catch, to show the structural checks do.
    package static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= headerSize else { return bytes }
        var writer = SnapshotByteWriter(capacity: 0)
        writer.bytes = bytes
        writer.patch(checksum(of: bytes), at: checksumOffset)
        return writer.bytes
    }

    /// FNV-1a 64 over the whole file except the checksum field itself.
    private static func checksum(of bytes: [UInt8]) -> UInt64 {
        var hash = FNV1a64()
        bytes.withUnsafeBytes { buffer in
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<checksumOffset]))
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[(checksumOffset + 8)...]))
        }
        return hash.value
    }
}

extension RootSnapshot {
    /// A cheap upper bound used only to size the encoding buffer: the root's direct entries
    /// times a guess, never a walk of the tree.
    fileprivate var entryCountEstimate: Int { (tree?.entries.count ?? 0) * 4 }
}
