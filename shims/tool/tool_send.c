/* tool_send.c: `pure-link send`: records from stdin (a line each, or length-prefixed with
 * --framed), from files (one record each) or from a generator, to one input of a
 * receiver; exits 0 once every record is stored. */
#define _GNU_SOURCE
#include "tool.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK_BYTES (1u << 20)           /* one read() of stdin */
#define FRAME_HEADER_BYTES 4u                 /* --framed: a 32-bit big-endian length */
#define PROGRESS_NS 250000000ull              /* a progress line every 250 ms */
#define METRICS_NS 100000000ull               /* qlog metrics every 100 ms */
#define ANSWER_CHECK_NS 250000000ull          /* answers from the receiver looked for every 250 ms */
#define SILENCE_NS 1500000000ull              /* no answer this long while records wait: one line
                                                 (with the check, within 2 s of the cause) */

enum { SRC_LINES, SRC_FRAMED, SRC_FILES, SRC_GENERATE };

typedef struct sender_tool {
    pure_link *pl;
    int sender;
    tool_report report;
    /* input */
    int source_kind, fd, fd_is_file, eof, closed;
    uint8_t *buf;               /* stdin bytes not yet queued */
    size_t buf_start, buf_end, buf_cap;
    char **files;
    int files_len, file_next;
    uint64_t generate_count, generate_size, generated;
    int64_t queued;
    uint64_t bytes_queued;
    /* --resume: records wait for the receiver's answer, then `skip` of the input are its own */
    int resuming, resume;  /* resume: --resume was given */
    uint64_t skip, resumed_at;
    const char *source, *input;
    /* the lengths of the records queued and not yet heard stored, oldest first: STORED
     * gives a count, and the summaries count record bytes (as the receiver's do) */
    uint32_t *lens;
    size_t lens_cap, lens_head, lens_len;
    /* progress */
    int64_t stored;
    uint64_t stored_bytes, deadline_ns, refused_since_ns, next_metrics_ns;
    tool_rate_window rate;
    uint32_t refused_reason;
    int refused, done, failed, cut_off;
    pure_link_stats last;       /* the sender's figures, read at every progress step */
    /* the path: what it said, each cause told in one line (again after answers came back) */
    pure_link_addr to;
    uint64_t answer_check_ns, answered_ns, opened_seen;
    uint64_t sent_seen, looked_ns;  /* the packets sent at the last look at the answers, its time */
    uint64_t asked_ns;              /* the first packet not answered went after it (0: none) */
    int told_port, told_host, told_silent, told_waiting;
    tool_control *control;      /* pure-link show (NULL: --control none, or none could be made) */
    uint64_t size_told, size_seen, probes_seen, size_since_ns, black_holes_told;   /* datagram sizes */
} sender_tool;

static const char *reason_text(uint32_t reason) {
    switch (reason) {
    case 1: return "no such input";
    case 2: return "the input has another shape";
    case 3: return "this source is not allowed for this key";
    case 4: return "the receiver cannot store this input now (its disk or directory failed)";
    case 5: return "cut off: a newer run of this source took it over";
    default: return "unknown reason";
    }
}

/* ---- records from the input ---- */

/* A generated record: its number in the first 8 bytes (little-endian), then byte k is
 * (i * 131 + k) mod 256, so that a receiver's store can be checked byte for byte.  Such a
 * record is a window of one buffer whose byte j is j mod 256 (filled once), starting at
 * i * 131 mod 256, with its first 8 bytes stamped with the number and restored once the
 * core took its copy: no work per byte, and none again when the queue was full. */
static size_t generate_buf_bytes(uint64_t size) { return 256u + (size_t)size; }

static void generate_setup(uint8_t *buf, size_t len) {
    for (size_t j = 0; j < len; j++) buf[j] = (uint8_t)j;
}

static uint8_t *generate_stamp(uint8_t *buf, uint64_t size, uint64_t i) {
    uint8_t *rec = buf + (size_t)((i * 131u) & 0xffu);
    for (size_t k = 0; k < 8 && k < size; k++) rec[k] = (uint8_t)(i >> (8 * k));
    return rec;
}

static void generate_unstamp(uint8_t *buf, uint8_t *rec, uint64_t size) {
    size_t at = (size_t)(rec - buf);
    for (size_t k = 0; k < 8 && k < size; k++) rec[k] = (uint8_t)(at + k);
}

/* The next whole record in the stdin buffer: 1 (at *rec, *len, *used bytes), 0 for more
 * bytes, -1 for a frame larger than the limit. */
