/* sim_store_fault.h: the receiving host's record store failing as the shims' store does
 * (shims/store/STORE.md, "Commit and failure"), for a node's scenario keys:
 *
 *   store_fail: TIME restart DELAY
 *       the first commit at or after TIME fails (fdatasync gives an error): nothing of the
 *       batch is claimed, the memo writes in flight reach the disk whole, cut or not at all
 *       (the kernel may have dropped the dirty pages), and the host stops as pure-link recv
 *       does on a store error; it starts again DELAY later.
 *   disk_full: TIME for DURATION restart DELAY
 *       from TIME for DURATION every append fails (ENOSPC): what was appended before the
 *       failing record is committed, the host stops and starts again DELAY later, and stops
 *       again at its first record while the disk is still full.
 *   store_tail: keep
 *       at every stop of the host (but a failed fdatasync's, after which the store cut its
 *       files back to their durable ends), the record files keep a random prefix of the records
 *       appended but not yet claimed (a killed process leaves them in the page cache, and the
 *       recovery cuts a torn last frame): a restart may find more stored than the core heard.
 *
 * A stop is a crash of the node at the same instant (an event of its own: the endpoint is
 * not torn down under the event loop that delivered the record). */
#ifndef SIM_STORE_FAULT_H
#define SIM_STORE_FAULT_H

#include <stdint.h>

#include "sim_rng.h"

typedef struct sim_store_fault_spec {
    int fail_set;                 /* store_fail given */
    uint64_t fail_ns, fail_restart_ns;
    int full_set;                 /* disk_full given */
    uint64_t full_ns, full_for_ns, full_restart_ns;
    int tail_keep;                /* store_tail: keep */
} sim_store_fault_spec;

enum { SIM_STORE_STOP_SYNC_FAILED = 1, SIM_STORE_STOP_DISK_FULL = 2 };

typedef struct sim_store_fault_state {
    int fail_fired;               /* the failing commit happened */
    int stopping;                 /* 0, or SIM_STORE_STOP_*: the host stops at this instant and
                                     stores nothing more */
    int rng_ready;
    sim_rng rng;                  /* the cut of a tail, the fate of memo writes */
    uint64_t sync_failures, full_stops, tail_records_kept, memo_writes_landed;
} sim_store_fault_state;

/* A node key of the scenario: returns 1 if it was one of the keys above (parsed into s),
 * 0 if it is none of them, -1 with *why set if its value is wrong. */
int sim_store_fault_parse(sim_store_fault_spec *s, const char *key, const char *value, const char **why);

struct sim_world;
struct sim_node;
/* 1 while the host is stopping (from a failure until its crash, at the same instant): it
 * takes and stores nothing. */
int sim_store_fault_stopping(const struct sim_node *n);
/* The host is about to commit (store due records): 1 if the commit fails or the host is
 * stopping (it must then store nothing). */
int sim_store_fault_commit_fails(struct sim_world *w, struct sim_node *n);
/* The host is about to append a record: 1 if the append fails and the host stops (what it
 * appended before is committed, by the caller). */
int sim_store_fault_append_fails(struct sim_world *w, struct sim_node *n);
/* At the host's stop: how many of `waiting` appended, unclaimed records the file keeps. */
uint64_t sim_store_fault_tail_kept(struct sim_world *w, struct sim_node *n, uint64_t waiting);
/* The node crashed: a stop is over. */
void sim_store_fault_on_crash(struct sim_node *n);

#endif
