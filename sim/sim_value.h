/* sim_value.h: scenario values with units, parsed exactly into integers.
 *
 * Values are decimals with an optional fraction and a unit ("1.5ms", "50Mbit", "5%",
 * "1KiB").  They are parsed without floating point, so a scenario means the same
 * integers on every machine, and the trace (integers only) stays byte-identical. */
#ifndef SIM_VALUE_H
#define SIM_VALUE_H

#include <stdint.h>

/* Each returns 0 and sets *out, or -1 if the text is not such a value (a unit is
 * required for durations, except for "0"). */
int sim_value_duration_ns(const char *text, uint64_t *out);      /* ns us ms s min */
int sim_value_rate_bps(const char *text, uint64_t *out);         /* bit kbit Mbit Gbit [/s], bps... */
int sim_value_bytes(const char *text, uint64_t *out);            /* B KB KiB MB MiB GB GiB; bare = B */
int sim_value_ppb(const char *text, uint32_t *out);              /* 0.05 or 5% -> parts per 10^9 */
int sim_value_u64(const char *text, uint64_t *out);              /* plain integer (0x.. hex too) */
int sim_value_per_s(const char *text, uint64_t *out_milli);      /* "50/s", "0.5/s", "50" -> thousandths per s */
int sim_value_bool(const char *text, int *out);                  /* yes/no, on/off, 1/0, true/false */

#endif
