// The C library of the platform, in one place: every module of the package imports this
// instead of repeating the `#if canImport(Glibc)` ladder in each file.
#if canImport(Glibc)
@_exported public import Glibc
#elseif canImport(Musl)
@_exported public import Musl
#elseif canImport(Darwin)
@_exported public import Darwin
#endif

/// C functions under a namespace, for code where the bare name means something else: inside a
/// type with a method of the same name (`ScratchTree.write`, a `rename` of the harness) the bare
/// `write(...)` would call the method. Each forwards to a file-scope function below, where the
/// bare name is the C library's whichever module the ladder above imported.
public enum Libc {
    /// `open(2)` without a mode (the variadic C function has no single Swift signature).
    @inlinable
    public static func open(_ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt { cOpen(path, flags) }

    /// `read(2)`.
    @inlinable
    public static func read(_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        cRead(descriptor, buffer, count)
    }

    /// `write(2)`.
    @inlinable
    public static func write(_ descriptor: CInt, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        cWrite(descriptor, buffer, count)
    }

    /// `rename(2)`.
    @inlinable
    public static func rename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
        cRename(source, destination)
    }

    /// `symlink(2)`.
    @inlinable
    public static func symlink(_ target: UnsafePointer<CChar>, _ link: UnsafePointer<CChar>) -> CInt {
        cSymlink(target, link)
    }

    /// `link(2)`.
    @inlinable
    public static func link(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
        cLink(source, destination)
    }
}

// Outside `Libc`, so that each bare name is the C function, not the member that forwards to it.

@usableFromInline func cOpen(_ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt { open(path, flags) }

@usableFromInline func cRead(_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

@usableFromInline func cWrite(_ descriptor: CInt, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

@usableFromInline func cRename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
    rename(source, destination)
}

@usableFromInline func cSymlink(_ target: UnsafePointer<CChar>, _ link: UnsafePointer<CChar>) -> CInt {
    symlink(target, link)
}

@usableFromInline func cLink(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
    link(source, destination)
}
