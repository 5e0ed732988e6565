import PlatformLibc
import FileSystemEventsCore

extension ConformanceSuite {
    static let nameScenarios: [ConformanceScenario] = [
        ConformanceScenario(25, "names with spaces, newlines, non-ASCII and invalid UTF-8, reported losslessly") { context in
            let watch = try await context.watch()
            let names: [RelativePath] = [
                "with space.txt",
                "new\nline.txt",
                "snow☃man.txt",
                RelativePath(bytes: [0x62, 0x61, 0x64, 0xFF, 0xFE, 0x2E, 0x62, 0x69, 0x6E]),  // "bad\xff\xfe.bin"
            ]
            for name in names { try context.tree.write(name, "x") }
            let odd = RelativePath(bytes: [0x64, 0x69, 0x72, 0xC3, 0x28])  // "dir\xc3(" (truncated sequence)
            try context.tree.makeDirectory(odd)
            try context.tree.write(odd / "inner file.txt", "y")
            try await watch.sync()
            for name in names { try watch.expect(.created, name, type: .file) }
            try watch.expect(.created, odd, type: .directory)
            try watch.expect(.created, odd / "inner file.txt", type: .file)
            let renamed = RelativePath(bytes: [0xE2, 0x98, 0x83, 0x80, 0x0A])
            try context.tree.rename(names[3], to: renamed)
            try await watch.sync()
            try watch.expectRename(from: names[3], to: renamed)
            try watch.assertReplayMatchesDisk()
        },
        ConformanceScenario(26, "an unreadable subdirectory is reported once and skipped", runsUnprivileged: true) { context in
            guard geteuid() != 0 else {
                throw ConformanceSkip(
                    "running as root: CAP_DAC_READ_SEARCH lets root list any directory, so the kernel cannot make one unreadable; "
                        + "scripts/test.sh runs this scenario again as an unprivileged user"
                )
            }
            try context.tree.makeDirectories("locked/inner")
            try context.tree.write("locked/inner/secret.txt", "s")
            try context.tree.makeDirectories("closed")
            try context.tree.changeMode("closed", to: 0o000)
            let watch = try await context.watch()
            try check(watch.diagnostics.contains { $0.problem == .unreadableDirectory && $0.path == context.tree.path("closed") },
                      "no diagnostic for the unreadable directory 'closed': \(watch.diagnostics)")
            try context.tree.changeMode("locked", to: 0o000)
            try context.tree.write("open.txt", "o")
            try await watch.sync()
            try context.tree.append("open.txt", "more")
            try await watch.sync()
            try watch.expect(.created, "open.txt")
            try watch.expectNothing(within: "locked/inner")
            try watch.expectNo(.removed, "locked")
            let reports = watch.diagnostics.filter { $0.path == context.tree.path("locked") }.count
            try check(reports <= 1, "the unreadable directory was reported \(reports) times")
            try context.tree.changeMode("locked", to: 0o755)
            try context.tree.changeMode("closed", to: 0o755)
            try context.tree.write("locked/inner/after.txt", "a")
            try await watch.sync()
            try watch.expect(.created, "locked/inner/after.txt")
            try watch.assertReplayMatchesDisk()
        },
    ]
}
