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
/// `write(...)` would call the method. The one place that names the C library module.
public enum Libc {
    /// `open(2)` without a mode (the variadic C function has no single Swift signature).
    @inlinable
    public static func open(_ path: UnsafePointer<CChar>, _ flags: CInt) -> CInt {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #elseif canImport(Musl)
        Musl.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }

    /// `read(2)`.
    @inlinable
    public static func read(_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// `write(2)`.
    @inlinable
    public static func write(_ descriptor: CInt, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
        #else
        Darwin.write(descriptor, buffer, count)
        #endif
    }

    /// `rename(2)`.
    @inlinable
    public static func rename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
        #if canImport(Glibc)
        Glibc.rename(source, destination)
        #elseif canImport(Musl)
        Musl.rename(source, destination)
        #else
        Darwin.rename(source, destination)
        #endif
    }

    /// `symlink(2)`.
    @inlinable
    public static func symlink(_ target: UnsafePointer<CChar>, _ link: UnsafePointer<CChar>) -> CInt {
        #if canImport(Glibc)
        Glibc.symlink(target, link)
        #elseif canImport(Musl)
        Musl.symlink(target, link)
        #else
        Darwin.symlink(target, link)
        #endif
    }

    /// `link(2)`.
    @inlinable
    public static func link(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
        #if canImport(Glibc)
        Glibc.link(source, destination)
        #elseif canImport(Musl)
        Musl.link(source, destination)
        #else
        Darwin.link(source, destination)
        #endif
    }
}
