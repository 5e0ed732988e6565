// Kernel floors the comparison divides by, measured on this machine in the same run:
//   latency   write(2) returning -> a blocked read(2) on an inotify descriptor returning
//   addwatch  inotify_add_watch per directory; and again with an fstatat per regular file, the
//             floor of a start-up that learns each file's link count (filewatch's inotify
//             backend does, to watch a file whose other name is out of view)
//   walk      getdents64 + fstatat over a tree, entries per second (one core)
//   watch     the minimal recursive inotify watcher: watches every directory, prints
//             "READY" on stderr, then one "EVENTS|path" line per event on stdout, one
//             write(2) per read(2); the peer that latency, burst and memory divide by
//   mktree    a test tree; create  N empty files in one directory, as fast as one thread can
// Usage: floor latency DIR N | floor addwatch TREE | floor walk TREE | floor watch TREE
//        floor mktree ROOT DIRS FILES | floor create DIR N
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The walk itself is shared with the benchmark package, which runs it beside the polling scan.
#include "../../Benchmarks/KernelFloors/kernel_floor_walk.c"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static volatile double written_at;
static int inotify_fd;

static void *reader(void *arg) {
    double *samples = arg;
    char buf[4096];
    for (int i = 0;; i++) {
        ssize_t n = read(inotify_fd, buf, sizeof buf);
        if (n <= 0) return NULL;
        samples[i] = now() - written_at;
        if (samples[i] < 0) samples[i] = 0;
        if (samples[i + 1] < 0) return NULL;
    }
}

static int latency(const char *dir, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/floor-latency", dir);
    int file = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    inotify_fd = inotify_init1(IN_CLOEXEC);
    inotify_add_watch(inotify_fd, dir, IN_MODIFY);
    double *samples = calloc(n + 1, sizeof(double));
    samples[n] = -1;
    pthread_t thread;
    pthread_create(&thread, NULL, reader, samples);
    for (int i = 0; i < n; i++) {
        usleep(2000);  // let the reader block again: we measure a wake-up, not a drain
        written_at = now();
        if (write(file, "x", 1) != 1) return 1;
    }
    pthread_join(thread, NULL);
    close(file);
    qsort(samples, n, sizeof(double), cmp);
    printf("{\"latency_p50_us\": %.2f, \"latency_p90_us\": %.2f, \"latency_p99_us\": %.2f, \"latency_max_us\": %.2f}\n",
           samples[n / 2] * 1e6, samples[n * 9 / 10] * 1e6, samples[n * 99 / 100] * 1e6, samples[n - 1] * 1e6);
    return 0;
}

static long dirs_seen, entries_seen, files_linked;

static void remember(int wd, const char *path);

// Watches every directory of the tree with `mask`; the watcher (`remembers`) also keeps each
// directory's path by watch descriptor, which the list-and-watch floor does not pay for.
static void walk_watch(int fd_inotify, const char *path, uint32_t mask, int remembers, int stats_files) {
    int wd = inotify_add_watch(fd_inotify, path, mask);
    if (remembers) remember(wd, path);
    dirs_seen++;
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    char child[4096];
    while ((e = readdir(d))) {
        if (stats_files && e->d_type == DT_REG) {
            struct stat st;
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_nlink > 1) files_linked++;
        }
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        walk_watch(fd_inotify, child, mask, remembers, stats_files);
    }
    closedir(d);
}



// The minimal watcher: a directory path per watch descriptor, nothing else.
static char **watch_paths;
static int watch_capacity;

static void remember(int wd, const char *path) {
    if (wd < 0) return;
    if (wd >= watch_capacity) {
        int capacity = watch_capacity ? watch_capacity * 2 : 1024;
        while (capacity <= wd) capacity *= 2;
        watch_paths = realloc(watch_paths, capacity * sizeof(char *));
        memset(watch_paths + watch_capacity, 0, (capacity - watch_capacity) * sizeof(char *));
        watch_capacity = capacity;
    }
    free(watch_paths[wd]);
    watch_paths[wd] = strdup(path);
}

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB | IN_ONLYDIR)


