import PlatformLibc
import FileSystemEvents
import Synchronization

/// The format for people: time since the watch became ready, the kind and type in aligned
/// columns, and paths relative to the working directory where they lie below it.
///
///     +0.000s  ready              polling  /home/me/project
///     +1.204s  created            file     src/main.swift
///     +2.871s  renamed            dir      docs → documentation
final class TextFormatter: EventFormatter {
    private let workingDirectory: [UInt8]
    /// Set once, at `ready`, on the thread that prints.
    private let readyAt = Mutex<FileSystemEvent.Timestamp?>(nil)

    init(roots: [FilePath]) {
        var directory = WatchOptions.absolute(FilePath(".")).bytes
        if directory.last != UInt8(ascii: "/") { directory.append(UInt8(ascii: "/")) }
        self.workingDirectory = directory
    }

    func ready(backend: String, roots: [FilePath]) -> [UInt8] {
        let now = FileSystemEvent.Timestamp.now()
        readyAt.withLock { $0 = now }
        let rootList = roots.map { PathText.escapedForTerminal($0.bytes) }.joined(separator: ", ")
        return line(time: now, kind: "ready", type: backend, text: "watching \(rootList)")
    }

    func events(_ events: [FileSystemEvent]) -> [UInt8] {
        var output: [UInt8] = []
        for event in events {
            var text = display(event.path)
            if let previousPath = event.previousPath {
                text = "\(display(previousPath)) → \(text)"
            }
            if event.isSynthetic && event.kind != .overflow { text += "  (from scan)" }
            if let original = event.duplicateOf { text += "  (duplicate of \(display(original)))" }
            if let madeAt = event.madeAt { text += "  (made at \(display(madeAt)))" }
            if let stableID = event.stableID { text += "  id \(stableID)" }
            output += line(time: event.timestamp, kind: event.kind.rawValue, type: Self.shortType(event.itemType), text: text)
        }
        return output
    }

    private func line(time: FileSystemEvent.Timestamp, kind: String, type: String, text: String) -> [UInt8] {
        let elapsed = readyAt.withLock { $0 }.map { Double(time.nanosecondsSince($0)) / 1e9 } ?? 0
        let clock = "+" + format(elapsed) + "s"
        return Array("\(clock.padded(9))  \(kind.padded(17))  \(type.padded(7))  \(text)\n".utf8)
    }

    private func display(_ path: FilePath) -> String {
        let bytes = path.bytes
        if bytes.count > workingDirectory.count, Array(bytes[..<workingDirectory.count]) == workingDirectory {
            return PathText.escapedForTerminal(Array(bytes[workingDirectory.count...]))
        }
        return PathText.escapedForTerminal(bytes)
    }

    private func format(_ seconds: Double) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    private static func shortType(_ type: FileItemType) -> String {
        switch type {
        case .file: return "file"
        case .directory: return "dir"
        case .symlink: return "symlink"
        case .other: return "other"
        case .unknown: return "?"
        }
    }
}

extension FileSystemEvent.Timestamp {
    func nanosecondsSince(_ other: FileSystemEvent.Timestamp) -> Int64 {
        (secondsSinceEpoch - other.secondsSinceEpoch) * 1_000_000_000 + Int64(nanoseconds - other.nanoseconds)
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
