#define _GNU_SOURCE
#include "CFileSystemEventsShims.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__linux__)
#include <sys/vfs.h>
#include <sched.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <pthread.h>

long cfse_read_directory_entries(int fd, void *buffer, size_t size) {
#if defined(__linux__)
    return syscall(SYS_getdents64, fd, buffer, size);
#else
    (void)fd;
    (void)buffer;
    (void)size;
    errno = ENOSYS;
    return -1;
#endif
}

int cfse_status_at(int directory_fd, const char *name, int follow, cfse_status *out) {
#if defined(__linux__)
    struct statx s;
    int flags = AT_STATX_SYNC_AS_STAT | (follow ? 0 : AT_SYMLINK_NOFOLLOW) | AT_NO_AUTOMOUNT;
    if (name[0] == '\0') {
        flags |= AT_EMPTY_PATH;
    }
    if (statx(directory_fd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &s) != 0) {
        return -1;
    }
    out->device = ((uint64_t)s.stx_dev_major << 32) | s.stx_dev_minor;
    out->inode = s.stx_ino;
    out->mode = s.stx_mode;
    out->uid = s.stx_uid;
    out->gid = s.stx_gid;
    out->link_count = s.stx_nlink;
    out->size = (int64_t)s.stx_size;
    out->modification_seconds = s.stx_mtime.tv_sec;
    out->modification_nanoseconds = s.stx_mtime.tv_nsec;
    out->change_seconds = s.stx_ctime.tv_sec;
    out->change_nanoseconds = s.stx_ctime.tv_nsec;
    out->has_birth_time = (s.stx_mask & STATX_BTIME) ? 1 : 0;
    out->birth_seconds = out->has_birth_time ? s.stx_btime.tv_sec : 0;
    out->birth_nanoseconds = out->has_birth_time ? s.stx_btime.tv_nsec : 0;
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
    out->is_mount_root = (s.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (s.stx_attributes & STATX_ATTR_MOUNT_ROOT) ? 1 : 0;
    return 0;
#else
    struct stat s;
    // The status of the descriptor itself: POSIX has no AT_EMPTY_PATH (fstatat with an empty
    // name fails with ENOENT there), so the portable call is fstat.
    int failed = name[0] == '\0'
        ? fstat(directory_fd, &s)
        : fstatat(directory_fd, name, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW);
    if (failed != 0) {
        return -1;
    }
    out->device = (uint64_t)s.st_dev;
    out->inode = (uint64_t)s.st_ino;
    out->mode = s.st_mode;
    out->uid = s.st_uid;
    out->gid = s.st_gid;
    out->link_count = (uint32_t)s.st_nlink;
    out->size = (int64_t)s.st_size;
#if defined(__APPLE__)
    out->modification_seconds = s.st_mtimespec.tv_sec;
    out->modification_nanoseconds = (uint32_t)s.st_mtimespec.tv_nsec;
    out->change_seconds = s.st_ctimespec.tv_sec;
    out->change_nanoseconds = (uint32_t)s.st_ctimespec.tv_nsec;
    out->birth_seconds = s.st_birthtimespec.tv_sec;
    out->birth_nanoseconds = (uint32_t)s.st_birthtimespec.tv_nsec;
    out->has_birth_time = 1;
#else
    out->modification_seconds = s.st_mtim.tv_sec;
    out->modification_nanoseconds = (uint32_t)s.st_mtim.tv_nsec;
    out->change_seconds = s.st_ctim.tv_sec;
    out->change_nanoseconds = (uint32_t)s.st_ctim.tv_nsec;
    out->birth_seconds = 0;
    out->birth_nanoseconds = 0;
    out->has_birth_time = 0;
#endif
    out->is_mount_root = 0;
    return 0;
#endif
}

int cfse_mount_id_at(int directory_fd, const char *name, uint64_t *mount_id, uint64_t *device, uint64_t *inode) {
    *mount_id = 0;
#if defined(__linux__)
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
    struct statx s;
    int flags = AT_STATX_SYNC_AS_STAT | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (name[0] == '\0' ? AT_EMPTY_PATH : 0);
    if (statx(directory_fd, name, flags, STATX_INO | STATX_MNT_ID, &s) == 0) {
        if (s.stx_mask & STATX_MNT_ID) *mount_id = s.stx_mnt_id;
        *device = ((uint64_t)s.stx_dev_major << 32) | s.stx_dev_minor;
        *inode = s.stx_ino;
        return 0;
    }
    if (errno != ENOSYS) return -1;
#endif
    // No `statx` (Linux before 4.11, other platforms): the identity alone, through the same
    // call that ``cfse_status_at`` falls back to, so that the two compare alike.
    cfse_status status;
    if (cfse_status_at(directory_fd, name, 0, &status) != 0) return -1;
    *device = status.device;
    *inode = status.inode;
    return 0;
}

int cfse_pipe_cloexec_nonblock(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
#else
    if (pipe(fds) != 0) {
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fds[i], F_SETFL, O_NONBLOCK) != 0) {
            int saved = errno;
            close(fds[0]);
            close(fds[1]);
            errno = saved;
            return -1;
        }
    }
    return 0;
