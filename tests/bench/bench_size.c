/* bench_size.c: the caller's memory an endpoint asks for (pure_link_size), for the four
 * configs of the scale goals, the fixed bytes each peer and run slot add beside the
 * receive pool, and how much of the block pure_link_init writes (pages of fresh anonymous
 * memory it makes resident, counted with mincore).  Figures, printed; they do not vary from
 * run to run. */
#define _DEFAULT_SOURCE /* mincore */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pure_link.h"

#define MIB (1024.0 * 1024.0)

static size_t size_of(pure_link_config c) { return pure_link_size(&c); }

/* KiB of a fresh mapping that init of config c makes resident (what it writes, in pages). */
static double init_kib(pure_link_config c) {
    const size_t n = size_of(c), page = (size_t)sysconf(_SC_PAGESIZE), pages = (n + page - 1) / page;
    void *mem = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    unsigned char *resident = malloc(pages);
    uint8_t seed[32] = {1};
    if (mem == MAP_FAILED || resident == NULL || pure_link_init(mem, n, &c, seed, 0) == NULL ||
        mincore(mem, n, resident) != 0) {
        fprintf(stderr, "bench_size: cannot set up an endpoint of %zu bytes\n", n);
        exit(1);
    }
    size_t touched = 0;
    for (size_t i = 0; i < pages; i++) touched += resident[i] & 1;
    free(resident);
    munmap(mem, n);
    return (double)(touched * page) / 1024.0;
}

static void row(const char *what, pure_link_config c, double goal_mib) {
    size_t n = size_of(c);
    printf("  %-58s %9.1f MiB, init writes %6.0f KiB", what, (double)n / MIB, init_kib(c));
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
