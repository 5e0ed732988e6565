#if os(Linux)
import FileSystemEventsCore
import FileSystemEventsInotify
import Foundation
import SystemPackage

/// A private file outside the tree, watched on the real kernel, that a test kernel holding
/// events back writes to: one real write keeps the inotify descriptor readable meanwhile, so a
/// watch asleep in `poll` wakes for the held events. The watch ignores the file's events: their
/// watch descriptor is not one it added.
struct NudgeFile {
    private let directory: URL
    private let descriptor: CInt
    /// The watch of the file, on the real kernel.
    let watch: CInt

    init(on real: inout RawInotifyKernel) throws(FileSystemEventsError) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("filewatch-nudge-\(UUID().uuidString)")
        let file = directory.appendingPathComponent("nudge").path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .systemCallFailed(call: "mkdir", path: FilePath(directory.path), errno: .ioError)
        }
        descriptor = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .systemCallFailed(call: "open", path: FilePath(file), errno: Errno(rawValue: errno))
        }
        switch real.addWatch(path: Array(file.utf8), mask: .modify) {
        case .success(let watch): self.watch = watch
        case .failure(let error):
            Foundation.close(descriptor)
            throw .systemCallFailed(call: "inotify_add_watch", path: FilePath(file), errno: error)
        }
    }

    /// What a read hands out while events are held: a write to this file.
    var event: Inotify.Event { Inotify.Event(watch: watch, mask: .modify, cookie: 0, name: []) }

    /// One real write, so the descriptor is readable until the next real read.
    func nudge() {
        var byte: UInt8 = 0
        _ = pwrite(descriptor, &byte, 1, 0)
    }

    func remove() {
        Foundation.close(descriptor)
        try? FileManager.default.removeItem(at: directory)
    }
}
#endif
