import FileSystemEventsCore
import Testing

/// The glob matcher on names and root-relative paths, over raw bytes.
@Suite struct PathGlobTests {
    struct Case: Sendable, CustomStringConvertible {
        var pattern: String
        var path: String
        var matches: Bool
        var description: String { "\(pattern) ~ \(path) = \(matches)" }
    }

    static func name(of path: String) -> Substring.UTF8View {
        (path.split(separator: "/").last ?? Substring(path)).utf8
    }

    static let cases: [Case] = [
        // Names: a pattern without `/` matches the last component, wherever it is.
        Case(pattern: "*.txt", path: "a.txt", matches: true),
        Case(pattern: "*.txt", path: "dir/sub/a.txt", matches: true),
        Case(pattern: "*.txt", path: "a.txt.bak", matches: false),
        Case(pattern: "a?c", path: "abc", matches: true),
        Case(pattern: "a?c", path: "ac", matches: false),
        Case(pattern: "[abc].md", path: "b.md", matches: true),
        Case(pattern: "[!abc].md", path: "b.md", matches: false),
        Case(pattern: "[!abc].md", path: "d.md", matches: true),
        Case(pattern: "[a-f]1", path: "e1", matches: true),
        Case(pattern: "[a-f]1", path: "g1", matches: false),
        Case(pattern: "\\*", path: "*", matches: true),
        Case(pattern: "\\*", path: "x", matches: false),
        Case(pattern: "*", path: "anything", matches: true),
        Case(pattern: "[unterminated", path: "[unterminated", matches: true),
        // Paths: a pattern with `/` matches the root-relative path; `*` stays in a component.
        Case(pattern: "build/*", path: "build/out", matches: true),
        Case(pattern: "build/*", path: "build/out/deep", matches: false),
        Case(pattern: "build/**", path: "build/out/deep", matches: true),
        Case(pattern: "**/node_modules", path: "node_modules", matches: true),
        Case(pattern: "**/node_modules", path: "a/b/node_modules", matches: true),
        Case(pattern: "**/node_modules", path: "a/node_modules/x", matches: false),
        // `**/` is whole directories: what follows it starts a component.
        Case(pattern: "**/build", path: "prebuild", matches: false),
        Case(pattern: "**/build", path: "x/prebuild", matches: false),
        Case(pattern: "**/build", path: "x/y/build", matches: true),
        Case(pattern: "a/**/d", path: "a/xd", matches: false),
        Case(pattern: "a/**/d", path: "a/skip/skipd", matches: false),
        Case(pattern: "a/**/d", path: "a/d", matches: true),
        Case(pattern: "a/**/d", path: "a/x/y/d", matches: true),
        Case(pattern: "**/src/*.c", path: "mysrc/m.c", matches: false),
        Case(pattern: "**/src/*.c", path: "x/mysrc/m.c", matches: false),
        Case(pattern: "**/src/*.c", path: "x/src/m.c", matches: true),
        Case(pattern: "**/*.o", path: "a/b/c.o", matches: true),
        Case(pattern: "x/a**", path: "x/abc/d", matches: true),
        // A leading `/` anchors at the root, as in `.gitignore`; a trailing `/` is dropped.
        Case(pattern: "/build", path: "build", matches: true),
        Case(pattern: "/build", path: "sub/build", matches: false),
        Case(pattern: "/build/*.o", path: "build/a.o", matches: true),
        Case(pattern: "build", path: "sub/build", matches: true),
        Case(pattern: "sub/", path: "sub", matches: true),
        Case(pattern: "sub/", path: "x/sub", matches: true),
        Case(pattern: "src/**/*.swift", path: "src/a.swift", matches: true),
        Case(pattern: "src/**/*.swift", path: "src/x/y/a.swift", matches: true),
        Case(pattern: "src/**/*.swift", path: "lib/a.swift", matches: false),
        Case(pattern: "/top/", path: "top", matches: true),
        Case(pattern: "a/?", path: "a/b", matches: true),
        Case(pattern: "a?b", path: "a/b", matches: false),
        Case(pattern: "*/*", path: "a/b", matches: true),
        Case(pattern: "*/*", path: "a/b/c", matches: false),
        Case(pattern: "[/]x", path: "a/x", matches: false),
    ]

    @Test(arguments: cases)
    func matches(_ test: Case) {
        let glob = PathGlob(test.pattern)
        #expect(glob.matches(relativePath: test.path.utf8, name: Self.name(of: test.path)) == test.matches)
    }

    @Test("names need not be UTF-8")
    func invalidUTF8() {
        let name: [UInt8] = [0x66, 0xFF, 0xFE, 0x2E, 0x74, 0x78, 0x74]  // f\xFF\xFE.txt
        #expect(PathGlob("*.txt").matches(relativePath: name, name: name))
        #expect(PathGlob("f??.txt").matches(relativePath: name, name: name))
        #expect(!PathGlob("f?.txt").matches(relativePath: name, name: name))
    }

    @Test("a long run of stars does not blow up")
    func pathological() {
        let glob = PathGlob(String(repeating: "*a", count: 20) + "b")
        let text = String(repeating: "a", count: 200)
        #expect(!glob.matches(relativePath: text.utf8, name: text.utf8))
    }
}
