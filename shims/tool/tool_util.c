/* tool_util.c: log lines, sizes and durations with units, hex, randomness, signals and the
 * endpoint's memory for the `pure-link` tool (tool.h). */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

static const char *command = "pure-link";

void tool_set_command(const char *cmd) { command = cmd; }

/* "2026-12-03T22:10:04.123Z " (ISO 8601, UTC, milliseconds) into buf, or "" under systemd:
 * journald stamps each line itself, and it sets JOURNAL_STREAM for the services whose
 * stderr it reads. */
const char *tool_log_stamp(char *buf, size_t len) {
    buf[0] = 0;
    if (getenv("JOURNAL_STREAM") != NULL) return buf;
    struct timespec ts;
    struct tm tm;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || gmtime_r(&ts.tv_sec, &tm) == NULL) return buf;
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03ldZ ", day, ts.tv_nsec / 1000000);
    return buf;
}

void tool_log(const char *fmt, ...) {
    char line[1024], stamp[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s%s: %s\n", tool_log_stamp(stamp, sizeof stamp), command, line);
}

typedef struct unit {
    const char *name;
    uint64_t scale;
} unit;

/* A decimal number with an optional fraction, then a unit from the table. */
static int parse_scaled(const char *text, const unit *units, int unit_needed, uint64_t *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || v < 0 || text[0] == '-' || text[0] == '+') return -1;
    uint64_t scale = 0;
    if (*end == 0) {
        if (unit_needed) return -1;
        scale = 1;
    } else {
        for (const unit *u = units; u->name; u++)
            if (strcmp(end, u->name) == 0) scale = u->scale;
        if (scale == 0) return -1;
    }
    double r = v * (double)scale;
    if (r >= 18446744073709551615.0) return -1;
    *out = (uint64_t)(r + 0.5);
    return 0;
}

int tool_parse_size(const char *text, const char *what, uint64_t *out) {
    static const unit units[] = {{"B", 1},           {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                                 {"kB", 1000},       {"KB", 1000},        {"MB", 1000000},     {"GB", 1000000000},
                                 {"k", 1ull << 10},  {"K", 1ull << 10},   {"M", 1ull << 20},   {"G", 1ull << 30},
                                 {NULL, 0}};
    if (parse_scaled(text, units, 0, out) == 0) return 0;
    tool_log("%s '%s': want a size such as 1500, 16KiB, 1MiB", what, text);
    return -1;
}

int tool_parse_duration(const char *text, const char *what, uint64_t *out) {
    static const unit units[] = {{"ns", 1},           {"us", 1000},          {"ms", 1000000},
                                 {"s", 1000000000ull}, {"m", 60000000000ull}, {"min", 60000000000ull},
                                 {"h", 3600000000000ull}, {NULL, 0}};
    if (parse_scaled(text, units, 1, out) == 0) return 0;
    tool_log("%s '%s': want a duration with its unit, such as 250ms, 30s, 2m", what, text);
    return -1;
}

int tool_parse_count(const char *text, const char *what, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != 0 || errno != 0) {
        tool_log("%s '%s': want a whole number%s", what, text, errno == ERANGE ? " below 2^64" : "");
        return -1;
    }
    *out = v;
    return 0;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int tool_parse_key_hex(const char *text, uint8_t out[32]) {
    if (strlen(text) != 64) return -1;
    for (int i = 0; i < 32; i++) {
        int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void tool_hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) out[2 * i] = digits[bytes[i] >> 4], out[2 * i + 1] = digits[bytes[i] & 15];
    out[2 * n] = 0;
}

/* Three bytes make four characters, each a lookup: about 2 instructions a byte, where
 * libsodium's constant-time encoder (which a record's public bytes do not need) takes about
 * 75 (callgrind). */
size_t tool_base64(const uint8_t *in, size_t n, char *out) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = out;
    size_t i = 0;
    for (; n - i >= 3; i += 3, o += 4) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        o[0] = abc[v >> 18], o[1] = abc[v >> 12 & 63], o[2] = abc[v >> 6 & 63], o[3] = abc[v & 63];
    }
    if (n - i > 0) {  /* one or two bytes left: two or three characters and the padding */
        uint32_t v = (uint32_t)in[i] << 16 | (n - i == 2 ? (uint32_t)in[i + 1] << 8 : 0);
        o[0] = abc[v >> 18], o[1] = abc[v >> 12 & 63];
        o[2] = n - i == 2 ? abc[v >> 6 & 63] : '=', o[3] = '=';
        o += 4;
    }
    *o = 0;
    return (size_t)(o - out);
}

