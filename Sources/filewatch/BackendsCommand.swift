import ArgumentParser
import FileSystemEvents

/// `filewatch backends`: what can run here, and what to do about what cannot.
struct BackendsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backends",
        abstract: "List the backends, whether each is available here, and why not."
    )

    @Option(help: "Output format: text or json.")
    var format: WatchCommand.OutputFormat = .text

    func run() async throws {
        let here = WatchOptions.absolute(FilePath("."))
        let autoChoice = FileSystemEventBackend.auto.resolved(for: [here])
        var lines: [String] = []
        if format == .json {
            for backend in FileSystemEventBackend.allCases {
                var fields: [(String, JSONValue)] = [("name", .string(backend.rawValue))]
                switch backend.availability {
                case .available:
                    fields.append(("available", .bool(true)))
                case .unavailable(let reason, let remedy):
                    fields.append(("available", .bool(false)))
                    fields.append(("reason", .string(reason)))
                    fields.append(("remedy", .string(remedy)))
                }
                if backend == .auto { fields.append(("resolvesTo", .string(autoChoice.rawValue))) }
                if let capabilities = backend.capabilities { fields.append(("capabilities", .string(capabilities.description))) }
                lines.append(JSONValue.object(fields).encoded())
            }
        } else {
            let width = FileSystemEventBackend.allCases.map(\.rawValue.count).max() ?? 8
            for backend in FileSystemEventBackend.allCases {
                let name = backend.rawValue.padding(to: width)
                switch backend.availability {
                case .available:
                    let detail = backend == .auto
                        ? "picks \(autoChoice.rawValue) for the current directory"
                        : backend.capabilities?.description ?? ""
                    lines.append("\(name)  available    \(detail)")
                case .unavailable(let reason, let remedy):
                    lines.append("\(name)  unavailable  \(reason); \(remedy)")
                }
            }
        }
        StandardOutput().write(Array((lines.joined(separator: "\n") + "\n").utf8))
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
