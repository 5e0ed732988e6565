import FileSystemEvents
import FileSystemEventsConformance
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A file appended as fast as a writer can, followed on every backend, every byte checked as
/// it arrives without keeping the file in memory.
///
/// The default, 256 MiB, keeps the README's test command short;
/// `FILEWATCH_FOLLOW_STRESS=1` runs the 1 GiB (or `FILEWATCH_FOLLOW_LARGE_MIB=N`).
@Suite(.serialized)
struct LargeFileFollowTests {
    static let mebibytes: Int = {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment["FILEWATCH_FOLLOW_LARGE_MIB"], let mebibytes = Int(value), mebibytes > 0 { return mebibytes }
        return environment["FILEWATCH_FOLLOW_STRESS"] == "1" ? 1_024 : 256
    }()

    @Test("a large file appended as fast as the writer can (FILEWATCH_FOLLOW_STRESS=1: 1 GiB)", arguments: FollowBackend.available)
    func largeFileAtFullSpeed(backend: FollowBackend) async throws {
        let tree = try ScratchTree()
        let path = tree.path("big.log")
        try tree.write("big.log", "")
        let pattern = BlockPattern(seed: 23)
        let total = Int64(Self.mebibytes) * Int64(BlockPattern.blockSize)

        let follower = FileFollower(
            path: path, options: FileFollower.Options(startPosition: .start, rotationGracePeriod: .seconds(60)),
            makeSource: backend.makeSource)
        let consumer = Task { () throws -> (delivered: Int64, problems: [String]) in
            var delivered: Int64 = 0
            var problems: [String] = []
            for try await update in follower {
                switch update {
                case .data(let chunk):
                    if chunk.generation != 1 || chunk.offset != delivered {
                        problems.append("chunk of generation \(chunk.generation) at \(chunk.offset), expected generation 1 at \(delivered)")
                    } else if let mismatch = pattern.firstMismatch(chunk.bytes, at: chunk.offset) {
                        problems.append("byte \(mismatch) differs from what was written")
                    }
                    delivered += Int64(chunk.bytes.count)
                case .notice(let notice):
                    problems.append("unexpected notice \(notice.kind) for generation \(notice.generation)")
                }
                if delivered >= total || problems.count > 10 { break }
            }
            return (delivered, problems)
        }

        // The follower starts from byte 0, so the writer need not wait for it to attach.
        try await onThread {
            let descriptor = open(path.string, O_WRONLY | O_APPEND | O_CLOEXEC)
            guard descriptor >= 0 else { throw FollowTestFailure("open \(path): \(Errno(rawValue: errno))") }
            defer { close(descriptor) }
            for block in 0..<Self.mebibytes {
                try pattern.block(block).withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let done = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                        if done < 0 {
                            if errno == EINTR { continue }
                            throw FollowTestFailure("write: \(Errno(rawValue: errno))")
                        }
                        offset += done
                    }
                }
            }
        }

        // The consumer ends once it has everything; a follower that lost or stalled would keep
        // it waiting, so a deadline proportional to the size ends the wait.
        let deadline = Task {
            try await Task.sleep(for: .seconds(60 + Self.mebibytes / 4))
            consumer.cancel()
        }
        defer { deadline.cancel() }
        let (delivered, problems) = try await consumer.value
        #expect(problems == [])
        #expect(delivered == total, "delivered \(delivered) of \(total) bytes before the deadline")
    }
}

/// What the writer writes: 1 MiB blocks of one random block, each starting with its own
/// number, so a block delivered twice, out of order or shifted is caught, and checking a chunk
/// is a `memcmp` rather than a byte loop (which would dominate a debug build).
struct BlockPattern: Sendable {
    static let blockSize = 1 << 20
    private let random: [UInt8]

    init(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        random = (0..<Self.blockSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }

    func block(_ number: Int) -> [UInt8] {
        var block = random
        withUnsafeBytes(of: UInt64(number).littleEndian) { header in
            for index in 0..<header.count { block[index] = header[index] }
        }
        return block
    }

    /// The offset of the first byte of `bytes`, read at `offset`, that differs from the pattern.
    func firstMismatch(_ bytes: [UInt8], at offset: Int64) -> Int64? {
        bytes.withUnsafeBytes { chunk -> Int64? in
            random.withUnsafeBytes { random -> Int64? in
                var position = 0
                while position < chunk.count {
                    let absolute = offset + Int64(position)
                    let number = UInt64(absolute / Int64(Self.blockSize))
                    let within = Int(absolute % Int64(Self.blockSize))
                    let length = min(chunk.count - position, Self.blockSize - within)
                    var checked = 0
                    // The block number's eight bytes, then the random rest.
                    while checked < length && within + checked < 8 {
                        let expected = UInt8(truncatingIfNeeded: number >> (8 * UInt64(within + checked)))
                        if chunk[position + checked] != expected { return absolute + Int64(checked) }
                        checked += 1
                    }
                    if checked < length,
                       memcmp(chunk.baseAddress! + position + checked, random.baseAddress! + within + checked, length - checked) != 0 {
                        for index in checked..<length where chunk[position + index] != random[within + index] {
                            return absolute + Int64(index)
                        }
                    }
                    position += length
                }
                return nil
            }
        }
    }
}
