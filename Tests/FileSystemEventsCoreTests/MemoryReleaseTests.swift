import FileSystemEventsConformance
import FileSystemEventsCore
import PlatformLibc
import SystemPackage
import Testing

/// Unmapping what start-up mapped of the process's read-only file mappings: only mappings
/// that hold nothing but the file go, and the process runs on (the CLI's every watch then
/// depends on it, so FilewatchCLITests cover the rest).
@Suite struct MemoryReleaseTests {
    @Test("only private, not writable file mappings with no page of their own are chosen")
    func choosesCleanReadOnlyFileMappings() {
        let smaps = """
            00200000-00488000 r--p 00000000 fe:00 5342508                            /opt/filewatch
            Size:               2592 kB
            Rss:                 580 kB
            Anonymous:             0 kB
            VmFlags: rd mr mw me sd
            00488000-010d2000 r-xp 00287000 fe:00 5342508                            /opt/filewatch
            Size:              12584 kB
            Anonymous:             0 kB
            010d2000-01139000 r--p 00ed0000 fe:00 5342508                            /opt/filewatch
            Anonymous:            12 kB
            01139000-01372000 rw-p 00f36000 fe:00 5342508                            /opt/filewatch
            Anonymous:             0 kB
            7f0000000000-7f0000021000 r--p 00000000 00:00 0
            Anonymous:             0 kB
            7f1000000000-7f1000002000 r--p 00000000 fe:00 77                         /usr/lib/locale/C.utf8/LC_CTYPE
            Anonymous:             0 kB
            7f2000000000-7f2000002000 r--s 00000000 fe:00 78                         /dev/shm/shared
            Anonymous:             0 kB
            7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
            Anonymous:             0 kB
            7f3000000000-7f3000004000 r-xp 00000000 fe:00 79                         /usr/lib/libnoanon.so
            Size:                 16 kB
            """
        let mappings = ReadOnlyFileMapping.all(inSmaps: Array(smaps.utf8))
        #expect(mappings == [
            ReadOnlyFileMapping(start: 0x200000, end: 0x488000, anonymousKiB: 0),
            ReadOnlyFileMapping(start: 0x488000, end: 0x10d2000, anonymousKiB: 0),
            ReadOnlyFileMapping(start: 0x10d2000, end: 0x1139000, anonymousKiB: 12),
            ReadOnlyFileMapping(start: 0x7f1000000000, end: 0x7f1000002000, anonymousKiB: 0),
            // No `Anonymous:` line: taken to hold pages of its own, so left alone.
            ReadOnlyFileMapping(start: 0x7f3000000000, end: 0x7f3000004000, anonymousKiB: Int.max),
        ])
    }

    @Test("this process's code is unmapped and mapped back as it runs")
    func unmapsAndRunsOn() throws {
        #if os(Linux)
        func residentFileKiB() -> Int? {
            guard case .bytes(let status)? = try? WholeFile.read(FilePath("/proc/self/status")) else { return nil }
            let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("RssFile:") }
            return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) }
        }
        let before = try #require(residentFileKiB())
        let released = MemoryRelease.unmapStartUpFilePages()
        let after = try #require(residentFileKiB())
        // The test binary's own code is megabytes, most of it not run since start-up.
        #expect(released > 1 << 20)
        #expect(after < before)
        // And code unmapped a moment ago still runs: a scratch tree made and listed.
        let tree = try ScratchTree()
        try tree.write(RelativePath("file"))
        #expect(try FileTreeSnapshot.scan(tree.root).entryCount >= 1)
        #endif
    }
}
