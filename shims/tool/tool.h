/* tool.h: the pieces of the `pure-link` command-line tool (shims/tool/main.c).
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
#include "pl_store.h"
#include "pure_link.h"

enum {
    TOOL_OK = 0,          /* send: every record stored; recv: stopped by a signal, cleanly */
    TOOL_ERR_SYSTEM = 1,  /* the system said no: socket, address in use, full disk, I/O, a lock held */
    TOOL_ERR_USAGE = 2,   /* an unknown option, a missing or malformed argument */
    TOOL_ERR_FILE = 3,    /* a key file or config file is missing, malformed or too open */
    TOOL_ERR_REFUSED = 4, /* send: the receiver refused the stream until --deadline */
    TOOL_ERR_DEADLINE = 5,/* send: --deadline passed before every record was stored */
    TOOL_ERR_STOPPED = 6, /* send: SIGINT or SIGTERM before every record was stored */
    TOOL_ERR_CORRUPT = 7, /* cat, verify: a record file holds a bad frame that valid ones follow,
                             or a bad header */
    TOOL_ERR_CUT_OFF = 8  /* send: the receiver cut this run off: a newer run of its source
                             took the source over (REFUSED reason 5, spec/protocol.md §4.3) */
};

#define TOOL_VERSION "0.1.0"
#define TOOL_KEY_FILE_BYTES 65u    /* 64 hex digits and a newline */
#define TOOL_CONFIG_LINE_MOST 4096u /* bytes of one config line */
/* send --epoch-time: the core takes any time (0 is its default), but an epoch's end is its
 * start plus this, which must not wrap; below 1 ms every packet would ask for a new key,
 * which the receiver grants at most 4 times a second anyway (spec/protocol.md §3). */
#define TOOL_EPOCH_NS_LEAST 1000000ull              /* 1 ms */
#define TOOL_EPOCH_NS_MOST PURE_LINK_DURATION_NS_MOST /* 24 h, what the core takes */
/* send --pmtu-raise: how long after a datagram size search that ended below the full size
 * the sender searches again (spec/protocol.md §5.1; the core's pmtu_raise_ns, default 600 s,
 * RFC 8899's PMTU_RAISE_TIMER).  Below 1 s a path that stays small would cost a failing
 * probe of the full size (3 lost, then the halving's) more often than once a second, for
 * nothing; the most is what the core takes. */
#define TOOL_PMTU_RAISE_NS_LEAST 1000000000ull          /* 1 s */
#define TOOL_PMTU_RAISE_NS_MOST PURE_LINK_DURATION_NS_MOST /* 24 h */

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
/* RFC 4648 base64 (with padding) of n bytes into out, which holds TOOL_BASE64_LEN(n):
 * returns the characters written, then a NUL. */
#define TOOL_BASE64_LEN(n) (((n) + 2) / 3 * 4 + 1)
size_t tool_base64(const uint8_t *in, size_t n, char *out);

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
/* What the path said (an ICMP error or a refusal the backend read: "transport:path_hint"),
 * and a line the sender told about it ("app:path_told", KIND a word for the line), in the
 * trace in the order they happened: how soon a line follows its cause reads off one clock. */
void tool_report_hint(tool_report *r, const pl_io_hint *h, uint64_t now_ns);
void tool_report_told(tool_report *r, const char *kind, uint64_t now_ns);
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

/* ---- The live view (tool_status.c): what `pure-link show` prints and SIGUSR1 logs. ---- */
#define TOOL_STATUS_BYTES_MOST (1u << 20)   /* one answer; a longer one is cut and says so */
typedef struct tool_status_run {             /* what the tool adds to pure_link_run_info */
    uint64_t run;                            /* the run these names are of */
    char source[PURE_LINK_NAME_MOST + 1], input[PURE_LINK_NAME_MOST + 1];
    uint64_t sample_bytes;                   /* bytes_delivered at the last sample */
    double rate_bits;                        /* over the last second */
} tool_status_run;
typedef struct tool_status {
    uint32_t runs_most;
    tool_status_run *runs;                   /* by stream handle */
    uint64_t start_ns, sample_ns, sample_bytes;
    double rate_bits;                        /* bytes made durable, over the last second */
} tool_status;
int tool_status_init(tool_status *s, uint32_t runs_most, uint64_t now_ns);   /* 0 or -1 */
void tool_status_free(tool_status *s);
void tool_status_opened(tool_status *s, const pure_link_event *ev);      /* at each STREAM_OPEN */
void tool_status_sample(tool_status *s, pure_link *pl, uint64_t stored_bytes, uint64_t now_ns);
struct pl_store;
typedef struct tool_status_recv_view {
    tool_status *status;
    pure_link *pl;
    struct pl_store *store;
    const tool_config *config;
    const int *peer_index;                   /* the core's index of each config peer (NULL: the same) */
    const char *listen;
    uint64_t streams_opened, refusals_logged, reloads;
} tool_status_recv_view;
/* Renders into buf (cap bytes): text, or one JSON object and a newline.  Returns the length. */
size_t tool_status_recv(const tool_status_recv_view *v, int json, char *buf, size_t cap, uint64_t now_ns);
/* A sender's: its run and stream, how far it is, and its path to the receiver. */
typedef struct tool_status_send_view {
    pure_link *pl;
    int sender;
    const char *to, *source, *input;
    int64_t stored, queued;                  /* records heard stored, records read */
    uint64_t stored_bytes, start_ns, answered_ns;   /* answered_ns 0: nothing came back yet */
    double rate_bits;                        /* record bytes stored, over the last second or two */
    int input_open, resuming, refused;
    const char *refused_why;                 /* while refused */
} tool_status_send_view;
size_t tool_status_send(const tool_status_send_view *v, int json, char *buf, size_t cap, uint64_t now_ns);
/* Writes the text status to the log, one line each (SIGUSR1). */
void tool_status_log(const char *text, size_t len);

