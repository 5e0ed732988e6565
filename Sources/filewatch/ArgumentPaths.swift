import FileSystemEvents
import PlatformLibc
import ArgumentParser

extension FilePath {
    /// The path a command-line argument names, byte for byte.
    ///
    /// The argument parser hands arguments over as `String`, and the standard library decodes
    /// `argv` with invalid UTF-8 replaced by U+FFFD, so `mkdir $'r\xff'; filewatch watch r\xff`
    /// asked for a path that does not exist ("r�"). Where the text holds a replacement
    /// character, the argument it came from is found again in the raw `argv` (whole, or after
    /// the `=` of `--option=value`) and its bytes are taken as they are.
    init(argument: String) {
        guard argument.unicodeScalars.contains("\u{FFFD}") else {
            self.init(argument)
            return
        }
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: raw, count: strlen(raw))).map { UInt8(bitPattern: $0) }
            if String(decoding: bytes, as: UTF8.self) == argument {
                self.init(bytes: bytes)
                return
            }
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")), bytes.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) {
                let value = Array(bytes[(equals + 1)...])
                if String(decoding: value, as: UTF8.self) == argument {
                    self.init(bytes: value)
                    return
                }
            }
        }
        self.init(argument)
    }
}

/// `--backend NAME`, checked by its flag's name: the configuration layer that chooses the
/// backend names the key it read (`filewatch.backend (FILEWATCH_BACKEND)`), which is the wrong
/// thing to fix for a user who typed the flag.
func validateBackendFlag(_ name: String?) throws {
    guard let name else { return }
    if FileSystemEventBackend(rawValue: name.lowercased()) != nil || FileSystemEventBackendRegistry.shared.backend(named: name) != nil {
        return
    }
    let known = FileSystemEventBackendRegistry.shared.knownNames.joined(separator: ", ")
    throw ValidationError("invalid value '\(name)' for --backend: expected one of \(known)")
}
