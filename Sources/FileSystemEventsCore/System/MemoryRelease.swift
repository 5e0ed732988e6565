import CFileSystemEventsShims

/// Hands memory the process has freed back to the kernel.
package enum MemoryRelease {
    /// glibc keeps freed memory in its arenas for reuse; `malloc_trim(0)` releases what it can
    /// (whole free pages, anywhere in the heap). Elsewhere this does nothing.
    package static func returnFreedPages() {
        _ = cfse_release_free_memory()
    }
}
