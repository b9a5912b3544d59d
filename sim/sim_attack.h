/* sim_attack.h: what the network and an attacker do to addresses (sim_attack.c). */
#ifndef SIM_ATTACK_H
#define SIM_ATTACK_H

#include "sim_world.h"

/* The attacker's copy of what one `replay:` line will send (sim_attack.c). */
typedef struct sim_capture {
    uint8_t *bytes;          /* the datagrams, back to back */
    size_t used, capacity;
    struct sim_captured {
        size_t offset;
        uint32_t len;
        pure_link_addr src, dst;
    } *items;
    size_t count, item_capacity;
    int fired;
    uint64_t replayed;
} sim_capture;


/* The attacker's state of one `forge:` line. */
typedef struct sim_forge_state {
    uint64_t sent, seen_run;
    int seen;
    sim_rng rng;
} sim_forge_state;

int sim_attack_setup(sim_world *w, char *err, size_t err_len);
void sim_attack_free(sim_world *w);
/* A datagram from `from` to node `to` is put on the path now: capture it for replays, and
 * race a spoofed copy if a spoof is due.  Called before the datagram enters its path. */
void sim_attack_on_route(sim_world *w, uint32_t from, uint32_t to, const sim_packet *pkt);
void sim_attack_on_replay(sim_world *w, uint32_t replay);
void sim_attack_on_forge(sim_world *w, uint32_t forge);
/* A datagram reaches node `node` (up or not): relay it if a `forward:` says so. */
void sim_attack_on_arrive(sim_world *w, uint32_t node, const sim_packet *pkt);
void sim_attack_on_node_change(sim_world *w, uint32_t change);

#endif