int tool_random(uint8_t *out, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            tool_log("getrandom: %s", strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

const char *tool_bytes(uint64_t bytes, char *buf, size_t len) {
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int i = 0;
    while (v >= 1024 && i < 4) v /= 1024, i++;
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, names[i]);
    return buf;
}

const char *tool_rate(double bits_per_s, char *buf, size_t len) {
    if (bits_per_s >= 1e9) snprintf(buf, len, "%.2f Gbit/s", bits_per_s / 1e9);
    else if (bits_per_s >= 1e6) snprintf(buf, len, "%.1f Mbit/s", bits_per_s / 1e6);
    else snprintf(buf, len, "%.1f kbit/s", bits_per_s / 1e3);
    return buf;
}

double tool_rate_recent(tool_rate_window *w, uint64_t total, uint64_t now_ns, uint64_t window_ns) {
    if (!w->started) {
        *w = (tool_rate_window){total, now_ns, total, now_ns, 1};
        return 0;
    }
    /* The newer sample becomes the base once it is a window old: the rate always spans
     * between one and two windows of the latest past. */
    if (now_ns - w->new_ns >= window_ns) w->old_total = w->new_total, w->old_ns = w->new_ns;
    if (now_ns - w->new_ns >= window_ns) w->new_total = total, w->new_ns = now_ns;
    if (now_ns <= w->old_ns) return 0;
    return (double)(total - w->old_total) * 1e9 / (double)(now_ns - w->old_ns);
}

/* ---- signals: the one table of what each signal does to send and recv (their help says
 * the same).  Those the tool handles are blocked except while it waits, so that none
 * arrives between the check of a flag and the wait; the wait returns on each. ---- */

volatile sig_atomic_t tool_stop;
static volatile sig_atomic_t noted_hup, noted_usr1;
static int hup_stops;  /* set before the handlers are */

enum { SIG_STOP, SIG_NOTE, SIG_IGNORE };
static const struct {
    int sig;
    int recv, send;   /* SIG_* for each command */
} signal_table[] = {
    {SIGINT, SIG_STOP, SIG_STOP},   /* the clean end: commit, summary, statistics */
    {SIGTERM, SIG_STOP, SIG_STOP},
    {SIGHUP, SIG_NOTE, SIG_STOP},   /* recv: a daemon's reload; send: its terminal hung up */
    {SIGUSR1, SIG_NOTE, SIG_NOTE},  /* a status line on stderr */
    {SIGUSR2, SIG_IGNORE, SIG_IGNORE},
    {SIGPIPE, SIG_IGNORE, SIG_IGNORE}, /* a write to a closed pipe fails with EPIPE instead */
};

static void on_signal(int sig) {
    if (sig == SIGHUP && !hup_stops) noted_hup = 1;
    else if (sig == SIGUSR1) noted_usr1 = 1;
    else tool_stop = sig;
}

void tool_signals(sigset_t *wait_mask, int is_recv) {
    sigset_t block;
    sigemptyset(&block);
    hup_stops = !is_recv;
    for (size_t i = 0; i < sizeof signal_table / sizeof signal_table[0]; i++) {
        int action = is_recv ? signal_table[i].recv : signal_table[i].send;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = action == SIG_IGNORE ? SIG_IGN : on_signal;
        sigaction(signal_table[i].sig, &sa, NULL);
        if (action != SIG_IGNORE) sigaddset(&block, signal_table[i].sig);
    }
    sigprocmask(SIG_BLOCK, &block, wait_mask);
    for (size_t i = 0; i < sizeof signal_table / sizeof signal_table[0]; i++) sigdelset(wait_mask, signal_table[i].sig);
}

int tool_signal_noted(void) {
    if (noted_usr1) {
        noted_usr1 = 0;
        return SIGUSR1;
    }
    if (noted_hup) {
        noted_hup = 0;
        return SIGHUP;
    }
    return 0;
}

/* The endpoint's memory in huge pages where it spans some: a fault costs about as much
 * as a 4 KiB page's first write (11 us each on this machine's virtual CPUs), and a
 * transfer touches its queue or receive pool, many MiB, once: 5,000 faults for a sender
 * at full rate, a seventh of its CPU. */
#define TOOL_HUGE_PAGE_BYTES (2u << 20)
static void *endpoint_memory(size_t *bytes) {
    if (*bytes < TOOL_HUGE_PAGE_BYTES) return aligned_alloc(PURE_LINK_ALIGN, *bytes);
    *bytes = (*bytes + TOOL_HUGE_PAGE_BYTES - 1) / TOOL_HUGE_PAGE_BYTES * TOOL_HUGE_PAGE_BYTES;
    void *mem = aligned_alloc(TOOL_HUGE_PAGE_BYTES, *bytes);
    if (mem != NULL) (void)madvise(mem, *bytes, MADV_HUGEPAGE);  /* advice: 4 KiB pages work too */
    return mem;
}

void *tool_endpoint(pure_link_config *cfg, pure_link **out) {
    pure_link_config_default(cfg);
    size_t size = pure_link_size(cfg);
    if (size == 0) {
        tool_log("the endpoint's configuration is invalid");
        return NULL;
    }
    size_t rounded = (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN;
    void *mem = endpoint_memory(&rounded);
    uint8_t seed[32];
    if (mem == NULL) {
        tool_log("out of memory (%zu bytes for the endpoint)", size);
        return NULL;
    }
    if (tool_random(seed, sizeof seed) != 0) {
        free(mem);
        return NULL;
    }
    *out = pure_link_init(mem, rounded, cfg, seed, pl_now_ns());
    if (*out == NULL) {
        tool_log("the endpoint did not start (configuration)");
        free(mem);
        return NULL;
    }
    return mem;
}

/* How long a start waits for an address in use to come free.  A process killed with
 * io_uring requests pending (recv always has its receives pending) keeps its socket bound
 * until the kernel tears its ring down, which it does after the process is reaped: a
 * receiver that a supervisor starts again at once after kill -9 finds its port taken
 * (for 10 to 40 ms on an idle or busy 2-core machine).  2 s covers that many times over,
 * and a port that another program holds still fails soon enough for whoever started us. */
#define TOOL_BIND_WAIT_NS 2000000000ull
#define TOOL_BIND_RETRY_NS 10000000ull /* between tries: 10 ms */

int tool_io_open(const tool_link_options *o, const char *bind, const char *flag, const sigset_t *mask, pl_io **io) {
    pl_io_options io_opt = {.gso = o->gso, .gro = o->gro, .wait_mask = mask};
    char err[256];
    int waited = 0;
    if (pl_addr_parse(bind, &io_opt.bind, err, sizeof err) != 0) {
        tool_log("%s: %s", flag, err);
        return TOOL_ERR_USAGE;
    }
    uint64_t start = pl_now_ns();
    int r;
    while ((r = pl_io_open(o->io, io, &io_opt, err, sizeof err)) == -EADDRINUSE && !tool_stop &&
           pl_now_ns() - start < TOOL_BIND_WAIT_NS) {
        if (!waited)
            tool_log("%s %s: the address is in use; waiting up to %llu s for it to come free", flag, bind,
                     TOOL_BIND_WAIT_NS / 1000000000ull);
        waited = 1;
        /* The handled signals are let in while it sleeps: SIGINT or SIGTERM end the wait. */
        struct timespec ts = {0, (long)TOOL_BIND_RETRY_NS};
        ppoll(NULL, 0, &ts, mask);
    }
    if (r != 0) {
        double s = (double)(pl_now_ns() - start) / 1e9;
        if (waited && tool_stop) tool_log("%s (stopped while waiting for it, after %.1f s)", err, s);
        else if (waited) tool_log("%s (still, after %.1f s)", err, s);
        else tool_log("%s", err);
        return TOOL_ERR_SYSTEM;
    }
    return TOOL_OK;
}
