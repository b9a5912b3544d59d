/* sim_rng.h: the simulator's seeded pseudo-random streams.
 *
 * xoshiro256** (Blackman and Vigna) seeded through splitmix64.  Every consumer (a path
 * direction, a node, a disk, an application) owns its own stream, derived from the run
 * seed and a label naming the consumer, so adding a node or a path does not change the
 * draws any other consumer sees.  Not for cryptography: the endpoint seeds and static
 * keys drawn from it only have to be reproducible. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_rng {
    uint64_t s[4];
} sim_rng;

/* One splitmix64 step: advances *state and returns the next output. */
uint64_t sim_splitmix64(uint64_t *state);
/* FNV-1a 64 over bytes, continuing from `hash` (start with SIM_FNV64_BASIS). */
#define SIM_FNV64_BASIS 0xcbf29ce484222325ull
#define SIM_FNV64_PRIME 0x00000100000001b3ull
uint64_t sim_fnv1a64(uint64_t hash, const void *bytes, size_t len);

/* Seeds a stream from a 64-bit seed (four splitmix64 outputs fill the state). */
void sim_rng_seed(sim_rng *rng, uint64_t seed);
/* Seeds the stream of the consumer called `label` in the run `run_seed`. */
void sim_rng_derive(sim_rng *rng, uint64_t run_seed, const char *label);

uint64_t sim_rng_next(sim_rng *rng);
/* Uniform in [0, bound) without modulo bias; bound > 0. */
uint64_t sim_rng_below(sim_rng *rng, uint64_t bound);
/* Uniform in [0, most] inclusive. */
uint64_t sim_rng_upto(sim_rng *rng, uint64_t most);
/* 1 with probability ppb / SIM_PPB_ONE. */
#define SIM_PPB_ONE 1000000000u /* probabilities are integers in parts per billion */
int sim_rng_chance(sim_rng *rng, uint32_t ppb);
void sim_rng_fill(sim_rng *rng, uint8_t *out, size_t len);

#endif
