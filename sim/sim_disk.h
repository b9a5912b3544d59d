/* sim_disk.h: the simulated disk holding one node's memo file.
 *
 * A write (from a MEMO_WRITE event) goes into a list of pending writes; it becomes
 * durable sync_ns later (writes complete in the order given), and only then is the
 * endpoint told (pure_link_memo_written).  The durable image is what survives a crash.
 * At a crash the pending writes are lost; in the tearing modes one of them is torn: a
 * random prefix of it (0..len bytes) reaches the image, as a power cut mid-write would
 * leave it. */
#ifndef SIM_DISK_H
#define SIM_DISK_H

#include <stddef.h>
#include <stdint.h>

#include "sim_rng.h"

typedef enum sim_disk_crash {
    SIM_DISK_CRASH_DROP = 0,       /* unsynced writes vanish */
    SIM_DISK_CRASH_TEAR_LAST = 1,  /* ... except a random prefix of the last one */
    SIM_DISK_CRASH_TEAR_FIRST = 2  /* ... except a random prefix of the first (oldest) one */
} sim_disk_crash;

typedef struct sim_disk_pending {
    uint64_t offset;
    uint8_t *data;   /* owned copy */
    size_t len;
    uint64_t token;
    uint64_t done_ns;
} sim_disk_pending;

typedef struct sim_disk {
    uint8_t *image;          /* durable bytes */
    size_t size;             /* file size (pure_link_memo_size) */
    int exists;              /* 1 once any byte reached the image */
    uint64_t sync_ns;        /* latency of one write until durable */
    sim_disk_crash crash_mode;
    sim_disk_pending *pending; /* FIFO */
    size_t pending_count, pending_capacity;
    uint64_t writes, completed, dropped, torn, bytes_written;
    uint64_t out_of_range;   /* writes beyond the file, cut */
} sim_disk;

/* Returns 0, or -1 if memory ran out. */
int sim_disk_init(sim_disk *disk, size_t size, uint64_t sync_ns, sim_disk_crash crash_mode);
void sim_disk_free(sim_disk *disk);
/* Queues a write; *done_ns is when it will be durable.  Returns 0, or -1 if memory ran out. */
int sim_disk_write(sim_disk *disk, uint64_t now_ns, uint64_t offset, const uint8_t *data, size_t len,
                   uint64_t token, uint64_t *done_ns);
/* Makes the oldest pending write durable if it is due by now_ns: returns 1 with its
 * token, or 0. */
int sim_disk_complete(sim_disk *disk, uint64_t now_ns, uint64_t *token);
/* An fdatasync failed: each pending write reached the image whole, cut (a random prefix) or
 * not at all, a third of the time each (the kernel may have written back or dropped its
 * pages); none is pending after.  Returns how many reached it whole. */
uint64_t sim_disk_sync_failed(sim_disk *disk, sim_rng *rng);
/* A crash: pending writes are dropped (one perhaps torn, drawing from rng). */
void sim_disk_crash_now(sim_disk *disk, sim_rng *rng);

#endif
