// Host apps import one module: the contract and every built-in backend.
@_exported public import FileSystemEventsCore
@_exported public import FileSystemEventsApps
@_exported public import FileSystemEventsPolling
@_exported public import SystemPackage
#if os(Linux)
@_exported public import FileSystemEventsInotify
#endif
