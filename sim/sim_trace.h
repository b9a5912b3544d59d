/* sim_trace.h: the run's trace, JSON text sequences (RFC 7464) in the style of qlog.
 *
 * Every record is 0x1E, one JSON object, '\n':
 *   {"time":NS,"name":"CATEGORY:EVENT","data":{...}}
 * with integer values only (times in virtual nanoseconds), so that the same seed gives the
 * same bytes on every machine.  Every byte also goes into a running FNV-1a 64 hash, which
 * is computed whether or not a file is written: two runs can be compared by hash alone.
 * The first record is a header naming the format. */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_TRACE_RECORD_MOST 4096u /* bytes of one record; longer values are cut */

typedef struct sim_trace {
    FILE *file;          /* NULL: hash only */
    uint64_t hash;       /* FNV-1a 64 of every byte so far */
    uint64_t bytes;      /* bytes so far */
    uint64_t records;    /* records so far */
    int fields;          /* fields in the open record's data */
    int write_error;     /* 1 if writing the file failed */
    size_t len;
    char buf[SIM_TRACE_RECORD_MOST];
} sim_trace;

/* Starts a trace; file may be NULL.  Writes the header record. */
void sim_trace_init(sim_trace *trace, FILE *file, uint64_t seed);

/* A record: begin, then fields of its "data" object, then end.  Record names and keys
 * are literals (plain ASCII, not escaped); string values are escaped. */
void sim_trace_begin(sim_trace *trace, uint64_t time_ns, const char *name);
void sim_trace_u64(sim_trace *trace, const char *key, uint64_t value);
void sim_trace_i64(sim_trace *trace, const char *key, int64_t value);
void sim_trace_str(sim_trace *trace, const char *key, const char *value);
void sim_trace_hex(sim_trace *trace, const char *key, const uint8_t *bytes, size_t len);
/* A 64-bit id (a run) as 16 hex digits: JSON readers lose integers above 2^53. */
void sim_trace_id(sim_trace *trace, const char *key, uint64_t id);
void sim_trace_end(sim_trace *trace);

#endif
