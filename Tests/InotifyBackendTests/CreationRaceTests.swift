#if os(Linux)
import FileSystemEventsConformance
import ConformanceTestSupport
import FileSystemEventsCore
import FileSystemEventsInotify
import Testing

/// A creation examined while the events after it are still queued can find its name holding
/// something else: an item a queued rename put there (`ln -s x L; mv L S; mv F L` finds F at
/// L), or a newer item of the same name (`mkdir c; mv c d; mkdir c`). The watch waits for a
/// quiet queue before it examines, but not forever. The scenarios whose changes happen
/// beneath queued events, against a kernel that keeps the queue busy past that wait right
/// after each such creation.
/// 98 (two writer threads) among them: against this kernel it lost a directory renamed away
/// and back in about 1 run in 20 until a creation waiting for a rename held back the ones
/// queued after it (2026-11-26).
@Suite(.serialized)
struct CreationRaceTests {
    static let queuedScenarios = scenarios(numberedIn: "FILEWATCH_CREATION_RACE_ONLY", default: [38, 39, 47, 70, 71, 92, 94, 95, 96, 98])

    @Test("scenarios beneath queued events replay exactly when creations are examined before the queue drains",
          arguments: queuedScenarios)
    func creationsExaminedEarly(_ scenario: ConformanceScenario) async throws {
        let backend = ConformanceBackend(name: "inotify, creations examined before the queue drains") { options in
            let delay = Duration.milliseconds(700)
            return TestKernelSource(options: options, backendName: "inotify, reads split after creations, \(delay) behind") { () throws(FileSystemEventsError) in
                try CreationSplitKernel(delay: delay)
            }
        }
        try await run(scenario, against: backend)
    }
}
#endif