#endif
}

int64_t cfse_file_system_magic(const char *path) {
#if defined(__linux__)
    struct statfs info;
    if (statfs(path, &info) != 0) {
        return -1;
    }
    return (int64_t)(uint32_t)info.f_type;
#else
    (void)path;
    return 0;
#endif
}

int cfse_exchange(const char *first, const char *second) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, 2 /* RENAME_EXCHANGE */);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cfse_unshare_working_directory(void) {
#if defined(__linux__)
    return unshare(CLONE_FS);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cfse_bytes_waiting(int fd) {
    int count = 0;
    if (ioctl(fd, FIONREAD, &count) != 0) {
        return -1;
    }
    return count;
}

uint64_t cfse_content_hash(const void *bytes, size_t count) {
    const unsigned char *cursor = bytes;
    uint64_t hash = 0xcbf29ce484222325ULL ^ (uint64_t)count;
    size_t index = 0;
    for (; index + 8 <= count; index += 8) {
        uint64_t word;
        memcpy(&word, cursor + index, 8);
        hash = (hash ^ word) * 0x100000001b3ULL;
        hash ^= hash >> 29;
    }
    for (; index < count; index++) {
        hash = (hash ^ cursor[index]) * 0x100000001b3ULL;
    }
    return hash;
}

int cfse_release_free_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

#if defined(__linux__)
#include <sched.h>
#endif

#if defined(__linux__)
/// The processors a cgroup v2 CPU quota (`cpu.max` of this process's own cgroup) allows, in
/// whole processors, or -1 where there is none or it cannot be read.
static int cfse_cgroup_processors(void) {
    char line[4096];
    FILE *membership = fopen("/proc/self/cgroup", "re");
    if (membership == NULL) return -1;
    char *path = NULL;
    while (fgets(line, sizeof(line), membership) != NULL) {
        if (strncmp(line, "0::", 3) == 0) {
            path = line + 3;
            path[strcspn(path, "\n")] = 0;
            break;
        }
    }
    fclose(membership);
    if (path == NULL) return -1;
    char file[4200];
    snprintf(file, sizeof(file), "/sys/fs/cgroup%s/cpu.max", path);
    FILE *limits = fopen(file, "re");
    if (limits == NULL) return -1;
    char quota[32] = {0};
    long period = 0;
    int fields = fscanf(limits, "%31s %ld", quota, &period);
    fclose(limits);
    if (fields != 2 || strcmp(quota, "max") == 0 || period <= 0) return -1;
    long allowed = atol(quota) / period;
    return allowed < 1 ? 1 : (int)allowed;
}
#endif

int cfse_usable_processors(void) {
    int count = 0;
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        count = CPU_COUNT(&set);
    }
    int quota = cfse_cgroup_processors();
    if (quota > 0 && (count == 0 || quota < count)) count = quota;
#endif
    if (count > 0) return count;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

#if defined(__linux__) || defined(__APPLE__)
#include <sys/xattr.h>
#endif

long cfse_get_xattr(const char *path, const char *name, void *value, size_t size, int follow) {
#if defined(__linux__)
    return follow ? (long)getxattr(path, name, value, size) : (long)lgetxattr(path, name, value, size);
#elif defined(__APPLE__)
    return (long)getxattr(path, name, value, size, 0, follow ? 0 : XATTR_NOFOLLOW);
#else
    errno = ENOTSUP;
    return -1;
#endif
}

int cfse_set_xattr(const char *path, const char *name, const void *value, size_t size, int create_only, int follow) {
#if defined(__linux__)
    int flags = create_only ? XATTR_CREATE : 0;
    return follow ? setxattr(path, name, value, size, flags) : lsetxattr(path, name, value, size, flags);
#elif defined(__APPLE__)
    return setxattr(path, name, value, size, 0, (follow ? 0 : XATTR_NOFOLLOW) | (create_only ? XATTR_CREATE : 0));
#else
    errno = ENOTSUP;
    return -1;
#endif
}

size_t cfse_current_stack_size(void) {
#if defined(__GLIBC__)
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    size_t size = 0;
    if (pthread_attr_getstacksize(&attributes, &size) != 0) size = 0;
    pthread_attr_destroy(&attributes);
    return size;
#elif defined(__APPLE__)
    return pthread_get_stacksize_np(pthread_self());
#else
    return 0;
#endif
}
