/* driver_store.c: the store of pl_store.h as the driver's durable side (pl_driver.h). */
#include "pl_driver.h"
#include "pl_store.h"

static int store_event(void *ctx, pure_link *pl, const pure_link_event *ev, uint64_t now_ns, int *refused, char *err,
                       size_t err_len) {
    pl_store_stats before, after;
    pl_store_stats_get(ctx, &before);
    int r = pl_store_event(ctx, pl, ev, now_ns, err, err_len);
    pl_store_stats_get(ctx, &after);
    *refused = after.streams_refused > before.streams_refused;
    return r;
}

static int store_pending(void *ctx) { return pl_store_pending(ctx); }

static int store_begin(void *ctx, int *fds, size_t fds_most, size_t *dirs) {
    return pl_store_commit_begin(ctx, fds, fds_most, dirs);
}

static int store_end(void *ctx, pure_link *pl, int result, uint64_t now_ns, char *err, size_t err_len) {
    return pl_store_commit_end(ctx, pl, result, now_ns, err, err_len);
}

pl_driver_store pl_driver_store_of(struct pl_store *s) {
    return (pl_driver_store){.ctx = s, .event = store_event, .pending = store_pending,
                             .commit_begin = store_begin, .commit_end = store_end};
}