static int watch(const char *root) {
    int fd = inotify_init1(IN_CLOEXEC);
    walk_watch(fd, root, WATCH_MASK, 1, 0);
    fputs("READY\n", stderr);
    fflush(stderr);
    static char buf[65536] __attribute__((aligned(8)));
    static char out[1 << 20];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) return 0;
        size_t used = 0;
        for (ssize_t off = 0; off < n;) {
            struct inotify_event *e = (struct inotify_event *)(buf + off);
            off += sizeof *e + e->len;
            const char *dir = e->wd < watch_capacity && watch_paths[e->wd] ? watch_paths[e->wd] : "?";
            int wrote = snprintf(out + used, sizeof out - used, "%x|%s/%s\n", e->mask, dir, e->len ? e->name : "");
            if (wrote > 0 && (size_t)wrote < sizeof out - used) used += wrote;
            if ((e->mask & IN_ISDIR) && (e->mask & (IN_CREATE | IN_MOVED_TO)) && e->len) {
                char child[4096];
                snprintf(child, sizeof child, "%s/%s", dir, e->name);
                remember(inotify_add_watch(fd, child, WATCH_MASK), child);
            }
        }
        for (size_t done = 0; done < used;) {
            ssize_t w = write(1, out + done, used - done);
            if (w <= 0) return 0;
            done += w;
        }
    }
}

// A tree of DIRS directories (ten per parent, breadth first) with FILES empty files each;
// and N empty files created as fast as one thread can, for the burst figure.
static int mktree(const char *root, long dirs, long files) {
    char **queue = malloc((dirs + 1) * sizeof(char *));
    long head = 0, tail = 0, made = 0;
    queue[tail++] = strdup(root);
    char path[4096];
    while (made < dirs && head < tail) {
        char *parent = queue[head++];
        for (int i = 0; i < 10 && made < dirs; i++) {
            snprintf(path, sizeof path, "%s/d%d", parent, i);
            if (mkdir(path, 0755) != 0) return 1;
            for (long f = 0; f < files; f++) {
                char file[4200];
                snprintf(file, sizeof file, "%s/f%ld", path, f);
                int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd < 0) return 1;
                close(fd);
            }
            queue[tail++] = strdup(path);
            made++;
        }
    }
    return 0;
}

static int create_files(const char *dir, long n) {
    char path[4096];
    double start = now();
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/burst-%ld", dir, i);
        int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return 1;
        close(fd);
    }
    printf("{\"create_seconds\": %.4f, \"files\": %ld}\n", now() - start, n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 5 && !strcmp(argv[1], "mktree")) return mktree(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc >= 4 && !strcmp(argv[1], "create")) return create_files(argv[2], atol(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "watch")) return watch(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "latency")) return latency(argv[2], atoi(argv[3]));
    // Five rounds each; the median is reported, like every other figure in the comparison.
    if (argc >= 3 && !strcmp(argv[1], "addwatch")) {
        double rounds[2][5];
        for (int stats_files = 0; stats_files < 2; stats_files++) {
            for (int round = 0; round < 5; round++) {
                dirs_seen = 0;
                int fd = inotify_init1(IN_CLOEXEC);
                double start = now();
                walk_watch(fd, argv[2], IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR, 0, stats_files);
                rounds[stats_files][round] = now() - start;
                close(fd);
            }
            qsort(rounds[stats_files], 5, sizeof(double), cmp);
        }
        printf("{\"list_and_watch_seconds\": %.4f, \"directories\": %ld, \"addwatch_us_per_directory\": %.2f, "
               "\"list_watch_and_stat_seconds\": %.4f, \"files_linked\": %ld}\n",
               rounds[0][2], dirs_seen, rounds[0][2] / dirs_seen * 1e6, rounds[1][2], files_linked / 5);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "walk")) {
        double rounds[5];
        for (int round = 0; round < 5; round++) {
            int fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            double start = now();
            entries_seen = kernel_floor_walk(fd);
            rounds[round] = now() - start;
            close(fd);
        }
        qsort(rounds, 5, sizeof(double), cmp);
        printf("{\"walk_seconds\": %.4f, \"entries\": %ld, \"entries_per_second\": %.0f}\n",
               rounds[2], entries_seen, entries_seen / rounds[2]);
        return 0;
    }
    fprintf(stderr, "usage: floor latency DIR N | floor addwatch TREE | floor walk TREE | floor watch TREE\n"
                    "       floor mktree ROOT DIRS FILES | floor create DIR N\n");
    return 2;
}
