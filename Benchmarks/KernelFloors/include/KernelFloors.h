#ifndef KERNEL_FLOORS_H
#define KERNEL_FLOORS_H

/// The polling floor: lists the directory open at `directory_fd` with `getdents64` and examines
/// every entry with `fstatat`, recursively, doing nothing else. Returns the number of entries
/// examined. The benchmark package runs it beside the polling scan on the same tree, and
/// scripts/peers/floor.c (`floor walk`) beside the peers, so both divide by the same code.
long kernel_floor_walk(int directory_fd);

#endif
