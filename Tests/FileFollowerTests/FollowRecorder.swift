import FileSystemEvents
import Foundation

/// What a follower delivered, checked as it arrives, and waited on by writer threads.
///
/// Waiting is on a condition with a deadline, never a sleep: a writer that must not rotate
/// before the follower holds the current file waits for "everything written so far has been
/// delivered".
final class FollowRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private var delivered: [UInt8] = []
    private var notices: [FileFollowerNotice] = []
    private var watchStarts: [[FilePath]] = []
    /// The next offset expected per generation, to check chunks are contiguous.
    private var nextOffset: [Int: Int64] = [:]
    private var violations: [String] = []
    private var lastGeneration = 0
    /// Generations a `replaced` or `appeared` notice announced (1, the file followed first,
    /// needs none).
    private var announced: Set<Int> = [1]
    private var isFinished = false
    /// While set, the consumer blocks in ``record(_:)`` after its next update: a consumer
    /// that cannot keep up (a full pipe, a disk stalled on writeback) holds up the follower.
    private var isHeld = false
    private var isStalled = false

    func record(_ update: FileFollowerUpdate) {
        condition.lock()
        defer {
            condition.broadcast()
            while isHeld {
                isStalled = true
                condition.broadcast()
                condition.wait()
            }
            isStalled = false
            condition.unlock()
        }
        switch update {
        case .data(let chunk):
            if chunk.bytes.isEmpty { violations.append("empty chunk at \(chunk.offset)") }
            let expected = nextOffset[chunk.generation] ?? chunk.offset
            if chunk.offset != expected {
                violations.append("generation \(chunk.generation): chunk at \(chunk.offset), expected \(expected)")
            }
            if chunk.generation < lastGeneration {
                violations.append("generation \(chunk.generation) after \(lastGeneration)")
            }
            lastGeneration = max(lastGeneration, chunk.generation)
            nextOffset[chunk.generation] = chunk.offset + Int64(chunk.bytes.count)
            delivered += chunk.bytes
        case .notice(let notice):
            notices.append(notice)
            switch notice.kind {
            case .truncated: nextOffset[notice.generation] = 0
            // A new file starts at 0, except one that came back over its successors: its
            // first chunk starts where its earlier generation stopped (the byte-for-byte
            // comparison with what was written checks that nothing was skipped or repeated).
            case .replaced, .appeared: break
            case .removed, .overflowed: break
            }
            switch notice.kind {
            case .replaced, .appeared: announced.insert(notice.generation)
            case .removed, .truncated:
                if !announced.contains(notice.generation) {
                    violations.append("\(notice.kind) of generation \(notice.generation), which no notice announced")
                }
            case .overflowed: break
            }
        }
    }

    func watching(_ roots: [FilePath]) {
        condition.lock()
        watchStarts.append(roots)
        condition.broadcast()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        isFinished = true
        condition.broadcast()
        condition.unlock()
    }

    var bytes: [UInt8] { locked { delivered } }
    var deliveredNotices: [FileFollowerNotice] { locked { notices } }
    var problems: [String] { locked { violations } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Blocks the calling (writer) thread until `predicate` holds, or throws at the deadline.
    func wait(
        _ what: @autoclosure () -> String,
        timeout: TimeInterval = 60,
        until predicate: (_ delivered: [UInt8], _ notices: [FileFollowerNotice], _ watchStarts: [[FilePath]]) -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(delivered, notices, watchStarts) {
            if isFinished { throw FollowTestFailure("the follower ended before \(what())") }
            guard condition.wait(until: deadline) else {
                throw FollowTestFailure("timed out waiting for \(what()): \(delivered.count) bytes delivered, notices \(notices)")
            }
        }
    }

    /// Makes the consumer stall at its next update, until ``release()``.
    func hold() {
        condition.lock()
        isHeld = true
        condition.unlock()
    }

    func release() {
        condition.lock()
        isHeld = false
        condition.broadcast()
        condition.unlock()
    }

    /// Until the consumer is stalled in ``record(_:)``.
    func waitUntilStalled(timeout: TimeInterval = 60) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !isStalled {
            guard condition.wait(until: deadline) else { throw FollowTestFailure("the consumer never stalled") }
        }
    }

    /// Until at least `count` bytes have been delivered.
    func waitForBytes(_ count: Int, timeout: TimeInterval = 60) throws {
        try wait("\(count) bytes", timeout: timeout) { delivered, _, _ in delivered.count >= count }
    }
}

struct FollowTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