static int next_buffered(sender_tool *t, const uint8_t **rec, size_t *len, size_t *used) {
    const uint8_t *p = t->buf + t->buf_start;
    size_t have = t->buf_end - t->buf_start;
    if (t->source_kind == SRC_LINES) {
        const uint8_t *nl = memchr(p, '\n', have);
        if (nl == NULL) {
            if (!t->eof || have == 0) return have > PURE_LINK_RECORD_MOST ? -1 : 0;
            *rec = p, *len = have, *used = have; /* a last line without its newline */
            return 1;
        }
        *rec = p, *len = (size_t)(nl - p), *used = *len + 1;
        return *len > PURE_LINK_RECORD_MOST ? -1 : 1;
    }
    if (have < FRAME_HEADER_BYTES) return 0;
    uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (n > PURE_LINK_RECORD_MOST) return -1;
    if (have < FRAME_HEADER_BYTES + n) return 0;
    *rec = p + FRAME_HEADER_BYTES, *len = n, *used = FRAME_HEADER_BYTES + n;
    return 1;
}

/* One read of stdin into the buffer (moving what is left to its start). */
static int read_some(sender_tool *t) {
    if (t->buf_start > 0) {
        memmove(t->buf, t->buf + t->buf_start, t->buf_end - t->buf_start);
        t->buf_end -= t->buf_start, t->buf_start = 0;
    }
    size_t room = t->buf_cap - t->buf_end;
    if (room == 0) return 0;
    ssize_t n = read(t->fd, t->buf + t->buf_end, room < READ_CHUNK_BYTES ? room : READ_CHUNK_BYTES);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (n < 0) {
        tool_log("stdin: %s", strerror(errno));
        return -1;
    }
    if (n == 0) t->eof = 1;
    t->buf_end += (size_t)n;
    return 0;
}