/* ---- The control socket (tool_control.c): a unix stream socket, mode 0600, that answers
 * "text\n" or "json\n" with the status and closes.  Default place: COMMAND-PID.sock in
 * tool_control_dir(); --control PATH names it. ---- */
typedef struct tool_control tool_control;
typedef size_t tool_status_fn(void *ctx, int json, char *buf, size_t cap, uint64_t now_ns);
const char *tool_control_dir(char *buf, size_t len);
/* Binds the socket (path NULL: the default place): a TOOL_* code, logged. */
int tool_control_open(tool_control **out, const char *path, const char *command);
const char *tool_control_path(const tool_control *c);
/* The descriptor to watch (an epoll set): readable when a client or the extra one is. */
int tool_control_fd(const tool_control *c);
/* Watches fd too (a sender's stdin): tool_control_serve then says when it is readable. */
int tool_control_watch_also(tool_control *c, int fd);
/* Serves what is ready, without blocking; returns 1 when the extra descriptor is readable. */
int tool_control_serve(tool_control *c, tool_status_fn *render, void *ctx, uint64_t now_ns);
void tool_control_close(tool_control *c);   /* removes the socket's name */
int tool_show_main(int argc, char **argv);
/* Runs the handlers of signals pending while the loop is busy (at most every 10 ms). */
void tool_signals_poll(uint64_t now_ns);

/* ---- Reload (tool_reload.c): what a running receiver's config may change. ---- */
typedef struct tool_reload_state {
    const char *command;       /* the log's label ("pure-link recv") */
    pure_link *pl;
    struct pl_store *store;
    tool_config *config;       /* replaced in place by a reload */
    int *peer_index;           /* the core's index of each config peer (TOOL_PEERS_MOST) */
    uint32_t peers_most;       /* what the endpoint was built for */
    size_t peers_started;
    uint64_t reloads;
} tool_reload_state;
/* Rereads path and applies it: 0, or -1 with one line logged and nothing changed. */
int tool_reload(tool_reload_state *r, const char *path, uint64_t now_ns);

/* ---- Reading record files back (tool_plr.c), for cat (tool_cat.c) and verify
 * (tool_verify.c): the store judges the bytes (pl_store_frame_read), these read them. ---- */
#define TOOL_READ_CHUNK_BYTES (1u << 20)   /* one read of a record file */
#define TOOL_CAT_FILES_MOST 4096u          /* record files one cat or verify reads */
typedef struct tool_plr {
    char *path;
    int fd;
    uint64_t dev, ino;        /* of the file opened (cat --follow: replaced when they change) */
    pl_store_file_id id;      /* its header */
    uint64_t pos;             /* file offset of the next frame */
    uint64_t index;           /* whole frames read before pos */
    int err;                  /* errno of a failed read (TOOL_PLR_IO) */
    uint8_t *buf;             /* the file's bytes from buf_off on */
    size_t buf_len, buf_cap;
    uint64_t buf_off;
} tool_plr;
/* Opens a record file and reads its header: 0; 1 when it is not a record file (the header
 * is short or invalid); -errno (with r->path set: tool_plr_close it either way). */
int tool_plr_open(tool_plr *r, const char *path);
void tool_plr_close(tool_plr *r);
/* Frees the read window (a file at its end holds no memory until it is read again). */
void tool_plr_rest(tool_plr *r);
/* The next frame: 1 (*f, and *data its bytes, valid until the next call); 0 when the file
 * ends before a whole frame (the end, or a tail torn or still being written: more bytes may
 * come); PL_STORE_FRAME_BAD_HEAD or _CRC with *why; TOOL_PLR_IO with r->err.  Only a
 * whole, valid frame moves r->pos. */
#define TOOL_PLR_IO (-3)
int tool_plr_next(tool_plr *r, pl_store_frame *f, const uint8_t **data, const char **why);
/* After a frame at r->pos that is not whole and valid: 1 with *next_off when a valid frame
 * starts after it (the bad one is damage), 0 when none does (a torn tail), 2 when the frame
 * at r->pos is whole and valid when read again (a receiver wrote it meanwhile: read on),
 * -errno. */
int tool_plr_after(tool_plr *r, uint64_t *next_off);
/* The "*.plr" files of dir (not "*.plr.tmp": nothing in those is stored), as "dir/name",
 * sorted by name (byte order): 0 or -errno (-EMFILE past TOOL_CAT_FILES_MOST); free each. */
int tool_plr_list(const char *dir, char ***names, size_t *len);
int tool_cat_main(int argc, char **argv);
int tool_verify_main(int argc, char **argv);

#endif
