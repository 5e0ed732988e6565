#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import FileSystemEvents
public import SystemPackage

// `URL` for Foundation users, in a module of its own: the core and the CLI link no Foundation
// at all (full Foundation brings ICU, several MiB resident in every process), and this one
// links only FoundationEssentials where the toolchain has it.
//
// Conversions percent-encode and decode the path's bytes themselves, never going through
// `String`, so a name that is not valid UTF-8 survives the round trip (Foundation's own
// `URL(filePath:)` would repair it into U+FFFD).

extension FilePath {
    /// The path of a `file:` URL. Throws ``FileSystemEventsError/invalidOptions(_:)`` for any
    /// other scheme (an `https:` URL has no path on this machine).
    public init(fileURL url: URL) throws(FileSystemEventsError) {
        guard url.isFileURL else {
            throw .invalidOptions("\(url.absoluteString) is not a file URL; give a file: URL (URL(filePath:)) of a local path")
        }
        let encoded = url.absoluteURL.standardizedFileURL.path(percentEncoded: true)
        guard !encoded.isEmpty, let bytes = Self.percentDecoded(encoded.utf8) else {
            throw .invalidOptions("\(url.absoluteString) has no file-system path")
        }
        self.init(bytes: bytes)
    }

    /// The path as a `file:` URL; `isDirectory` adds the trailing slash Foundation uses to tell
    /// a directory's URL from a file's.
    public func fileURL(isDirectory: Bool = false) -> URL {
        var encoded = "file://"
        var bytes: [UInt8] = []
        withPlatformString { representation in
            var pointer = representation
            while pointer.pointee != 0 {
                bytes.append(UInt8(bitPattern: pointer.pointee))
                pointer += 1
            }
        }
        for byte in bytes {
            if Self.isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        if isDirectory && bytes.last != UInt8(ascii: "/") { encoded += "/" }
        return URL(string: encoded) ?? URL(filePath: string, directoryHint: isDirectory ? .isDirectory : .notDirectory)
    }

    private init(bytes: [UInt8]) {
        self = bytes.withUnsafeBufferPointer { buffer in
            var terminated = buffer.map { CChar(bitPattern: $0) }
            terminated.append(0)
            return FilePath(platformString: terminated)
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// `%XX` sequences turned back into bytes; `nil` for a malformed one or a NUL byte.
    private static func percentDecoded(_ text: String.UTF8View) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
            if bytes.last == 0 { return nil }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension WatchOptions {
    /// Options watching `urls` (file URLs), otherwise the defaults.
    public init(urls: [URL]) throws(FileSystemEventsError) {
        var roots: [FilePath] = []
        for url in urls { roots.append(try FilePath(fileURL: url)) }
        self.init(roots: roots)
    }

    /// The watched roots as file URLs.
    public var rootURLs: [URL] { roots.map { $0.fileURL() } }
}

extension FileSystemEvent {
    /// ``path`` as a file URL (a directory's with the trailing slash).
    public var url: URL { path.fileURL(isDirectory: itemType == .directory) }

    /// ``previousPath`` as a file URL.
    public var previousURL: URL? { previousPath?.fileURL(isDirectory: itemType == .directory) }
}

extension FileTreeSnapshot.Item {
    /// ``path`` as a file URL (a directory's with the trailing slash).
    public var url: URL { path.fileURL(isDirectory: itemType == .directory) }
}

extension SettledFile {
    /// The settled file's path as a file URL.
    public var url: URL { path.fileURL() }
}

extension DirectoryListing {
    /// A listing of the directory at a file URL.
    public init(directoryURL url: URL, options: Options = Options(), makeSource: @escaping SourceFactory) throws(FileSystemEventsError) {
        self.init(directory: try FilePath(fileURL: url), options: options, makeSource: makeSource)
    }

    /// The URL of one of the listing's entries.
    public func url(of entry: DirectoryEntry) -> URL {
        directory.appending(entry.relativePath.components).fileURL(isDirectory: entry.type == .directory)
    }
}

extension FileSystemWatcher {
    /// ``subscribe(to:filter:isRecursive:latency:bufferLimit:followsRenames:capturesInitialState:)``
    /// to subtrees given as file URLs.
    public func subscribe(
        toURLs urls: [URL],
        filter: PathFilter = .everything,
        isRecursive: Bool = true,
        latency: Duration = .zero,
        bufferLimit: Int = 65_536,
        followsRenames: Bool = true,
        capturesInitialState: Bool = false
    ) throws(FileSystemEventsError) -> FileSystemEventStream {
        var subtrees: [FilePath] = []
        for url in urls { subtrees.append(try FilePath(fileURL: url)) }
        return subscribe(to: subtrees, filter: filter, isRecursive: isRecursive, latency: latency, bufferLimit: bufferLimit,
                         followsRenames: followsRenames, capturesInitialState: capturesInitialState)
    }
}
