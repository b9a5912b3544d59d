/* sim_vopr.h: pure-link-sim vopr, the invariant campaign: many short simulator runs, each
 * under conditions and faults drawn from its seed, each checked against the protocol's
 * invariants.  A seed fixes everything (the scenario text and the run), so a failing seed
 * replays byte for byte with the one command it prints.
 *
 *   pure-link-sim vopr [--seeds N] [--from S] [--jobs J] [--verbose] [--set 'KEY: VALUE']...
 *   pure-link-sim vopr --print S [--set ...]   the scenario text of seed S (a scenario file)
 *
 * --set appends a scenario line to every drawn text (e.g. 'crypto: null'); a failing seed's
 * replay command repeats them.
 *
 *   sim_vopr.c        the command line, the workers, the summary and the fault table
 *   sim_vopr_draw.c   a seed's scenario text and the faults it drew
 *   sim_vopr_check.c  the invariants, checked on a finished run */
#ifndef SIM_VOPR_H
#define SIM_VOPR_H

#include <stddef.h>
#include <stdint.h>

#include "sim_world.h"

#define SIM_VOPR_TEXT_MOST 4096u /* bytes of one drawn scenario text */
#define SIM_VOPR_WHY_MOST  512u  /* bytes of the broken invariants of one run, in words */

/* What a seed can draw; the table counts seeds per fault. */
typedef enum sim_vopr_fault {
    SIM_VOPR_LOSS, SIM_VOPR_BURSTS, SIM_VOPR_JITTER, SIM_VOPR_DUPLICATION, SIM_VOPR_CORRUPTION,
    SIM_VOPR_TWO_SENDERS, SIM_VOPR_LINKS_MANY, SIM_VOPR_PACED, SIM_VOPR_MORE_AFTER_IDLE, SIM_VOPR_EPOCHS,
    SIM_VOPR_IDLE, SIM_VOPR_SMALL_LIMITS, SIM_VOPR_SENDER_CRASH, SIM_VOPR_RECEIVER_CRASH, SIM_VOPR_MEMO,
    SIM_VOPR_MEMO_DROP, SIM_VOPR_MEMO_TEAR_LAST, SIM_VOPR_MEMO_TEAR_FIRST, SIM_VOPR_CRASH_AT_MEMO,
    SIM_VOPR_STORE_FAIL, SIM_VOPR_DISK_FULL, SIM_VOPR_STORE_TAIL,
    SIM_VOPR_REPLAY, SIM_VOPR_FORGE, SIM_VOPR_FORWARD,
    SIM_VOPR_FAULTS
} sim_vopr_fault;

typedef struct sim_vopr_draw {
    char text[SIM_VOPR_TEXT_MOST];
    size_t len;
    int crashes;     /* a node crashes: a run may end with records unstored */
    uint32_t faults; /* bit per sim_vopr_fault */
} sim_vopr_draw;

_Static_assert(SIM_VOPR_FAULTS <= 32, "the faults of a draw fit in its bit set");

/* Draws seed's scenario (the same text for the same seed, always). */
void sim_vopr_draw_seed(uint64_t seed, sim_vopr_draw *d);
const char *sim_vopr_fault_name(sim_vopr_fault f);

/* Writes the broken invariants of a finished run into why (empty if none); returns how many. */
int sim_vopr_check(const sim_world *w, int crashes, char *why, size_t why_len);

/* pure-link-sim vopr ...: argv[0] is "vopr"; returns the exit status. */
int sim_vopr_main(int argc, char **argv);

#endif
