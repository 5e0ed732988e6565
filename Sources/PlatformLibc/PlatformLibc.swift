// The C library of the platform, in one place: every module of the package imports this
// instead of repeating the `#if canImport(Glibc)` ladder in each file.
#if canImport(Glibc)
@_exported public import Glibc
#elseif canImport(Musl)
@_exported public import Musl
#elseif canImport(Darwin)
@_exported public import Darwin
#endif
