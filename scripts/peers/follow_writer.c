// A log writer for the follow benchmark (scripts/follow-vs-tail.sh), as fast as C allows.
//
//   follow_writer append FILE BYTES CHUNK          append BYTES in CHUNK-byte writes
//   follow_writer rotate FILE ROTATIONS LINES US   ROTATIONS times: LINES numbered lines,
//                                                  rename FILE to FILE.1, one more line to the
//                                                  renamed file, reopen FILE; US µs between
//   follow_writer latency FILE SAMPLES PIPE        SAMPLES times: append one line to FILE and
//                                                  time until the follower, whose stdout is the
//                                                  FIFO PIPE, has printed it
//
// append and rotate print the number of bytes written on stdout; latency prints the median and
// the 99th percentile in microseconds ("p50 P99").
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long total = 0;
/// FOLLOW_WRITER_MIRROR names a file that receives a copy of every byte, in the order written:
/// what a lossless follower prints.
static int mirror = -1;

static void write_all(int fd, const char *buffer, size_t length) {
    if (mirror >= 0 && write(mirror, buffer, length) != (ssize_t)length) { perror("mirror"); exit(1); }
    while (length > 0) {
        ssize_t done = write(fd, buffer, length);
        if (done < 0) { perror("write"); exit(1); }
        buffer += done;
        length -= (size_t)done;
        total += done;
    }
}

static int open_log(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) { perror("open"); exit(1); }
    return fd;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/// Reads the follower's output until `lines` more newlines have come.
static void read_lines(int pipe_fd, int lines) {
    char buffer[4096];
    while (lines > 0) {
        ssize_t n = read(pipe_fd, buffer, sizeof buffer);
        if (n <= 0) { fprintf(stderr, "follow_writer: the follower's output ended\n"); exit(1); }
        for (ssize_t i = 0; i < n; i++) if (buffer[i] == '\n') lines--;
    }
}

static int compare_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/// Append-to-stdout latency: one line at a time, each timed from just before its write(2) to
/// the follower's output of it, read from the same kind of pipe a script reads.
static int measure_latency(const char *path, int samples, const char *pipe_path) {
    int fd = open_log(path);
    int pipe_fd = open(pipe_path, O_RDONLY | O_CLOEXEC);
    if (pipe_fd < 0) { perror("open pipe"); exit(1); }
    // The first line proves the follower is attached (it follows from the first byte).
    write_all(fd, "warm-up\n", 8);
    read_lines(pipe_fd, 1);
    long long *took = calloc((size_t)samples, sizeof *took);
    char line[64];
    for (int i = 0; i < samples; i++) {
        int n = snprintf(line, sizeof line, "sample %d\n", i);
        long long start = now_ns();
        write_all(fd, line, (size_t)n);
        read_lines(pipe_fd, 1);
        took[i] = now_ns() - start;
        usleep(2000);  // apart, so each sample is a wake-up of its own
    }
    qsort(took, (size_t)samples, sizeof *took, compare_ll);
    printf("%.1f %.1f\n", took[samples / 2] / 1000.0, took[(samples * 99) / 100] / 1000.0);
    close(fd);
    close(pipe_fd);
    return 0;
}

int main(int argc, char **argv) {
    const char *mirror_path = getenv("FOLLOW_WRITER_MIRROR");
    if (mirror_path) mirror = open(mirror_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (argc == 5 && strcmp(argv[1], "append") == 0) {
        long long bytes = atoll(argv[3]);
        size_t chunk = (size_t)atoll(argv[4]);
        char *buffer = malloc(chunk);
        for (size_t i = 0; i < chunk; i++) buffer[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
        int fd = open_log(argv[2]);
        while (total < bytes) {
            size_t n = (size_t)(bytes - total) < chunk ? (size_t)(bytes - total) : chunk;
            write_all(fd, buffer, n);
        }
        close(fd);
    } else if (argc == 6 && strcmp(argv[1], "rotate") == 0) {
        int rotations = atoi(argv[3]), lines = atoi(argv[4]), pause = atoi(argv[5]);
        char rotated[4096], line[128];
        snprintf(rotated, sizeof rotated, "%s.1", argv[2]);
        int fd = open_log(argv[2]);
        for (int r = 0; r < rotations; r++) {
            for (int l = 0; l < lines; l++) {
                int n = snprintf(line, sizeof line, "generation %d line %d\n", r, l);
                write_all(fd, line, (size_t)n);
            }
            if (rename(argv[2], rotated) != 0) { perror("rename"); exit(1); }
            int n = snprintf(line, sizeof line, "generation %d after rename\n", r);
            write_all(fd, line, (size_t)n);
            close(fd);
            fd = open_log(argv[2]);
            if (pause > 0) usleep((useconds_t)pause);
        }
        int n = snprintf(line, sizeof line, "done\n");
        write_all(fd, line, (size_t)n);
        close(fd);
    } else if (argc == 5 && strcmp(argv[1], "latency") == 0) {
        int samples = atoi(argv[3]);
        if (samples < 1) { fprintf(stderr, "follow_writer: SAMPLES must be at least 1\n"); return 2; }
        return measure_latency(argv[2], samples, argv[4]);
    } else {
        fprintf(stderr, "usage: follow_writer append FILE BYTES CHUNK | rotate FILE ROTATIONS LINES US | latency FILE SAMPLES PIPE\n");
        return 2;
    }
    printf("%lld\n", total);
    return 0;
}
