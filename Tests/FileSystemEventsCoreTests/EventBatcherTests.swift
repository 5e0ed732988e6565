import FileSystemEventsCore
import SystemPackage
import Testing

/// The latency window and its bound: held events count against the buffer limit, so a long
/// window over a flood closes early instead of growing without bound.
@Suite struct EventBatcherTests {
    static func event(_ index: Int, _ kind: FileSystemEvent.Kind = .attributesChanged) -> FileSystemEvent {
        FileSystemEvent(kind: kind, path: FilePath("/r/f\(index)"), itemType: .file, isSynthetic: false)
    }

    @Test("a long window closes early at the limit, and no batch exceeds it")
    func closesEarlyAtLimit() {
        var batcher = EventBatcher(latency: .seconds(60), bufferLimit: 100)
        var delivered: [FileSystemEvent] = []
        var sent = 0
        // 300 distinct events, added as a kernel backend adds them (one read at a time),
        // with the clock standing still: only the limit can close the window.
        for read in 0..<30 {
            batcher.add((0..<10).map { Self.event(read * 10 + $0) }, now: 1_000)
            sent += 10
            #expect(batcher.heldCount <= 100, "held \(batcher.heldCount) events after \(sent)")
            while let batch = batcher.takeIfDue(now: 1_000) {
                #expect(batch.count <= 100)
                delivered += batch
            }
        }
        #expect(delivered.count == 300)
        let inOrder = delivered.map(\.path) == (0..<300).map { Self.event($0).path }
        #expect(inOrder)
        #expect(batcher.isEmpty)
    }

    @Test("one add larger than the limit stays whole (a read or a diff is consistent only together) and is due at once")
    func largeAddStaysWhole() {
        var batcher = EventBatcher(latency: .seconds(3600), bufferLimit: 64)
        batcher.add((0..<10).map { Self.event($0) }, now: 0)
        batcher.add((10..<1000).map { Self.event($0) }, now: 0)
        #expect(batcher.millisecondsUntilDue(now: 0) == 0)
        // The open window closed before the large add, which then filled its own.
        let first = batcher.takeIfDue(now: 0)
        let second = batcher.takeIfDue(now: 0)
        #expect(first?.count == 10)
        #expect(second?.count == 990)
        #expect(batcher.takeIfDue(now: 0) == nil)
        #expect(batcher.isEmpty)
    }

    @Test("windows gathered from many adds never exceed the limit")
    func unevenAdds() {
        var batcher = EventBatcher(latency: .seconds(60), bufferLimit: 50)
        var next = 0
        var delivered = 0
        for size in [7, 30, 13, 1, 49, 50, 2, 26, 26, 26] {
            batcher.add((next..<next + size).map { Self.event($0) }, now: 0)
            next += size
            #expect(batcher.heldCount <= 50 + size)
            while let batch = batcher.takeIfDue(now: 0) {
                #expect(batch.count <= 50, "a batch of \(batch.count)")
                delivered += batch.count
            }
        }
        delivered += batcher.takeAll().count
        #expect(delivered == next)
    }

    @Test("below the limit the window closes by time, coalesced")
    func closesByTime() {
        var batcher = EventBatcher(latency: .milliseconds(50), bufferLimit: 100)
        batcher.add([Self.event(1, .created), Self.event(1, .modified), Self.event(1, .attributesChanged)], now: 1_000_000)
        #expect(batcher.takeIfDue(now: 1_000_000) == nil)
        #expect(batcher.millisecondsUntilDue(now: 1_000_000) == 50)
        let batch = batcher.takeIfDue(now: 51_000_000)
        #expect(batch?.map(\.kind) == [.created])
        #expect(batcher.millisecondsUntilDue(now: 51_000_000) == -1)
    }

    @Test("zero latency: everything is due at once")
    func zeroLatency() {
        var batcher = EventBatcher(latency: .zero, bufferLimit: 10)
        batcher.add([Self.event(1)], now: 5)
        #expect(batcher.millisecondsUntilDue(now: 5) == 0)
        #expect(batcher.takeIfDue(now: 5)?.count == 1)
    }

    @Test("a window of years neither wraps round nor traps")
    func hugeLatency() {
        var batcher = EventBatcher(latency: .seconds(Int64.max / 2), bufferLimit: 10)
        batcher.add([Self.event(1)], now: UInt64.max - 10)
        #expect(batcher.takeIfDue(now: UInt64.max - 5) == nil)
        #expect(batcher.millisecondsUntilDue(now: 0) == Int32.max)
        #expect(batcher.takeAll().count == 1)
    }

    @Test("takeAll hands out early-closed and open windows together, in order")
    func takeAllKeepsOrder() {
        var batcher = EventBatcher(latency: .seconds(60), bufferLimit: 4)
        for index in 0..<10 { batcher.add([Self.event(index)], now: 0) }
        let inOrder = batcher.takeAll().map(\.path) == (0..<10).map { Self.event($0).path }
        #expect(inOrder)
        #expect(batcher.isEmpty)
    }

    @Test("the public API in MonotonicClock instants and Durations: a window's time left, then its batch")
    func instantsAndDurations() {
        var batcher = EventBatcher(latency: .milliseconds(50), bufferLimit: 100)
        #expect(batcher.latency == .milliseconds(50))
        let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000)
        #expect(batcher.timeUntilDue(at: start) == nil, "nothing held: no deadline")
        batcher.add([Self.event(1)], at: start)
        #expect(batcher.timeUntilDue(at: start) == .milliseconds(50))
        #expect(batcher.timeUntilDue(at: start.advanced(by: .milliseconds(20))) == .milliseconds(30))
        #expect(batcher.takeIfDue(at: start.advanced(by: .milliseconds(49))) == nil)
        #expect(batcher.timeUntilDue(at: start.advanced(by: .seconds(1))) == .zero)
        #expect(batcher.takeIfDue(at: start.advanced(by: .milliseconds(50)))?.count == 1)
        #expect(MonotonicClock.pollTimeout(nil) == -1)
        #expect(MonotonicClock.pollTimeout(.microseconds(1)) == 1, "rounded up: a wait never ends before the deadline")
        #expect(MonotonicClock.pollTimeout(.seconds(86_400 * 365)) == CInt.max)
    }

    @Test("instants saturate instead of wrapping or trapping, both ways")
    func instantArithmetic() {
        let origin = MonotonicClock.Instant(nanoseconds: 10)
        #expect(origin.advanced(by: .nanoseconds(-20)) == MonotonicClock.Instant(nanoseconds: 0))
        #expect(origin.advanced(by: .seconds(Int64.max)) == MonotonicClock.Instant(nanoseconds: .max))
        #expect(origin.advanced(by: .milliseconds(-1500)) == MonotonicClock.Instant(nanoseconds: 0))
        let later = origin.advanced(by: .milliseconds(1500))
        #expect(origin.duration(to: later) == .milliseconds(1500))
        #expect(later.duration(to: origin) == .milliseconds(-1500))
        #expect(later.advanced(by: .milliseconds(-1500)) == origin)
        let clock = MonotonicClock()
        #expect(clock.now <= clock.now, "monotonic")
    }
}
