#define _GNU_SOURCE
#include "include/KernelFloors.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

long kernel_floor_walk(int directory_fd) {
    long entries = 0;
#if defined(__linux__)
    char buffer[65536];
    for (;;) {
        long filled = syscall(SYS_getdents64, directory_fd, buffer, sizeof buffer);
        if (filled <= 0) break;
        for (long offset = 0; offset < filled;) {
            struct dirent64 *entry = (struct dirent64 *)(buffer + offset);
            offset += entry->d_reclen;
            const char *name = entry->d_name;
            if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
            struct stat status;
            if (fstatat(directory_fd, name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
            entries++;
            if (S_ISDIR(status.st_mode)) {
                int child = openat(directory_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (child >= 0) {
                    entries += kernel_floor_walk(child);
                    close(child);
                }
            }
        }
    }
#else
    (void)directory_fd;
#endif
    return entries;
}
