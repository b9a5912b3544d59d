/* bench_size.c: the caller's memory an endpoint asks for (pure_link_size), for the four
 * configs of the scale goals, and the fixed bytes each peer and run slot add beside the
 * receive pool.  A figure, printed; sizes do not vary from run to run. */
#include <stdio.h>
#include <string.h>

#include "pure_link.h"

#define MIB (1024.0 * 1024.0)

static size_t size_of(pure_link_config c) { return pure_link_size(&c); }

static void row(const char *what, pure_link_config c, double goal_mib) {
    size_t n = size_of(c);
    printf("  %-58s %9.1f MiB", what, (double)n / MIB);
    if (goal_mib > 0) printf("   goal <= %.0f MiB %s", goal_mib, (double)n / MIB <= goal_mib ? "ok" : "");
    printf("\n");
}

int main(void) {
    pure_link_config zero, rx, tx, big;
    memset(&zero, 0, sizeof zero);
    rx = zero, rx.senders_most = PURE_LINK_NONE, rx.peers_most = 1000, rx.runs_most = 4000;
    rx.receive_memory_bytes = 256u << 20;
    tx = zero, tx.peers_most = PURE_LINK_NONE, tx.senders_most = 16;
    big = rx, big.peers_most = 10000, big.runs_most = 40000;
    printf("endpoint size, pure_link_size():\n");
    row("default (zeroed config)", zero, 64);
    row("receiver-only: 1,000 peers, 4,000 run slots, 256 MiB pool", rx, 0);
    row("sender-only: 16 senders", tx, 0);
    row("receiver-only: 10,000 peers, 40,000 run slots, 256 MiB pool", big, 384);
    pure_link_config more_peers = rx, more_runs = rx, more_senders = tx;
    more_peers.peers_most += 1000, more_runs.runs_most += 1000, more_senders.senders_most += 1;
    printf("  fixed state: %.0f B per peer, %.0f B per run slot, %.0f B per sender (beside the pools)\n",
           (double)(size_of(more_peers) - size_of(rx)) / 1000, (double)(size_of(more_runs) - size_of(rx)) / 1000,
           (double)(size_of(more_senders) - size_of(tx)));
    return 0;
}
