#ifndef C_FILE_SYSTEM_EVENTS_SHIMS_H
#define C_FILE_SYSTEM_EVENTS_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <dirent.h>

/// The subset of `statx` that a snapshot keeps, in a layout Swift can import on every platform.
/// `has_birth_time` is 0 where the file system does not record birth time. `is_mount_root` is 1
/// for the root of a mount (`STATX_ATTR_MOUNT_ROOT`, Linux 5.8 and later), a bind mount's
/// included; 0 otherwise and wherever it cannot be told.
typedef struct {
    uint64_t device;
    uint64_t inode;
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
    uint32_t link_count;
    int64_t size;
    int64_t modification_seconds;
    int64_t change_seconds;
    int64_t birth_seconds;
    uint32_t modification_nanoseconds;
    uint32_t change_nanoseconds;
    uint32_t birth_nanoseconds;
    uint32_t has_birth_time;
    uint32_t is_mount_root;
} cfse_status;

/// `statx` (Linux) or `fstatat` (elsewhere) relative to `directory_fd`.
/// Returns 0, or -1 with errno set. `follow` is 0 to report a symlink itself.
int cfse_status_at(int directory_fd, const char *name, int follow, cfse_status *out);

/// `statx`'s mount ID (`STATX_MNT_ID`, Linux 5.8 and later) of `name` relative to
/// `directory_fd`, a final symlink not followed, with the item's device and inode: two paths
/// that show one directory are two mounts of it only if their mount IDs differ. Returns 0, or
/// -1 with errno set. The mount ID is 0 where the kernel (before Linux 5.8) or the platform
/// cannot tell the mount; the device and inode are set then too.
int cfse_mount_id_at(int directory_fd, const char *name, uint64_t *mount_id, uint64_t *device, uint64_t *inode);

/// `pipe2(O_CLOEXEC | O_NONBLOCK)`, emulated with fcntl where pipe2 does not exist.
int cfse_pipe_cloexec_nonblock(int fds[2]);

/// `statfs(2)`'s `f_type` (the file system's magic number) for `path`, or -1 with errno set.
/// Zero where the platform has no such number.
int64_t cfse_file_system_magic(const char *path);

/// `renameat2(RENAME_EXCHANGE)`: swaps two paths atomically. -1 with errno set (ENOSYS or
/// EINVAL where the kernel or file system cannot).
int cfse_exchange(const char *first, const char *second);

/// Bytes waiting to be read on `fd` (`ioctl(FIONREAD)`), or -1 with errno set.
int cfse_bytes_waiting(int fd);

/// `unshare(CLONE_FS)`: the calling thread gets a working directory of its own. -1 with errno
/// set (ENOSYS where there is no such call).
int cfse_unshare_working_directory(void);

/// A 64-bit hash of `count` bytes, a word at a time: the test harness hashes every file a
/// consumer reads, some of hundreds of MiB, in debug builds where a Swift loop per byte is
/// far too slow. Not cryptographic; equal content gives equal hashes.
uint64_t cfse_content_hash(const void *bytes, size_t count);

/// Hands freed heap memory back to the kernel (glibc's `malloc_trim(0)`, which Swift's Glibc
/// module does not export); does nothing elsewhere. Returns 1 if memory was released.
int cfse_release_free_memory(void);

/// The processors this thread may run on (`sched_getaffinity`, which a container's or
/// `taskset`'s restriction narrows), fewer under a cgroup v2 CPU quota (`cpu.max`, whole
/// processors), or the online count where neither is known.
int cfse_usable_processors(void);

/// The size of the calling thread's stack in bytes (`pthread_getattr_np`, a GNU extension;
/// the main thread's is its resource limit), 0 where it cannot be told.
size_t cfse_current_stack_size(void);

/// `lgetxattr`/`lsetxattr` (never following a final symlink), or with `follow` `getxattr`/
/// `setxattr` (for a `/proc/self/fd` magic link); -1 with errno on failure. `create_only`
/// fails with EEXIST where the attribute exists already.
long cfse_get_xattr(const char *path, const char *name, void *value, size_t size, int follow);
int cfse_set_xattr(const char *path, const char *name, const void *value, size_t size, int create_only, int follow);

/// Reads the next batch of entries of the directory open at `fd` into `buffer` (Linux's
/// `getdents64`): the number of bytes filled, 0 at the end, or -1 with errno set. ENOSYS where
/// the platform has no such call (the caller then lists with `readdir`).
long cfse_read_directory_entries(int fd, void *buffer, size_t size);

/// One record of a `getdents64` batch, as the kernel lays it out (`struct linux_dirent64`).
typedef struct {
    uint64_t inode;
    int64_t next_offset;
    unsigned short record_length;
    unsigned char type;
    char name[];
} cfse_directory_record;

/// The record at `offset` of a batch that ``cfse_read_directory_entries`` filled.
static inline const cfse_directory_record *cfse_directory_record_at(const void *buffer, long offset) {
    return (const cfse_directory_record *)((const char *)buffer + offset);
}

/// The NUL-terminated name of a batch record (Swift does not import a flexible array member).
static inline const char *cfse_directory_record_name(const cfse_directory_record *record) {
    return record->name;
}

/// The name of a directory entry (Swift imports `d_name` as a tuple).
static inline const char *cfse_dirent_name(const struct dirent *entry) {
    return entry->d_name;
}

/// The entry's `d_type`, or DT_UNKNOWN.
static inline unsigned char cfse_dirent_type(const struct dirent *entry) {
    return entry->d_type;
}

#endif
