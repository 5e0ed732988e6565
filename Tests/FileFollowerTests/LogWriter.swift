import FileSystemEventsConformance
import FileSystemEvents
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A writer as a logging program is one: it holds a descriptor to the log, appends through
/// it, and reopens the path when told. Runs on a thread of its own and records every byte it
/// writes, in order, which is what the follower must deliver.
final class LogWriter {
    let path: String
    let recorder: FollowRecorder
    /// Everything written through any descriptor, in the order written.
    private(set) var written: [UInt8] = []
    /// The descriptor the writer appends through.
    private(set) var descriptor: CInt = -1
    private var random: SplitMix64

    init(path: FilePath, recorder: FollowRecorder, seed: UInt64 = 1) {
        self.path = path.string
        self.recorder = recorder
        self.random = SplitMix64(seed: seed)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Opens (creating) the path for appending and makes it the current descriptor; the
    /// previous one is returned, still open, for writes after a rotation.
    @discardableResult
    func reopen() throws -> CInt {
        let previous = descriptor
        descriptor = try Self.check("open \(path)", open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644))
        return previous
    }

    func append(_ bytes: [UInt8]) throws {
        try write(bytes, to: descriptor)
    }

    /// `count` random bytes (newlines included) through the current descriptor.
    func appendRandom(_ count: Int) throws {
        try append(randomBytes(count))
    }

    func write(_ bytes: [UInt8], to target: CInt) throws {
        var offset = 0
        while offset < bytes.count {
            let done = bytes[offset...].withUnsafeBytes { Glibc.write(target, $0.baseAddress, $0.count) }
            if done < 0 {
                if errno == EINTR { continue }
                throw FollowTestFailure("write: \(Errno(rawValue: errno))")
            }
            offset += done
        }
        written += bytes
    }

    func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = random.next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    /// A size from 1 byte to `maximum`, spread evenly over the powers of two in between.
    func randomSize(upTo maximum: Int) -> Int {
        let bits = Int.bitWidth - maximum.leadingZeroBitCount
        let high = 1 << Int(random.next() % UInt64(bits))
        return min(maximum, high + Int(random.next() % UInt64(high)))
    }

    func randomInt(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next() % UInt64(range.count))
    }

    /// Blocks until the follower has delivered everything written so far: the one kind of
    /// pause a writer takes, so that it never rotates a file the follower has not opened yet.
    func waitUntilDelivered() throws {
        try recorder.waitForBytes(written.count)
    }

    /// Closes the current descriptor and forgets its number, so `deinit` cannot close it a
    /// second time: by then the number may be another test's descriptor (a follower's held
    /// file), and closing that would make the follower lose it.
    func closeCurrent() {
        Self.closeDescriptor(descriptor)
        descriptor = -1
    }

    static func closeDescriptor(_ descriptor: CInt) {
        if descriptor >= 0 { close(descriptor) }
    }

    @discardableResult
    static func check(_ what: String, _ result: CInt) throws -> CInt {
        guard result >= 0 else { throw FollowTestFailure("\(what): \(Errno(rawValue: errno))") }
        return result
    }
}


/// Runs `body` on a thread of its own (writers block in system calls and condition waits,
/// which must not hold a thread of Swift's cooperative pool).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

extension LogWriter {
    /// Counts bytes another party put in the file (an editor's replacement, content present
    /// before following began) as part of what the follower must deliver.
    func pretendWritten(_ bytes: [UInt8]) {
        written += bytes
    }
}
