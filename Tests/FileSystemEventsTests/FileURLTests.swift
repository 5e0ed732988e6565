import FileSystemEvents
import FileSystemEventsConformance
import FileSystemEventsFoundation
import Foundation
import Testing

/// The `URL` conveniences: options from file URLs, events' and items' URLs, byte-exact round
/// trips (a name that is not UTF-8, spaces and percent signs), and non-file URLs refused.
@Suite struct FileURLTests {
    @Test("a path survives the round trip through a file URL, whatever its bytes")
    func roundTrip() throws {
        let paths: [FilePath] = [
            "/tmp/plain",
            "/tmp/with space/and%25percent/#hash?query",
            "/tmp/ünïcödé/名前",
            FilePath(platformString: [0x2F, 0x74, 0x6D, 0x70, 0x2F, 0x62, 0x61, 0x64, 0xFF, 0xFE, 0x00].map { CChar(bitPattern: $0) }),
        ]
        for path in paths {
            let url = path.fileURL()
            #expect(url.isFileURL)
            let back = try FilePath(fileURL: url)
            #expect(back == path, "\(path) came back as \(back) from \(url)")
            #expect(try FilePath(fileURL: path.fileURL(isDirectory: true)) == path)
        }
    }

    @Test("a URL that is not a file URL is a typed error that says so")
    func nonFileURL() throws {
        let url = try #require(URL(string: "https://example.com/folder"))
        #expect(throws: FileSystemEventsError.self) { try WatchOptions(urls: [url]) }
        do {
            _ = try WatchOptions(urls: [url])
        } catch {
            #expect(error.description.contains("not a file URL"), "\(error)")
        }
    }

    @Test("options from URLs watch those roots, and events carry URLs")
    func watchByURL() async throws {
        let tree = try ScratchTree()
        try tree.makeDirectory("a folder")
        var options = try WatchOptions(urls: [URL(filePath: tree.path("a folder").string, directoryHint: .isDirectory)])
        #expect(options.roots == [tree.path("a folder")])
        options.pollInterval = .milliseconds(20)
        for backend in availableBackends {
            let name = "\(backend) 100% done.txt"
            let observed = try await observe(backend.makeSource(options: options).updates(), onReady: {
                try tree.write(RelativePath("a folder/\(name)"), "x")
            }, untilEvent: { $0.kind == .created && $0.path.lastComponent?.string == name })
            let event = try #require(observed.events.first { $0.path.lastComponent?.string == name })
            #expect(event.url.lastPathComponent == name)
            #expect(event.url.path(percentEncoded: false) == tree.path(RelativePath("a folder/\(name)")).string)
            #expect(!event.url.hasDirectoryPath)
        }
        let snapshot = try FileTreeSnapshot.scan(tree.root)
        let folder = try #require(snapshot.item(at: tree.path("a folder")))
        #expect(folder.url.hasDirectoryPath)
    }
}
