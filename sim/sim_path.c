/* sim_path.c: loss, duplication, corruption, bottleneck, delay and jitter; see sim_path.h. */
#include "sim_path.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SIM_PATH_FIFO_FIRST 64u /* queue slots at first use; doubles after */
#define NS_PER_S 1000000000ull

void sim_path_params_default(sim_path_params *params) {
    memset(params, 0, sizeof *params);
    params->overhead_bytes = SIM_PATH_OVERHEAD_DEFAULT;
}

static const char *const path_field_names[SIM_PF_COUNT] = {
    "rate", "queue", "delay", "jitter", "loss", "ge_p", "ge_r", "ge_loss_good", "ge_loss_bad",
    "dup", "corrupt", "overhead", "mtu"};

const char *sim_path_field_name(sim_path_field field) {
    return field < SIM_PF_COUNT ? path_field_names[field] : "?";
}

void sim_path_params_apply(sim_path_params *pp, sim_path_field field, uint64_t v) {
    switch (field) {
    case SIM_PF_RATE: pp->rate_bps = v; break;
    case SIM_PF_QUEUE: pp->queue_bytes = v; break;
    case SIM_PF_DELAY: pp->delay_ns = v; break;
    case SIM_PF_JITTER: pp->jitter_ns = v; break;
    case SIM_PF_LOSS: pp->loss_ppb = (uint32_t)v; break;
    case SIM_PF_GE_P: pp->ge_p_ppb = (uint32_t)v; break;
    case SIM_PF_GE_R: pp->ge_r_ppb = (uint32_t)v; break;
    case SIM_PF_GE_LOSS_GOOD: pp->ge_loss_good_ppb = (uint32_t)v; break;
    case SIM_PF_GE_LOSS_BAD: pp->ge_loss_bad_ppb = (uint32_t)v; break;
    case SIM_PF_DUP: pp->dup_ppb = (uint32_t)v; break;
    case SIM_PF_CORRUPT: pp->corrupt_ppb = (uint32_t)v; break;
    case SIM_PF_OVERHEAD: pp->overhead_bytes = (uint32_t)v; break;
    case SIM_PF_MTU: pp->mtu_bytes = (uint32_t)v; break;
    case SIM_PF_COUNT: break;
    }
}

/* The drop-tail limit: as given, or one bandwidth-delay product of the round trip. */
static uint64_t queue_limit(const sim_path_params *p, uint64_t reverse_delay_ns) {
    if (p->queue_bytes) return p->queue_bytes;
    if (p->rate_bps == 0) return UINT64_MAX;
    unsigned __int128 bdp = (unsigned __int128)p->rate_bps * (p->delay_ns + reverse_delay_ns) /
                            (8 * (unsigned __int128)NS_PER_S);
    uint64_t q = bdp > UINT64_MAX ? UINT64_MAX : (uint64_t)bdp;
    return q < SIM_PATH_QUEUE_BYTES_LEAST ? SIM_PATH_QUEUE_BYTES_LEAST : q;
}

void sim_path_init(sim_path *path, const sim_path_params *params, uint64_t reverse_delay_ns,
                   uint64_t run_seed, const char *label) {
    memset(path, 0, sizeof *path);
    sim_rng_derive(&path->rng, run_seed, label);
    sim_path_set(path, params, reverse_delay_ns);
}

void sim_path_free(sim_path *path) {
    free(path->fifo);
    path->fifo = NULL;
    path->fifo_count = path->fifo_capacity = path->fifo_head = 0;
}

void sim_path_set(sim_path *path, const sim_path_params *params, uint64_t reverse_delay_ns) {
    assert(params->loss_ppb <= SIM_PPB_ONE && params->dup_ppb <= SIM_PPB_ONE);
    assert(params->corrupt_ppb <= SIM_PPB_ONE && params->ge_p_ppb <= SIM_PPB_ONE);
    assert(params->ge_r_ppb <= SIM_PPB_ONE && params->ge_loss_bad_ppb <= SIM_PPB_ONE);
    assert(params->ge_loss_good_ppb <= SIM_PPB_ONE);
    if (params->rate_bps != path->params.rate_bps) path->busy_rem = 0;
    path->params = *params;
    path->reverse_delay_ns = reverse_delay_ns;
    path->queue_limit_bytes = queue_limit(params, reverse_delay_ns);
}

uint64_t sim_path_serialise_ns(const sim_path *path, size_t bytes) {
    if (path->params.rate_bps == 0) return 0;
    unsigned __int128 bits_ns = (unsigned __int128)(bytes + path->params.overhead_bytes) * 8 * NS_PER_S;
    return (uint64_t)((bits_ns + path->params.rate_bps - 1) / path->params.rate_bps);
}

/* Forgets datagrams whose last bit has left by now_ns. */
static void fifo_advance(sim_path *path, uint64_t now_ns) {
    while (path->fifo_count > 0) {
        sim_queued *q = &path->fifo[path->fifo_head];
        if (q->done_ns > now_ns) break;
        assert(path->queue_bytes >= q->bytes);
        path->queue_bytes -= q->bytes;
        path->fifo_head = (path->fifo_head + 1) % path->fifo_capacity;
        path->fifo_count--;
    }
    assert(path->fifo_count > 0 || path->queue_bytes == 0);
}

