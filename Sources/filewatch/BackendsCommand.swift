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

    /// One line of the list: a built-in backend or one registered in this process
    /// (`FileSystemEventBackendRegistry`, for a host that embeds this command).
    struct Row {
        var name: String
        var availability: FileSystemEventBackend.Availability
        var capabilities: FileSystemEventSourceCapabilities?
        var resolvesTo: String?
        var summary: String?
    }

    func run() async throws {
        let here = WatchOptions.absolute(FilePath("."))
        // The registry's preference order, when a host set one, decides what `auto` picks.
        let autoChoice = FileSystemEventBackend.autoChoice(for: [here])
        var rows = FileSystemEventBackend.allCases.map { backend in
            Row(name: backend.rawValue, availability: backend.availability, capabilities: backend.capabilities,
                resolvesTo: backend == .auto ? autoChoice : nil)
        }
        rows += FileSystemEventBackendRegistry.shared.backends.map { backend in
            Row(name: backend.name, availability: backend.availability(), capabilities: backend.capabilities, summary: backend.summary)
        }
        var lines: [String] = []
        if format == .json {
            for row in rows {
                var fields: [(String, JSONValue)] = [("name", .string(row.name))]
                switch row.availability {
                case .available:
                    fields.append(("available", .bool(true)))
                case .unavailable(let reason, let remedy):
                    fields.append(("available", .bool(false)))
                    fields.append(("reason", .string(reason)))
                    fields.append(("remedy", .string(remedy)))
                }
                if let resolvesTo = row.resolvesTo { fields.append(("resolvesTo", .string(resolvesTo))) }
                if let capabilities = row.capabilities { fields.append(("capabilities", .string(capabilities.description))) }
                if let summary = row.summary { fields.append(("registered", .bool(true))); fields.append(("summary", .string(summary))) }
                lines.append(JSONValue.object(fields).encoded())
            }
        } else {
            let width = rows.map(\.name.count).max() ?? 8
            for row in rows {
                let name = row.name.padding(to: width)
                switch row.availability {
                case .available:
                    let detail = row.resolvesTo.map { "picks \($0) for the current directory" }
                        ?? row.summary ?? row.capabilities?.description ?? ""
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
