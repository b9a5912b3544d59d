/* sim_disk.c: pending writes, sync latency, crash with dropped or torn writes; see sim_disk.h. */
#include "sim_disk.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SIM_DISK_PENDING_FIRST 16u

int sim_disk_init(sim_disk *disk, size_t size, uint64_t sync_ns, sim_disk_crash crash_mode) {
    memset(disk, 0, sizeof *disk);
    disk->image = calloc(size ? size : 1, 1);
    if (disk->image == NULL) return -1;
    disk->size = size;
    disk->sync_ns = sync_ns;
    disk->crash_mode = crash_mode;
    return 0;
}

static void drop_pending(sim_disk *disk) {
    for (size_t i = 0; i < disk->pending_count; i++) free(disk->pending[i].data);
    disk->pending_count = 0;
}

void sim_disk_free(sim_disk *disk) {
    drop_pending(disk);
    free(disk->pending);
    free(disk->image);
    memset(disk, 0, sizeof *disk);
}

/* Copies len bytes at offset into the image, cut at the end of the file. */
static void apply(sim_disk *disk, uint64_t offset, const uint8_t *data, size_t len) {
    if (offset >= disk->size) {
        if (len) disk->out_of_range++;
        return;
    }
    if (len > disk->size - offset) {
        len = (size_t)(disk->size - offset);
        disk->out_of_range++;
    }
    memcpy(disk->image + offset, data, len);
    if (len) disk->exists = 1;
}

int sim_disk_write(sim_disk *disk, uint64_t now_ns, uint64_t offset, const uint8_t *data, size_t len,
                   uint64_t token, uint64_t *done_ns) {
    if (disk->pending_count == disk->pending_capacity) {
        size_t cap = disk->pending_capacity ? disk->pending_capacity * 2 : SIM_DISK_PENDING_FIRST;
        sim_disk_pending *p = realloc(disk->pending, cap * sizeof *p);
        if (p == NULL) return -1;
        disk->pending = p;
        disk->pending_capacity = cap;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) return -1;
    memcpy(copy, data, len);
    /* Writes complete in order: none before the one queued ahead of it. */
    uint64_t done = now_ns + disk->sync_ns;
    if (disk->pending_count > 0) {
        uint64_t ahead = disk->pending[disk->pending_count - 1].done_ns;
        if (done < ahead) done = ahead;
    }
    disk->pending[disk->pending_count++] = (sim_disk_pending){offset, copy, len, token, done};
    disk->writes++;
    disk->bytes_written += len;
    *done_ns = done;
    return 0;
}

int sim_disk_complete(sim_disk *disk, uint64_t now_ns, uint64_t *token) {
    if (disk->pending_count == 0 || disk->pending[0].done_ns > now_ns) return 0;
    sim_disk_pending w = disk->pending[0];
    apply(disk, w.offset, w.data, w.len);
    free(w.data);
    memmove(disk->pending, disk->pending + 1, (disk->pending_count - 1) * sizeof *disk->pending);
    disk->pending_count--;
    disk->completed++;
    *token = w.token;
    return 1;
}

uint64_t sim_disk_sync_failed(sim_disk *disk, sim_rng *rng) {
    uint64_t whole = 0;
    for (size_t i = 0; i < disk->pending_count; i++) {
        const sim_disk_pending *w = &disk->pending[i];
        const uint64_t fate = sim_rng_below(rng, 3);
        if (fate == 0) continue;
        const size_t keep = fate == 1 ? w->len : (size_t)sim_rng_upto(rng, w->len);
        apply(disk, w->offset, w->data, keep);
        if (keep == w->len) whole++;
        else disk->torn++;
    }
    disk->dropped += disk->pending_count - whole;
    drop_pending(disk);
    return whole;
}

void sim_disk_crash_now(sim_disk *disk, sim_rng *rng) {
    if (disk->pending_count > 0 && disk->crash_mode != SIM_DISK_CRASH_DROP) {
        const sim_disk_pending *w = disk->crash_mode == SIM_DISK_CRASH_TEAR_LAST
                                      ? &disk->pending[disk->pending_count - 1]
                                      : &disk->pending[0];
        size_t keep = (size_t)sim_rng_upto(rng, w->len);
        apply(disk, w->offset, w->data, keep);
        disk->torn++;
    }
    disk->dropped += disk->pending_count;
    drop_pending(disk);
}
