import FileSystemEvents
import PlatformLibc
import ArgumentParser

/// The command line, decoded without loss.
///
/// The standard library decodes `argv` with every byte that is not UTF-8 replaced by U+FFFD, so
/// `mkdir $'r\xff'; filewatch watch r\xff` asked for a path that does not exist ("r�"), and two
/// names that differ only there (`caf\xe9`, `caf\xe8`) were the same argument. Here each such
/// byte becomes a private-use character of its own (U+F780 + the byte) before the parser sees
/// the arguments, and ``FilePath/init(argument:)`` turns those back into the bytes, so every
/// argument keeps exactly the bytes it had, whichever option or position it lands in.
enum RawArguments {
    /// `argv` without the program name, for the parser. `argc` may be 0: a process can be
    /// started with an empty `argv`, and the statically linked runtime finds `argv` through
    /// `/proc/self/maps`, so it reports none when that cannot be read.
    static let decoded: [String] = (1..<max(1, Int(CommandLine.argc))).map { index in
        guard let raw = CommandLine.unsafeArgv[index] else { return "" }
        return decode(Array(UnsafeBufferPointer(start: raw, count: strlen(raw))).map { UInt8(bitPattern: $0) })
    }

    /// Whether any argument had a byte that is not UTF-8: only then is ``FilePath/init(argument:)``
    /// anything but `FilePath(_:)` (a name that holds those private-use characters itself is
    /// then taken as given).
    static let hasEscapes: Bool = decoded.contains { $0.unicodeScalars.contains(where: isEscape) }

    private static let escapeBase: UInt32 = 0xF780

    static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= escapeBase && scalar.value <= escapeBase + 0xFF
    }

    static func decode(_ bytes: [UInt8]) -> String {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0
            if length > 0, index + length <= bytes.count,
               let text = String(validating: bytes[index..<index + length], as: UTF8.self)
            {
                scalars.append(contentsOf: text.unicodeScalars)
                index += length
            } else {
                scalars.append(Unicode.Scalar(escapeBase + UInt32(lead))!)
                index += 1
            }
        }
        return String(scalars)
    }

    /// The bytes of an argument from ``decoded`` that held a byte that is not UTF-8; `nil`
    /// for one that did not, which is its `String` as it is.
    static func escapedBytes(of argument: String) -> [UInt8]? {
        guard hasEscapes, argument.unicodeScalars.contains(where: isEscape) else { return nil }
        return bytes(of: argument)
    }

    /// The bytes of an argument from ``decoded``.
    static func bytes(of argument: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in argument.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(scalar.value - escapeBase))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }
}

extension FilePath {
    /// The path a command-line argument names, byte for byte (see ``RawArguments``).
    init(argument: String) {
        if let bytes = RawArguments.escapedBytes(of: argument) {
            self.init(bytes: bytes)
        } else {
            self.init(argument)
        }
    }
}

extension PathGlob {
    /// The glob a command-line argument gives, byte for byte (see ``RawArguments``): a pattern
    /// for names that are not UTF-8 (`--include $'caf\xe9*'`) matched nothing, its bytes
    /// having become U+FFFD.
    init(argument: String) {
        if let bytes = RawArguments.escapedBytes(of: argument) {
            self.init(bytes: bytes)
        } else {
            self.init(argument)
        }
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