/* Twice the room for lengths, the ring unrolled into it; 0 or -1 (logged). */
static int lens_grow(sender_tool *t) {
    size_t cap = t->lens_cap ? 2 * t->lens_cap : 1024;
    uint32_t *lens = malloc(cap * sizeof *lens);
    if (lens == NULL) {
        tool_log("out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->lens_len; i++) lens[i] = t->lens[(t->lens_head + i) % t->lens_cap];
    free(t->lens);
    t->lens = lens, t->lens_cap = cap, t->lens_head = 0;
    return 0;
}

/* Queues one record; 1 when queued, 0 when the queue is full, -1 on error. */
static int queue(sender_tool *t, const void *rec, size_t len, uint64_t now) {
    int64_t r = pure_link_send(t->pl, t->sender, rec, len, now);
    if (r == PURE_LINK_ERR_FULL) return 0;
    if (r < 0) {
        tool_log("record %lld: %s", (long long)t->queued, pure_link_strerror((int)r));
        return -1;
    }
    if (t->lens_len == t->lens_cap && lens_grow(t) != 0) return -1;
    t->lens[(t->lens_head + t->lens_len++) % t->lens_cap] = (uint32_t)len;
    t->queued++;
    t->bytes_queued += len;
    return 1;
}

/* Records up to `record` (exclusive) are stored: their bytes are counted. */
static void stored_to(sender_tool *t, int64_t record) {
    for (; t->stored < record && t->lens_len > 0; t->stored++, t->lens_len--) {
        t->stored_bytes += t->lens[t->lens_head];
        t->lens_head = (t->lens_head + 1) % t->lens_cap;
    }
    assert(t->stored == record); /* STORED never counts past what was queued */
}

static int queue_file(sender_tool *t, uint64_t now) {
    const char *path = t->files[t->file_next];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        tool_log("%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > PURE_LINK_RECORD_MOST) {
        tool_log("%s: %lld bytes, more than a record may hold (16 MiB)", path, (long long)st.st_size);
        close(fd);
        return -1;
    }
    size_t got = 0, want = (size_t)st.st_size;
    while (got < want) {
        ssize_t n = read(fd, t->buf + got, want - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    if (got != want) {
        tool_log("%s: could not read it whole", path);
        return -1;
    }
    int r = queue(t, t->buf, got, now);
    if (r == 1) t->file_next++;
    return r;
}

/* The input has fewer records than the receiver holds of the source: not that input. */
static int skip_short(sender_tool *t, uint64_t have) {
    tool_log("--resume: the receiver holds %llu records of source '%s', the input has only %llu: "
             "not the input it holds (a new stream needs another --source)",
             (unsigned long long)t->resumed_at, t->source, (unsigned long long)have);
    return -1;
}

/* Passes over the records the receiver holds (--resume): 1 when done, 0 for more stdin
 * bytes, -1 when the input is shorter (logged). */
static int skip_held(sender_tool *t) {
    if (t->source_kind == SRC_GENERATE) {
        if (t->generate_count < t->skip) return skip_short(t, t->generate_count);
        t->generated = t->skip, t->skip = 0;
        return 1;
    }
    if (t->source_kind == SRC_FILES) {
        if ((uint64_t)t->files_len < t->skip) return skip_short(t, (uint64_t)t->files_len);
        t->file_next = (int)t->skip, t->skip = 0;
        return 1;
    }
    while (t->skip > 0) {
        const uint8_t *rec;
        size_t len, used;
        int k = next_buffered(t, &rec, &len, &used);
        if (k < 0) return skip_short(t, t->resumed_at - t->skip);
        if (k > 0) {
            t->buf_start += used, t->skip--;
            continue;
        }
        if (t->eof) return skip_short(t, t->resumed_at - t->skip);
        if (read_some(t) != 0) return -1;
        if (!t->eof && t->buf_end - t->buf_start < t->buf_cap) return 0;
    }
    return 1;
}

/* Queues records until the input is empty for now or the sender's queue is full.  Returns
 * 0 or -1 (an input error, logged). */
static int feed(sender_tool *t, int readable, uint64_t now) {
    if (t->resuming) return 0;  /* nothing is numbered before the receiver answers */
    if (t->skip > 0) {
        int k = skip_held(t);
        if (k <= 0) return k;
    }
    while (!t->closed) {
        int r;
        if (t->source_kind == SRC_GENERATE) {
            if (t->generated == t->generate_count) break;
            uint8_t *rec = generate_stamp(t->buf, t->generate_size, t->generated);
            r = queue(t, rec, t->generate_size, now);
            generate_unstamp(t->buf, rec, t->generate_size);
            if (r == 1) t->generated++;
        } else if (t->source_kind == SRC_FILES) {
            if (t->file_next == t->files_len) break;
            r = queue_file(t, now);
        } else {
            const uint8_t *rec;
            size_t len, used;
            int k = next_buffered(t, &rec, &len, &used);
            if (k < 0) {
                tool_log("stdin: record %lld is larger than 16 MiB", (long long)t->queued);
                return -1;
            }
            if (k == 0) {
                if (t->eof) {
                    if (t->buf_end > t->buf_start) {
                        tool_log("stdin: the input ends inside a frame (record %lld)", (long long)t->queued);
                        return -1;
                    }
                    break;
                }
                if (!readable && !t->fd_is_file) return 0;
                if (read_some(t) != 0) return -1;
                readable = 0; /* one read per readiness: a pipe would block on the next */
                continue;
            }
            r = queue(t, rec, len, now);
            if (r == 1) t->buf_start += used;
        }
        if (r < 0) return -1;
        if (r == 0) return 0;
    }
    if (!t->closed) {
        t->closed = 1;
        pure_link_sender_close(t->pl, t->sender, now);
    }
    return 0;
}

/* ---- the driver's host ---- */

/* The rate of the last RATE_WINDOW_NS: a stall shows as one, not as a slowly sinking average. */
#define RATE_WINDOW_NS 1000000000ull

static void progress(sender_tool *t, uint64_t now, int final) {
    if (!t->report.progress) return;
    if (!final && now < t->report.progress_next_ns) return;
    t->report.progress_next_ns = now + PROGRESS_NS;
    double s = (double)(now - t->report.start_ns) / 1e9;
    char rate[32], bytes[32];
    double bps = tool_rate_recent(&t->rate, t->stored_bytes, now, RATE_WINDOW_NS);
    fprintf(stderr, "\r  stored %lld/%lld records (%s)%s  %s  rtt %.2f ms  retransmits %llu  %.1f s   %s",
            (long long)t->stored, (long long)t->queued, tool_bytes(t->stored_bytes, bytes, sizeof bytes),
            t->closed ? "" : ", input open", tool_rate(bps * 8, rate, sizeof rate),
            (double)t->last.rtt_ns_smoothed / 1e6, (unsigned long long)t->last.packets_retransmitted, s,
            final ? "\n" : "");
}

static int on_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    sender_tool *t = ctx;
    tool_report_event(&t->report, ev, refused, now);
    switch (ev->kind) {
    case PURE_LINK_EVENT_STORED:
        if (t->resuming) {
            /* The answer: the receiver holds the records before this one (its count). */
            t->resuming = 0;
            t->resumed_at = t->skip = (uint64_t)ev->record;
            t->queued = t->stored = ev->record;
            tool_log("resuming source '%s' after record %lld: the receiver holds %lld records of it",
                     t->source, (long long)ev->record, (long long)ev->record);
            break;
        }
        stored_to(t, ev->record);
        break;
    case PURE_LINK_EVENT_REFUSED:
        progress(t, now, 1);
        if (ev->reason == PURE_LINK_CUT_OFF) {
            /* For good (spec/protocol.md §4.3): every trial would be refused again, and the
             * newer run stores the source from where the receiver stands. */
            tool_log("cut off by the receiver: a newer run of source '%s' took it over (%s); stopping: %lld of %lld "
                     "records stored by this run", t->source,
                     t->resume ? "another sender on this source, or this one started again"
                               : "it is sent with --resume: send it with --resume every time",
                     (long long)t->stored, (long long)t->queued);
            t->cut_off = 1;
            return 1;
        }
        tool_log("the receiver refused the stream: %s; retrying%s", reason_text(ev->reason),
                 t->deadline_ns != UINT64_MAX ? " until --deadline" : " (Ctrl-C stops)");
        t->refused = 1, t->refused_reason = ev->reason, t->refused_since_ns = now;
        break;
    case PURE_LINK_EVENT_RELEASED:
        tool_log("the receiver accepts the stream now");
        t->refused = 0;
        break;
    case PURE_LINK_EVENT_CLOSED:
        pure_link_stats_get(pl, t->sender, &t->last);
        t->done = 1;
        return 1;
    default:
        break;
    }
    return 0;
}

/* ---- what the path says: a line for each cause, within about 2 s of it ---- */

static const char *to_text(const sender_tool *t, char *buf, size_t len) { return pl_addr_format(&t->to, buf, len); }

/* The answers the endpoint opened (authenticated packets from the receiver) so far: 1 when
 * more came since the last look (then noted, with the time). */
static int answers_came(sender_tool *t, pure_link *pl, uint64_t now) {
    pure_link_stats ep = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(pl, -1, &ep);
    /* Silence counts from the first packet sent after the last answer: a sender with nothing
     * to send (waiting out a refusal's back-off, an input that brings nothing) awaits no answer. */
    if (ep.packets_sent != t->sent_seen && t->asked_ns == 0) t->asked_ns = t->looked_ns ? t->looked_ns : t->report.start_ns;
    t->sent_seen = ep.packets_sent, t->looked_ns = now;
    if (ep.packets_opened == t->opened_seen) return 0;
    t->opened_seen = ep.packets_opened, t->answered_ns = now, t->asked_ns = 0;
    return 1;
}

/* Looks at the answers: none at all since the start, or none for a while in the middle, is
 * told once; their return after any line about the path is told too. */
static void watch_answers(sender_tool *t, pure_link *pl, uint64_t now) {
    char where[64];
    uint64_t opened_before = t->opened_seen, answered_before = t->answered_ns;
    if (answers_came(t, pl, now)) {
        if ((t->told_silent || t->told_port || t->told_host) && opened_before) {
            tool_log("answers from %s again after %.1f s", to_text(t, where, sizeof where),
                     (double)(now - answered_before) / 1e9);
            tool_report_told(&t->report, "answers_again", now);
        } else if (t->told_silent || t->told_port || t->told_host) {
            tool_log("answers from %s after %.1f s", to_text(t, where, sizeof where),
                     (double)(now - t->report.start_ns) / 1e9);
            tool_report_told(&t->report, "answers", now);
        }
        t->told_silent = t->told_port = t->told_host = 0;
        return;
    }
    uint64_t since = t->asked_ns;
    if (t->told_silent || since == 0 || now - since < SILENCE_NS || t->done || (t->closed && t->stored == t->queued))
        return;
    if (t->resuming && t->opened_seen != 0) {
        /* The receiver answers an ask once its records of the source are durable
         * (spec/protocol.md §4.3): a busy disk, or a run still appending to the source. */
        if (!t->told_waiting) {
            tool_log("waiting for the receiver's answer to resume source '%s' for %.1f s (it answered the handshake; "
                     "it answers once its records of the source are durable: a busy disk, or another sender still "
                     "appending to it); still trying", t->source, (double)(now - since) / 1e9);
            tool_report_told(&t->report, "resume_wait", now);
        }
        t->told_waiting = 1;
        return;
    }
    t->told_silent = 1;
    if (t->opened_seen == 0 && !t->told_port && !t->told_host) {
        tool_log("nothing came back from %s in %.1f s: check the address (--to), that no firewall drops UDP "
                 "to port %u or its answers, and that --peer is the receiver's public key (pure-link pub "
                 "RECEIVER.key): a receiver answers nothing to a wrong key; still trying",
                 to_text(t, where, sizeof where), (double)(now - since) / 1e9, pl_addr_port(&t->to));
        tool_report_told(&t->report, "nothing_back", now);
    } else if (t->opened_seen != 0 && !t->told_port && !t->told_host) {   /* an ICMP line said why */
        tool_log("no answer from %s for %.1f s (%lld of %lld records stored): the path or the receiver is "
                 "down; still trying", to_text(t, where, sizeof where), (double)(now - since) / 1e9,
                 (long long)t->stored, (long long)t->queued);
        tool_report_told(&t->report, "no_answer", now);
    }
}

#define SIZE_SETTLED_NS 1000000000ull   /* a size below the full one, kept this long with no size
                                           probe sent, is told */
/* The datagram size the endpoint found, told when it is below the full size: at once after
 * a black hole, else once larger probes were lost and the search has ended (the size held,
 * and no probe sent, for a while: a size the search only passed through is not told). */
static void watch_size(sender_tool *t, pure_link *pl, uint64_t now) {
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    if (pure_link_stats_get(pl, t->sender, &st) != 0) return;
    char where[64];
    if (st.pmtu_black_holes > t->black_holes_told) {
        t->black_holes_told = st.pmtu_black_holes, t->size_told = st.datagram_bytes;
        tool_log("full-size datagrams to %s were lost while smaller ones arrived (a smaller MTU on the path, "
                 "its ICMP blocked): going on at %llu B", to_text(t, where, sizeof where),
                 (unsigned long long)st.datagram_bytes);
        tool_report_told(&t->report, "black_hole", now);
    }
    if (st.datagram_bytes != t->size_seen || st.pmtu_probes_sent != t->probes_seen) {
        t->size_seen = st.datagram_bytes, t->probes_seen = st.pmtu_probes_sent, t->size_since_ns = now;
        return;
    }
    if (st.datagram_bytes >= PURE_LINK_DATAGRAM_MOST || st.datagram_bytes == t->size_told || st.pmtu_probes_lost == 0 ||
        now - t->size_since_ns < SIZE_SETTLED_NS)
        return;
    t->size_told = st.datagram_bytes;
    tool_log("only datagrams of up to %llu B get through to %s (larger ones were lost): going on at that size",
             (unsigned long long)st.datagram_bytes, to_text(t, where, sizeof where));
    tool_report_told(&t->report, "size_found", now);
}

/* What the kernel said about the path to the receiver (ICMP, read by the backend). */
static void on_hint(void *ctx, const pl_io_hint *h, uint64_t now) {
    sender_tool *t = ctx;
    if (h->to.len != t->to.len || memcmp(h->to.bytes, t->to.bytes, t->to.len) != 0) return;
    tool_report_hint(&t->report, h, now);
    char where[64], who[64];
    to_text(t, where, sizeof where);
    if (h->from.len) pl_addr_format_host(&h->from, who, sizeof who);   /* an ICMP's source has no port */
    else snprintf(who, sizeof who, "this host");
    /* Answers opened before this error are not its end: only those after it are. */
    if ((h->kind == PL_IO_HINT_PORT_UNREACHABLE && !t->told_port) || (h->kind == PL_IO_HINT_HOST_UNREACHABLE && !t->told_host))
        answers_came(t, t->pl, now);
    if (h->kind == PL_IO_HINT_PORT_UNREACHABLE && !t->told_port) {
        t->told_port = 1;
        tool_log("the receiver's port is closed: %s answered ICMP port unreachable for %s (is pure-link recv "
                 "running there, listening on that port?); still trying", who, where);
        tool_report_told(&t->report, "port_closed", now);
    } else if (h->kind == PL_IO_HINT_HOST_UNREACHABLE && !t->told_host) {
        t->told_host = 1;
        tool_log("the receiver's host is unreachable: %s answered ICMP unreachable for %s (no route or no "
                 "link to it, or a firewall that rejects; check --to); still trying", who, where);
        tool_report_told(&t->report, "host_unreachable", now);
    } else if (h->kind == PL_IO_HINT_TOO_BIG && h->datagram_bytes && h->datagram_bytes < PURE_LINK_DATAGRAM_MOST &&
               h->datagram_bytes != t->size_told) {
        t->size_told = h->datagram_bytes;
        tool_log("the path to %s carries datagrams of at most %u B (MTU %u, said by %s): going on with "
                 "smaller ones", where, h->datagram_bytes, h->mtu, who);
        tool_report_told(&t->report, "too_big", now);
    }
}

/* What pure-link show prints of this sender (tool_status.c). */
static size_t render(void *ctx, int json, char *buf, size_t cap, uint64_t now) {
    sender_tool *t = ctx;
    char to[64];
    tool_status_send_view v = {.pl = t->pl, .sender = t->sender, .to = to_text(t, to, sizeof to), .source = t->source,
                               .input = t->input, .stored = t->stored, .queued = t->queued,
                               .stored_bytes = t->stored_bytes, .start_ns = t->report.start_ns,
                               .answered_ns = t->opened_seen ? t->answered_ns : 0,
                               .rate_bits = 8 * tool_rate_recent(&t->rate, t->stored_bytes, now, RATE_WINDOW_NS),
                               .input_open = !t->closed, .resuming = t->resuming, .refused = t->refused,
                               .refused_why = reason_text(t->refused_reason)};
    return tool_status_send(&v, json, buf, cap, now);
}

static int on_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    sender_tool *t = ctx;
    if (tool_signal_noted() == SIGUSR1) {
        char bytes[32];
        pure_link_stats_get(pl, t->sender, &t->last);
        tool_log("SIGUSR1: %lld of %lld records (%s of records) stored%s; rtt %.2f ms, %llu retransmits%s",
                 (long long)t->stored, (long long)t->queued, tool_bytes(t->stored_bytes, bytes, sizeof bytes),
                 t->closed ? "" : ", input open", (double)t->last.rtt_ns_smoothed / 1e6,
                 (unsigned long long)t->last.packets_retransmitted, t->refused ? ", refused by the receiver" : "");
    }
    /* The backend watches the control socket's epoll set, with stdin in it (open_watches). */
    if (t->control) watched = watched && tool_control_serve(t->control, render, t, now);
    if (feed(t, watched, now) != 0) {
        t->failed = 1;
        return 1;
    }
    if (now >= t->answer_check_ns) {
        watch_answers(t, pl, now);
        watch_size(t, pl, now);
        t->answer_check_ns = now + ANSWER_CHECK_NS;
    }
    if (now >= t->report.progress_next_ns || now >= t->next_metrics_ns) {
        pure_link_stats_get(pl, t->sender, &t->last);
        if (now >= t->next_metrics_ns) {
            tool_report_metrics(&t->report, &t->last, now);
            t->next_metrics_ns = now + METRICS_NS;
        }
        progress(t, now, 0);
    }
    return now >= t->deadline_ns ? 2 : 0;
}

static void on_datagram(void *ctx, int sent, const pure_link_addr *peer, size_t len, uint64_t now) {
    sender_tool *t = ctx;
    tool_report_datagram(&t->report, sent, peer, len, now);
}

static uint64_t wake_ns(void *ctx) {
    sender_tool *t = ctx;
    uint64_t at = t->deadline_ns;
    if (t->report.progress && t->report.progress_next_ns < at) at = t->report.progress_next_ns;
    if (t->report.qlog && t->next_metrics_ns < at) at = t->next_metrics_ns;
    if (t->answer_check_ns < at) at = t->answer_check_ns;
    return at; /* feed() queues until the sender is full: then only the network can help */
}

/* ---- options ---- */

typedef struct send_options {
    tool_link_options link;
    const char *to, *peer, *source, *input, *bind, *control;
    uint64_t shape, deadline_ns, generate, size;
    uint64_t epoch_ns, epoch_packets, pmtu_raise_ns;   /* 0: the core's defaults */
    int framed, have_generate, resume;
} send_options;

/* A duration option OPTION of LEAST..MOST, which RANGE names ("1ms..24h"). */
static int parse_interval(const char *text, const char *option, uint64_t least, uint64_t most, const char *range,
                          uint64_t *out) {
    if (tool_parse_duration(text, option, out) != 0) return -1;
    if (*out >= least && *out <= most) return 0;
    tool_log("%s %s: want %s", option, text, range);
    return -1;
}

/* --epoch-packets N: 1..PURE_LINK_EPOCH_PACKETS_MOST, what the core takes (0 would mean its
 * default there, so it is refused here rather than read as "never"). */
static int parse_epoch_packets(const char *text, uint64_t *out) {
    if (tool_parse_count(text, "--epoch-packets", out) != 0) return -1;
    if (*out >= 1 && *out <= PURE_LINK_EPOCH_PACKETS_MOST) return 0;
    tool_log("--epoch-packets %s: want 1..%llu (2^23 - 2^16: the last 2^16 packets under a key carry only "
             "the offer of the next)", text, (unsigned long long)PURE_LINK_EPOCH_PACKETS_MOST);
    return -1;
}

static int send_option(void *ctx, int c, const char *arg) {
    send_options *o = ctx;
    switch (c) {
    case 't': o->to = arg; return 0;
    case 'p': o->peer = arg; return 0;
    case 's': o->source = arg; return 0;
    case 'i': o->input = arg; return 0;
    case 'S': return tool_parse_count(arg, "--shape", &o->shape);
    case 'b': o->bind = arg; return 0;
    case 'f': o->framed = 1; return 0;
    case 'U': o->resume = 1; return 0;
    case 'C': o->control = arg; return 0;
    case 'g': o->have_generate = 1; return tool_parse_count(arg, "--generate", &o->generate);
    case 'z': return tool_parse_size(arg, "--size", &o->size);
    case 'd': return tool_parse_duration(arg, "--deadline", &o->deadline_ns);
    case 'E': return parse_interval(arg, "--epoch-time", TOOL_EPOCH_NS_LEAST, TOOL_EPOCH_NS_MOST, "1ms..24h", &o->epoch_ns);
    case 'M':
        return parse_interval(arg, "--pmtu-raise", TOOL_PMTU_RAISE_NS_LEAST, TOOL_PMTU_RAISE_NS_MOST, "1s..24h",
                              &o->pmtu_raise_ns);
    case 'N': return parse_epoch_packets(arg, &o->epoch_packets);
    default: assert(0 && "an option in the table without a case"); return -1;
    }
}

static int parse_options(int argc, char **argv, send_options *o) {
    static const struct option longs[] = {
        {"to", required_argument, 0, 't'},         {"peer", required_argument, 0, 'p'},
        {"source", required_argument, 0, 's'},     {"input", required_argument, 0, 'i'},
        {"shape", required_argument, 0, 'S'},      {"bind", required_argument, 0, 'b'},
        {"framed", no_argument, 0, 'f'},           {"generate", required_argument, 0, 'g'},
        {"size", required_argument, 0, 'z'},       {"deadline", required_argument, 0, 'd'},
        {"epoch-time", required_argument, 0, 'E'}, {"epoch-packets", required_argument, 0, 'N'},
        {"resume", no_argument, 0, 'U'},           {"pmtu-raise", required_argument, 0, 'M'},
        {"control", required_argument, 0, 'C'},    {0, 0, 0, 0}};
    *o = (send_options){.source = "out", .deadline_ns = UINT64_MAX, .size = 1024};
    if (tool_options_parse(argc, argv, "send", "t:p:s:i:fg:d:", longs, send_option, o, 1, &o->link) != 0) return -1;
    const char *missing = !o->to ? "--to HOST:PORT" : !o->peer ? "--peer KEY"
                          : !o->input ? "--input NAME" : NULL;
    if (missing) {
        tool_log("missing %s (see pure-link help send)", missing);
        return -1;
    }
    if (o->size > PURE_LINK_RECORD_MOST) {
        tool_log("--size %llu: a record holds at most 16 MiB", (unsigned long long)o->size);
        return -1;
    }
    if (strlen(o->source) < 1 || strlen(o->source) > PURE_LINK_NAME_MOST || strlen(o->input) > PURE_LINK_NAME_MOST ||
        !o->input[0]) {
        tool_log("--source and --input names have 1..64 bytes");
        return -1;
    }
    if (o->have_generate && (optind < argc || o->framed)) {
        tool_log("--generate takes no FILE and no --framed");
        return -1;
    }
    return 0;
}

static int setup_input(sender_tool *t, const send_options *o, int argc, char **argv) {
    t->fd = -1;
    if (o->have_generate) {
        t->source_kind = SRC_GENERATE;
        t->generate_count = o->generate, t->generate_size = o->size;
        t->buf_cap = generate_buf_bytes(o->size);
    } else if (optind < argc && !(argc - optind == 1 && strcmp(argv[optind], "-") == 0)) {
        t->source_kind = SRC_FILES;
        t->files = argv + optind, t->files_len = argc - optind;
        t->buf_cap = PURE_LINK_RECORD_MOST;
    } else {
        t->source_kind = o->framed ? SRC_FRAMED : SRC_LINES;
        t->fd = 0;
        t->buf_cap = PURE_LINK_RECORD_MOST + FRAME_HEADER_BYTES + READ_CHUNK_BYTES;
    }
    t->buf = malloc(t->buf_cap ? t->buf_cap : 1);
    if (t->buf == NULL) {
        tool_log("out of memory");
        return TOOL_ERR_SYSTEM;
    }
    if (t->source_kind == SRC_GENERATE) generate_setup(t->buf, t->buf_cap);
    return TOOL_OK;
}

static int open_sender(sender_tool *t, const send_options *o, pure_link_config *cfg, void **mem) {
    int code = tool_key_load(o->link.key, cfg->static_secret);
    if (code != TOOL_OK) return code;
    pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = o->source, .input = o->input,
                                  .shape = o->shape, .resume = (uint32_t)o->resume};
    t->resuming = t->resume = o->resume, t->source = o->source, t->input = o->input;
    if (tool_parse_key_hex(o->peer, sc.receiver_public) != 0) {
        tool_log("--peer '%s': want the receiver's public key, 64 hex digits (pure-link pub)", o->peer);
        return TOOL_ERR_USAGE;
    }
    char err[256];
    if (pl_addr_parse(o->to, &sc.receiver_addr, err, sizeof err) != 0) {
        tool_log("--to: %s", err);
        return TOOL_ERR_USAGE;
    }
    if (pl_addr_port(&sc.receiver_addr) == 0) {
        tool_log("--to %s: the port must be 1..65535 (port 0 names no receiver)", o->to);
        return TOOL_ERR_USAGE;
    }
    cfg->senders_most = 1;
    cfg->peers_most = PURE_LINK_NONE;
    cfg->epoch_ns = o->epoch_ns;
    cfg->epoch_packets = o->epoch_packets;
    cfg->pmtu_raise_ns = o->pmtu_raise_ns;
    *mem = tool_endpoint(cfg, &t->pl);
    if (*mem == NULL) return TOOL_ERR_SYSTEM;
    t->sender = pure_link_sender_open(t->pl, &sc, pl_now_ns());
    if (t->sender < 0) {
        tool_log("cannot open the sender: %s", pure_link_strerror(t->sender));
        return TOOL_ERR_USAGE;
    }
    return TOOL_OK;
}

static int open_socket(const send_options *o, const pure_link_addr *to, const sigset_t *mask, pl_io **io) {
    sa_family_t family;
    memcpy(&family, to->bytes, sizeof family);
    const char *bind = o->bind ? o->bind : family == AF_INET6 ? "[::]:0" : "0.0.0.0:0";
    return tool_io_open(&o->link, bind, "--bind", mask, io);
}

/* The control socket of pure-link show (--control PATH; by default in tool_control_dir(),
 * and a sender goes on without it when that place cannot take one; --control none: none),
 * which the backend watches with stdin inside its epoll set; else stdin alone. */
static int open_watches(sender_tool *t, const send_options *o, pl_io *io) {
    int w;
    if (!o->control || strcmp(o->control, "none") != 0) {
        int code = tool_control_open(&t->control, o->control, "send");
        if (code != TOOL_OK && o->control) return code;   /* its line is logged */
        if (t->control && (w = io->ops->watch(io, tool_control_fd(t->control))) != 0) {
            tool_log("control socket: the backend cannot watch it: %s", strerror(-w));
            return TOOL_ERR_SYSTEM;
        }
    }
    if (t->fd != 0) return TOOL_OK;
    w = t->control ? tool_control_watch_also(t->control, 0) : io->ops->watch(io, 0);
    t->fd_is_file = w == -EPERM;
    if (w != 0 && w != -EPERM) {
        tool_log("stdin: %s", strerror(-w));
        return TOOL_ERR_SYSTEM;
    }
    return TOOL_OK;
}

static void summary(sender_tool *t, uint64_t now) {
    if (!t->report.progress) return;
    progress(t, now, 1);
    double s = (double)(now - t->report.start_ns) / 1e9;
    char bytes[32], rate[32];
    fprintf(stderr, "  %lld records (%s of records) stored in %.2f s: %s, rtt %.2f ms (min %.2f), %llu epochs, "
            "%llu retransmits\n",
            (long long)t->stored, tool_bytes(t->stored_bytes, bytes, sizeof bytes), s,
            tool_rate(s > 0 ? (double)t->stored_bytes * 8 / s : 0, rate, sizeof rate),
            (double)t->last.rtt_ns_smoothed / 1e6, (double)t->last.rtt_ns_min / 1e6,
            (unsigned long long)t->last.epochs, (unsigned long long)t->last.packets_retransmitted);
}

/* What the loop's end means, as an exit code with its one line. */
static int outcome(sender_tool *t, int r, const char *err, uint64_t now) {
    if (t->done) return TOOL_OK;
    if (t->failed) return TOOL_ERR_SYSTEM; /* the input failed; its line is logged */
    if (t->cut_off) return TOOL_ERR_CUT_OFF;  /* its line is logged */
    if (r < 0) {
        tool_log("%s", err);
        return TOOL_ERR_SYSTEM;
    }
    if (r == 0) {
        tool_log("stopped by a signal: %lld of %lld records stored", (long long)t->stored, (long long)t->queued);
        return TOOL_ERR_STOPPED;
    }
    if (t->refused) {
        tool_log("refused by the receiver (%s) for %.1f s: gave up at --deadline; %lld of %lld records stored",
                 reason_text(t->refused_reason), (double)(now - t->refused_since_ns) / 1e9, (long long)t->stored,
                 (long long)t->queued);
        return TOOL_ERR_REFUSED;
    }
    tool_log("--deadline passed: %lld of %lld records stored (is the receiver up at --to?)", (long long)t->stored,
             (long long)t->queued);
    return TOOL_ERR_DEADLINE;
}

int tool_send_main(int argc, char **argv) {
    send_options o;
    if (parse_options(argc, argv, &o) != 0) return TOOL_ERR_USAGE;
    sender_tool *t = calloc(1, sizeof *t);
    t->last.version = PURE_LINK_STATS_VERSION;
    pure_link_config cfg = {0};
    void *mem = NULL;
    pl_io *io = NULL;
    sigset_t mask;
    tool_signals(&mask, 0);
    int code = setup_input(t, &o, argc, argv);
    /* Every output path is opened before the first datagram: one that cannot be written
     * fails now, not at exit after everything was sent. */
    if (code == TOOL_OK) code = tool_report_open(&t->report, &o.link, "pure-link send");
    if (code == TOOL_OK) code = open_sender(t, &o, &cfg, &mem);
    pure_link_addr to = {0};
    char err[256];
    if (code == TOOL_OK) pl_addr_parse(o.to, &to, err, sizeof err), code = open_socket(&o, &to, &mask, &io);
    t->to = to;
    if (code == TOOL_OK) code = open_watches(t, &o, io);
    if (code == TOOL_OK) {
        uint64_t start = pl_now_ns();
        if (o.deadline_ns != UINT64_MAX) t->deadline_ns = start + o.deadline_ns;
        else t->deadline_ns = UINT64_MAX;
        pl_driver_config dc = {.pl = t->pl, .io = io, .stop = &tool_stop,
                               .host = {.ctx = t, .event = on_event, .turn = on_turn, .datagram = on_datagram,
                                        .wake_ns = wake_ns, .hint = on_hint}};
        if (!o.link.qlog) dc.host.datagram = NULL;
        int r = pl_driver_run(&dc, NULL, err, sizeof err);
        uint64_t now = pl_now_ns();
        if (t->done) summary(t, now);
        else if (t->report.progress) progress(t, now, 1);
        code = outcome(t, r, err, now);
        pure_link_stats ep = {.version = PURE_LINK_STATS_VERSION};
        pure_link_stats_get(t->pl, -1, &ep);
        pure_link_stats_get(t->pl, t->sender, &t->last);
        char extra[256];
        snprintf(extra, sizeof extra, "\"records_queued\":%lld,\"records_stored\":%lld,\"record_bytes\":%llu,"
                 "\"record_bytes_stored\":%llu,\"exit\":%d",
                 (long long)t->queued, (long long)t->stored, (unsigned long long)t->bytes_queued,
                 (unsigned long long)t->stored_bytes, code);
        int sc = tool_report_stats(&t->report, "send", &ep, &t->last, &io->stats, extra, now);
        if (code == TOOL_OK) code = sc;
    }
    tool_report_close(&t->report);
    tool_control_close(t->control);
    if (io) io->ops->close(io);
    free(mem);
    free(t->buf);
    free(t->lens);
    free(t);
    return code;
}
