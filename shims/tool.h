/* tool.h: the pieces of the `pure-link` command-line tool (shims/main.c).
 *
 * Exit codes (also in `pure-link help`): */
#ifndef PL_TOOL_H
#define PL_TOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pl_driver.h"
#include "pl_io.h"
#include "pure_link.h"

enum {
    TOOL_OK = 0,          /* send: every record stored; recv: stopped by a signal, cleanly */
    TOOL_ERR_SYSTEM = 1,  /* the system said no: socket, address in use, full disk, I/O, a lock held */
    TOOL_ERR_USAGE = 2,   /* an unknown option, a missing or malformed argument */
    TOOL_ERR_FILE = 3,    /* a key file or config file is missing, malformed or too open */
    TOOL_ERR_REFUSED = 4, /* send: the receiver refused the stream until --deadline */
    TOOL_ERR_DEADLINE = 5,/* send: --deadline passed before every record was stored */
    TOOL_ERR_STOPPED = 6  /* send: SIGINT or SIGTERM before every record was stored */
};

#define TOOL_VERSION "0.1.0"
#define TOOL_KEY_FILE_BYTES 65u    /* 64 hex digits and a newline */
#define TOOL_CONFIG_LINE_MOST 4096u /* bytes of one config line */
/* send --epoch-time: the core takes any time (0 is its default), but an epoch's end is its
 * start plus this, which must not wrap; below 1 ms every packet would ask for a new key,
 * which the receiver grants at most 4 times a second anyway (spec/protocol.md §3). */
#define TOOL_EPOCH_NS_LEAST 1000000ull              /* 1 ms */
#define TOOL_EPOCH_NS_MOST PURE_LINK_DURATION_NS_MOST /* 24 h, what the core takes */

/* One line on stderr: "2026-12-03T22:10:04.123Z pure-link CMD: message"; without the time
 * when JOURNAL_STREAM is set (under systemd, whose journal stamps every line). */
void tool_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The time of a log line and its space, or "" under systemd, into buf (48 bytes). */
const char *tool_log_stamp(char *buf, size_t len);
void tool_set_command(const char *cmd);

/* "16KiB", "1MiB", "1500", "2GB": bytes; returns 0 or -1 (with a message logged). */
int tool_parse_size(const char *text, const char *what, uint64_t *out);
/* "250ms", "30s", "2m", "1h", "500us": nanoseconds; a unit is required, for 0 too ("0s"):
 * a bare number would be read in one unit here and another elsewhere. */
int tool_parse_duration(const char *text, const char *what, uint64_t *out);
/* A decimal count: returns 0 or -1 (logged). */
int tool_parse_count(const char *text, const char *what, uint64_t *out);
/* 64 hex digits into 32 bytes; 0 or -1. */
int tool_parse_key_hex(const char *text, uint8_t out[32]);
void tool_hex(const uint8_t *bytes, size_t n, char *out);

/* ---- The options send and recv share (tool_options.c): the key, what the command reports
 * beside its work, and the socket backend. ---- */
typedef struct tool_link_options {
    const char *key;          /* --key FILE */
    const char *keylog, *qlog, *stats;   /* --keylog FILE, --qlog FILE, --stats[=FILE] ("-": stdout) */
    const char *io;           /* --io KIND (default auto) */
    int gso, gro;             /* 0 after --no-gso, --no-gro */
    int progress;             /* --progress, --no-progress (default: stderr is a terminal) */
} tool_link_options;
/* A command's own option `code` (its `val` in getopt's table) with its value: 0, or -1 with
 * one line logged. */
typedef int tool_option_fn(void *ctx, int code, const char *arg);
/* Parses argv[1..] with the shared options and the command's own: `shorts` in getopt's
 * form without the leading ':' and the shared "k:", `own` ending with a zero entry (its
 * codes other than the shared ones').  `operands` 0: an argument that is not an option is
 * an error.  Returns 0, or -1 with one line logged (an unknown option, a missing value, a
 * missing --key, or what on_own said); optind is left at the first operand. */
int tool_options_parse(int argc, char **argv, const char *command, const char *shorts, const struct option *own,
                       tool_option_fn *on_own, void *ctx, int operands, tool_link_options *o);