static int fifo_push(sim_path *path, uint64_t done_ns, uint32_t bytes) {
    if (path->fifo_count == path->fifo_capacity) {
        size_t cap = path->fifo_capacity ? path->fifo_capacity * 2 : SIM_PATH_FIFO_FIRST;
        sim_queued *f = malloc(cap * sizeof *f);
        if (f == NULL) return -1;
        for (size_t i = 0; i < path->fifo_count; i++)
            f[i] = path->fifo[(path->fifo_head + i) % path->fifo_capacity];
        free(path->fifo);
        path->fifo = f;
        path->fifo_head = 0;
        path->fifo_capacity = cap;
    }
    path->fifo[(path->fifo_head + path->fifo_count) % path->fifo_capacity] = (sim_queued){done_ns, bytes};
    path->fifo_count++;
    path->queue_bytes += bytes;
    return 0;
}

uint64_t sim_path_queued_bytes(sim_path *path, uint64_t now_ns) {
    fifo_advance(path, now_ns);
    return path->queue_bytes;
}

/* Steps the Gilbert-Elliott chain and draws its loss; 0 when the model is off. */
static int burst_lost(sim_path *path) {
    const sim_path_params *p = &path->params;
    if (p->ge_p_ppb == 0 && !path->ge_bad) return 0;
    if (path->ge_bad) {
        if (sim_rng_chance(&path->rng, p->ge_r_ppb)) path->ge_bad = 0;
    } else {
        if (sim_rng_chance(&path->rng, p->ge_p_ppb)) path->ge_bad = 1;
    }
    if (path->ge_bad) path->counters.ge_bad_steps++;
    return sim_rng_chance(&path->rng, path->ge_bad ? p->ge_loss_bad_ppb : p->ge_loss_good_ppb);
}

/* Serialises `wire` bytes through the bottleneck; returns the time its last bit leaves,
 * or UINT64_MAX when the queue has no room. */
static uint64_t bottleneck(sim_path *path, uint64_t now_ns, uint64_t wire) {
    const uint64_t rate = path->params.rate_bps;
    if (rate == 0) return now_ns;
    fifo_advance(path, now_ns);
    if (path->queue_bytes + wire > path->queue_limit_bytes) return UINT64_MAX;
    uint64_t start = path->busy_until_ns;
    if (start <= now_ns) {
        start = now_ns;
        path->busy_rem = 0; /* an idle link starts afresh */
    }
    /* Exact long-run rate: carry the remainder of bits*10^9/rate between datagrams. */
    unsigned __int128 bits_ns = (unsigned __int128)wire * 8 * NS_PER_S + path->busy_rem;
    uint64_t ns = (uint64_t)(bits_ns / rate);
    path->busy_rem = (uint64_t)(bits_ns % rate);
    uint64_t done = start + ns;
    if (fifo_push(path, done, (uint32_t)wire) != 0) return UINT64_MAX;
    path->busy_until_ns = done;
    if (path->queue_bytes > path->counters.queue_bytes_peak)
        path->counters.queue_bytes_peak = path->queue_bytes;
    assert(path->queue_bytes <= path->queue_limit_bytes);
    return done;
}

static void one_copy(sim_path *path, uint64_t now_ns, size_t bytes, sim_copy *c) {
    const sim_path_params *p = &path->params;
    c->corrupt_bit = -1;
    if (bytes > 0 && sim_rng_chance(&path->rng, p->corrupt_ppb))
        c->corrupt_bit = (int64_t)sim_rng_below(&path->rng, (uint64_t)bytes * 8);
    uint64_t left = bottleneck(path, now_ns, (uint64_t)bytes + p->overhead_bytes);
    if (left == UINT64_MAX) {
        c->fate = SIM_FATE_QUEUE;
        c->arrive_ns = 0;
        path->counters.dropped_queue++;
        return;
    }
    uint64_t jitter = p->jitter_ns ? sim_rng_upto(&path->rng, p->jitter_ns) : 0;
    c->fate = SIM_FATE_ARRIVE;
    c->arrive_ns = left + p->delay_ns + jitter;
    if (c->arrive_ns < path->latest_arrive_ns) path->counters.reordered++;
    else path->latest_arrive_ns = c->arrive_ns;
    path->counters.arrivals++;
    path->counters.bytes_out += bytes;
    if (c->corrupt_bit >= 0) path->counters.corrupted++; /* counted only if it arrives */
}

size_t sim_path_send(sim_path *path, uint64_t now_ns, size_t bytes, sim_copy out[SIM_PATH_COPIES_MOST]) {
    const sim_path_params *p = &path->params;
    path->counters.datagrams_in++;
    path->counters.bytes_in += bytes;
    if (p->mtu_bytes != 0 && bytes + p->overhead_bytes > p->mtu_bytes) {
        /* Before any random draw: a path without an MTU draws as it always did. */
        path->counters.dropped_mtu++;
        out[0] = (sim_copy){SIM_FATE_MTU, 0, -1};
        return 1;
    }
    int lost_independent = sim_rng_chance(&path->rng, p->loss_ppb);
    int lost_burst = burst_lost(path); /* stepped for every datagram, lost or not */
    if (lost_independent || lost_burst) {
        if (lost_independent) path->counters.dropped_loss++;
        else path->counters.dropped_burst++;
        out[0] = (sim_copy){SIM_FATE_LOSS, 0, -1};
        return 1;
    }
    size_t n = 1;
    if (sim_rng_chance(&path->rng, p->dup_ppb)) {
        n = 2;
        path->counters.duplicated++;
    }
    for (size_t i = 0; i < n; i++) one_copy(path, now_ns, bytes, &out[i]);
    return n;
}
