/// Finds where the last N lines of a file begin, reading backwards from its end in blocks,
/// so starting with `--lines 10` costs a few reads however large the file is.
enum LastLinesLocator {
    static let blockSize = 64 * 1024

    /// The offset of the first byte of the last `count` lines of the first `size` bytes,
    /// counting as `tail -n` does: a final line without a newline is a line.
    static func offset(ofLast count: Int, in descriptor: CInt, size: Int64) -> Int64 {
        guard count > 0 else { return size }
        guard size > 0 else { return 0 }
        let newline = UInt8(ascii: "\n")
        var block = [UInt8](repeating: 0, count: blockSize)
        var end = size
        var newlinesToPass = count
        var isLastByte = true
        while end > 0 {
            let start = max(0, end - Int64(blockSize))
            let length = Int(end - start)
            let read = block.withUnsafeMutableBytes { buffer in
                FollowerSyscalls.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length]), at: start)
            }
            guard case .success(let got) = read, got == length else { return 0 }
            var index = length - 1
            while index >= 0 {
                if block[index] == newline {
                    // The newline that ends the file's last line starts nothing.
                    if !isLastByte {
                        newlinesToPass -= 1
                        if newlinesToPass == 0 { return start + Int64(index) + 1 }
                    }
                }
                isLastByte = false
                index -= 1
            }
            end = start
        }
        return 0
    }
}