/* Key files: 64 hex digits and a newline, mode 0600. */
int tool_key_generate(const char *path, uint8_t public_out[32]);   /* TOOL_* code */
int tool_key_load(const char *path, uint8_t secret_out[32]);       /* TOOL_* code, one line logged */
/* 32 bytes from getrandom; 0 or -1 (logged). */
int tool_random(uint8_t *out, size_t n);
/* Opens the I/O backend of --io, with --no-gso and --no-gro, on the address `bind` (named
 * `flag` in messages).  Returns a TOOL_* code with one line logged on failure; on success
 * the caller owns *io and closes it. */
int tool_io_open(const tool_link_options *o, const char *bind, const char *flag, const sigset_t *mask, pl_io **io);

/* The receiver's config file. */
#define TOOL_PEERS_MOST 1024u
#define TOOL_INPUTS_MOST 256u
typedef struct tool_peer {
    uint8_t key[32];
    char *sources;            /* '\n'-separated, or "*" */
    int line;
} tool_peer;
typedef struct tool_input {
    char *name, *dir;
    uint64_t shape;
    int line;
} tool_input;
typedef struct tool_config {
    tool_peer peers[TOOL_PEERS_MOST];
    size_t peers_len;
    tool_input inputs[TOOL_INPUTS_MOST];
    size_t inputs_len;
    char *memo;               /* NULL: no memo */
} tool_config;
/* Reads the config; TOOL_OK or TOOL_ERR_FILE with "FILE:LINE: what" logged. */
int tool_config_load(const char *path, tool_config *out);
void tool_config_free(tool_config *c);

/* What both commands write: key log, qlog, statistics, progress. */
typedef struct tool_report {
    FILE *keylog;             /* --keylog: PURE_LINK_EPOCH lines (spec/keylog.md) */
    void *qlog;               /* --qlog: a sim_trace over a FILE */
    FILE *qlog_file;
    const char *stats_path;   /* --stats [FILE]: JSON on exit; "-" is stdout */
    FILE *stats_file;         /* opened by tool_report_open (stdout for "-") */
    int progress;             /* 1: a progress line on stderr */
    uint64_t start_ns, progress_next_ns;
} tool_report;
/* Opens --keylog, --qlog and --stats (so that every path is known good before the first
 * datagram) and takes --progress: a TOOL_* code, logged. */
int tool_report_open(tool_report *r, const tool_link_options *o, const char *title);
void tool_report_close(tool_report *r);
void tool_report_event(tool_report *r, const pure_link_event *ev, int refused, uint64_t now_ns);
void tool_report_datagram(tool_report *r, int sent, const pure_link_addr *peer, size_t len, uint64_t now_ns);
void tool_report_metrics(tool_report *r, const pure_link_stats *s, uint64_t now_ns);
/* Writes {"command":..., "seconds":..., "endpoint":{...}, "io":{...}, extra} to stats_path. */
int tool_report_stats(tool_report *r, const char *command, const pure_link_stats *endpoint, const pure_link_stats *sender,
                      const pl_io_stats *io, const char *extra_json, uint64_t now_ns);
/* "12.3 MiB", "1.23 Gbit/s" into buf. */
const char *tool_bytes(uint64_t bytes, char *buf, size_t len);
const char *tool_rate(double bits_per_s, char *buf, size_t len);
/* A rate over the recent past: the count `total` at two samples at least `window_ns` apart
 * (the older kept until a newer one is that old).  Bytes per second, 0 until two samples. */
typedef struct tool_rate_window {
    uint64_t old_total, old_ns, new_total, new_ns;
    int started;
} tool_rate_window;
double tool_rate_recent(tool_rate_window *w, uint64_t total, uint64_t now_ns, uint64_t window_ns);

int tool_keygen_main(int argc, char **argv);
int tool_pub_main(int argc, char **argv);
int tool_send_main(int argc, char **argv);
int tool_recv_main(int argc, char **argv);

/* Shared by send and recv: signals, the socket, the endpoint. */
/* Signals (one table in tool_util.c): SIGINT and SIGTERM set tool_stop (the loop ends
 * cleanly); SIGHUP stops send, and is noted for recv; SIGUSR1 is noted for both (a status
 * line); SIGUSR2 and SIGPIPE are ignored.  *wait_mask: the mask to wait with. */
extern volatile sig_atomic_t tool_stop;
void tool_signals(sigset_t *wait_mask, int is_recv);
/* The next noted signal (SIGUSR1 first, then SIGHUP), cleared; 0 when none. */
int tool_signal_noted(void);
void *tool_endpoint(pure_link_config *cfg, pure_link **out);   /* memory to free, or NULL (logged) */

#endif
