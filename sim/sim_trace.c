/* sim_trace.c: JSON-SEQ records with a running FNV-1a 64; see sim_trace.h. */
#include "sim_trace.h"

#include <assert.h>
#include <string.h>

#include "sim_rng.h"

#define RS 0x1e /* RFC 7464 record separator */
#define SIM_TRACE_TAIL 3u /* room kept for the closing "}}\n" */

static void put(sim_trace *t, const char *s, size_t n) {
    if (t->len + n > SIM_TRACE_RECORD_MOST - SIM_TRACE_TAIL) n = SIM_TRACE_RECORD_MOST - SIM_TRACE_TAIL - t->len;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
}

static void put_str(sim_trace *t, const char *s) { put(t, s, strlen(s)); }

static void put_u64(sim_trace *t, uint64_t v) {
    char digits[20];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(t, digits + sizeof digits - n, n);
}

/* A JSON string: quotes, backslashes and every byte outside printable ASCII escaped.
 * Runs of plain bytes (names, nearly always all of it) are copied at once. */
static void put_json_string(sim_trace *t, const char *s) {
    static const char hex[] = "0123456789abcdef";
    put(t, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    for (;;) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') p++;
        if (p > run) put(t, (const char *)run, (size_t)(p - run));
        if (*p == 0) break;
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            put(t, e, 2);
        } else {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            put(t, e, 6);
        }
        p++;
    }
    put(t, "\"", 1);
}

/* Keys and record names are literals of the simulator: plain ASCII, copied unescaped. */
static void put_literal(sim_trace *t, const char *s) {
    size_t n = strlen(s);
    put(t, "\"", 1);
    put(t, s, n);
    put(t, "\"", 1);
}

static void key(sim_trace *t, const char *k) {
    if (t->fields++) put(t, ",", 1);
    put_literal(t, k);
    put(t, ":", 1);
}

void sim_trace_init(sim_trace *trace, FILE *file, uint64_t seed) {
    memset(trace, 0, sizeof *trace);
    trace->file = file;
    trace->hash = SIM_FNV64_BASIS;
    sim_trace_begin(trace, 0, "header");
    sim_trace_str(trace, "qlog_format", "JSON-SEQ");
    sim_trace_str(trace, "qlog_version", "0.3");
    sim_trace_str(trace, "title", "pure-link-sim");
    sim_trace_str(trace, "time_unit", "ns");
    sim_trace_u64(trace, "seed", seed);
    sim_trace_end(trace);
}

void sim_trace_begin(sim_trace *trace, uint64_t time_ns, const char *name) {
    trace->len = 0;
    trace->fields = 0;
    trace->buf[trace->len++] = RS;
    put_str(trace, "{\"time\":");
    put_u64(trace, time_ns);
    put_str(trace, ",\"name\":");
    put_literal(trace, name);
    put_str(trace, ",\"data\":{");
}

void sim_trace_u64(sim_trace *trace, const char *k, uint64_t value) {
    key(trace, k);
    put_u64(trace, value);
}

void sim_trace_i64(sim_trace *trace, const char *k, int64_t value) {
    key(trace, k);
    if (value < 0) {
        put(trace, "-", 1);
        put_u64(trace, (uint64_t)0 - (uint64_t)value);
    } else {
        put_u64(trace, (uint64_t)value);
    }
}

void sim_trace_str(sim_trace *trace, const char *k, const char *value) {
    key(trace, k);
    put_json_string(trace, value ? value : "");
}

void sim_trace_hex(sim_trace *trace, const char *k, const uint8_t *bytes, size_t len) {
    static const char hex[] = "0123456789abcdef";
    key(trace, k);
    put(trace, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        char h[2] = {hex[bytes[i] >> 4], hex[bytes[i] & 15]};
        put(trace, h, 2);
    }
    put(trace, "\"", 1);
}

void sim_trace_id(sim_trace *trace, const char *k, uint64_t id) {
    uint8_t be[8];
    for (int i = 0; i < 8; i++) be[i] = (uint8_t)(id >> (56 - 8 * i));
    sim_trace_hex(trace, k, be, sizeof be);
}

void sim_trace_end(sim_trace *trace) {
    assert(trace->len + SIM_TRACE_TAIL <= SIM_TRACE_RECORD_MOST);
    memcpy(trace->buf + trace->len, "}}\n", SIM_TRACE_TAIL);
    trace->len += SIM_TRACE_TAIL;
    trace->hash = sim_fnv1a64(trace->hash, trace->buf, trace->len);
    trace->bytes += trace->len;
    trace->records++;
    if (trace->file && fwrite(trace->buf, 1, trace->len, trace->file) != trace->len) trace->write_error = 1;
    trace->len = 0;
}
