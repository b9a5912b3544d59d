/* pl_store.h: the receiver host's durable side, for the shims and the tool.
 *
 * A store keeps, for each input, an append-only record file per stream (one sender key and
 * one source name) with an index that survives a crash, and the memo file of the endpoint.
 * It answers the receiver's STREAM_OPEN, RECORD and MEMO_WRITE events and makes their
 * bytes durable by group commit: one fdatasync per file covers every record that arrived
 * while the previous commit ran, and pure_link_stored() / pure_link_memo_written() are
 * called only after that fdatasync returned (and, for a new file, after the fsync of its
 * directory returned that made its name durable).  No call syncs on the caller's thread
 * but pl_store_open, pl_store_close and pl_store_commit.  After a crash, the store tells the core each
 * run's stored mark, so nothing stored is delivered twice and nothing is lost.
 *
 * Ownership: the store allocates its own memory (the shims may) and owns its file
 * descriptors; it keeps no pointer into events or config past the call that passed them.
 * Threads: every call but the syncs of a batch's descriptors runs on one thread; a driver
 * may run those syncs on other threads or as io_uring operations. */
#ifndef PL_STORE_H
#define PL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "pure_link.h"

#define PL_STORE_INPUTS_MOST 256u     /* inputs one store serves */
#define PL_STORE_BATCH_FDS_MOST 1024u /* descriptors one commit batch may name */
#define PL_STORE_STREAMS_PER_INPUT_MOST 1024u /* stream files in one input's directory (each
                                                 keeps a descriptor open); one more is refused */
#define PL_STORE_RUNS_KEPT 4096u      /* runs a stream remembers; past it the least recent is
                                         forgotten (answered as new should it come back) */
#define PL_STORE_FILE_BYTES_MOST (1ull << 40) /* default bound of one stream file: 1 TiB */
#define PL_STORE_CHECKPOINT_BYTES (64u << 20) /* a stream's index is rewritten after this
                                                 many new durable bytes (bounds recovery) */
#define PL_STORE_CLOSE_CHECKPOINT_BYTES (1u << 20) /* close rewrites it past this many (each
                                                      costs an fdatasync; less reads fast) */

/* A failing input: when a write, a new file, a rename or a sync of an input's directory
 * fails (a full disk, a read-only or failing file system, a file-size limit), that input
 * fails alone: the store logs one line through `notice` (the input, its directory and the
 * cause), appends nothing more to it, and refuses its streams with REFUSED reason 4 (the
 * core's pure_link_stream_refuse with -PURE_LINK_CANNOT_STORE; spec/protocol.md §4.1), new
 * ones included; every other input goes on.  Records made durable before the failure stay
 * durable and count in the marks, so a sender's resends are not stored twice.  A failed
 * sync of a batch fails every input with a file in it (the sync names no descriptor); one
 * of the memo fails the whole store, as a memory error does (the memo is the endpoint's).
 * The input is tried again (each stream file cut to its durable end and synced, and a probe
 * of PL_STORE_PROBE_BYTES written and synced in the directory) at the first STREAM_OPEN
 * for it PL_STORE_INPUT_RETRY_NS after it failed or after its last try failed, and at
 * pl_store_inputs_set; when a try works it logs one line and takes streams again. */
#define PL_STORE_INPUT_RETRY_NS (5000000000ull) /* 5 s: a sender tries again 1..64 s apart,
                                                   each try costs a sync per stream file on a
                                                   failing disk; 5 s bounds that and adds at
                                                   most 5 s to a recovery */
#define PL_STORE_PROBE_BYTES (256u << 10)       /* a probe as large as one stream buffer's
                                                   write: a disk with less free would fail
                                                   the first write again */

typedef struct pl_store_input {
    const char *name;  /* input name, 1..PURE_LINK_NAME_MOST bytes */
    uint64_t shape;    /* the shape id senders must announce */
    const char *dir;   /* directory of this input's record files (created if missing) */
} pl_store_input;

typedef struct pl_store_config {
    const pl_store_input *inputs;
    size_t inputs_len;           /* 1..PL_STORE_INPUTS_MOST */
    const char *memo_path;       /* the memo file; NULL keeps no memo */
    size_t memo_bytes;           /* pure_link_memo_size() of the endpoint's config */
    uint64_t file_bytes_most;    /* bound of one stream file; 0: PL_STORE_FILE_BYTES_MOST */
    /* One line for the operator: an input failed, or stores again; a newer run took a
     * source over (may be NULL). */
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
} pl_store_config;

typedef struct pl_store pl_store;

/* Opens the store: creates missing directories, recovers each stream file to its last
 * durable record (a torn tail is cut off, and what is kept is fdatasync'ed before it is
 * claimed), and reads the memo.  Returns 0, or a negative errno with one line in err
 * (NUL-terminated) naming the path and the cause.  It sets SIGXFSZ to SIG_IGN when it is
 * at its default, so that a file-size limit is an EFBIG error, not a kill, and raises the
 * soft RLIMIT_NOFILE to the hard one: every stream keeps its file open.  It locks each
 * input directory and the memo first (flock of a lock file, STORE.md "Files"); one that
 * another process holds is -EWOULDBLOCK, with its holder's process id in the line. */
int pl_store_open(pl_store **out, const pl_store_config *config, char *err, size_t err_len);
/* Closes every file (not while a batch is open); the caller commits first if it wants the
 * last records durable.  Records appended and not committed are not claimed before the
 * next open has made them durable. */
void pl_store_close(pl_store *s);

/* Makes `inputs` the store's inputs while it runs (a receiver's config reloaded): a new name
 * is opened as pl_store_open opens one (its directory created and recovered); a name kept
 * takes its new shape for the streams that open from now on; a name left out takes no new
 * stream (STREAM_OPEN is answered "no such input"), while streams open on it go on until
 * their runs end, and it comes back if named again.  An input's directory cannot change.
 * All or nothing: 0, or a negative errno with one line in err and the inputs as they were.
 * At most PL_STORE_INPUTS_MOST names over the store's life, left-out ones included. */
int pl_store_inputs_set(pl_store *s, const pl_store_input *inputs, size_t len, char *err, size_t err_len);

/* The memo bytes read at open (NULL, 0 when there is none yet): pass them to
 * pure_link_memo_load() before the first datagram.  Valid until pl_store_close(). */
const uint8_t *pl_store_memo(const pl_store *s, size_t *len);

/* Tells the store which public key the endpoint's peer index names (pure_link_wire_peer's
 * return value); call once per wired peer before any event. */
int pl_store_peer(pl_store *s, int peer, const uint8_t peer_public[32]);

/* Handles one event: STREAM_OPEN is answered at once (pure_link_stream_answer with the
 * durable stored mark, or a refusal when the input or shape does not match); RECORD is
 * appended (not yet durable); MEMO_WRITE is written (not yet durable).  Other kinds are
 * ignored.  RECORD bytes wait in the stream's write buffer, which goes to the file when it
 * is full and at pl_store_commit_begin.  A write that fails makes its input fail (above)
 * and returns 0.  Returns 0, or a negative errno with one line in err when the store
 * itself fails (the memo, memory); the caller must then stop: nothing half-written is
 * claimed stored.  That failure is sticky: later events return it again, while a commit
 * of what was appended before it still runs.
 *
 * A STREAM_OPEN that asks where to resume (reason PURE_LINK_OPEN_RESUME) is answered with
 * where the stream stands: one past the last record of the run that appended last, once
 * every record appended to the stream is durable (the answer waits for that commit:
 * pl_store_commit or pl_store_commit_end gives it).  The run's first RECORD (the core hands
 * none over before the run is proven live) takes the stream over: from then on its other
 * runs append nothing, and a run that never asked appends nothing to it (spec/protocol.md
 * §4.3).  Such a run is refused through the core with -PURE_LINK_CUT_OFF (REFUSED reason
 * 5): at the takeover if it is bound, at its next record, and at each STREAM_OPEN of it.
 * The ask and the takeover are each written to the stream's owner log and synced
 * on the caller's thread before the answer goes or the record is written (STORE.md "Owner
 * log"): once per resuming run, and a run cut off stays cut off across a reopen.
 *
 * The mark given to STREAM_OPEN is always a durable one: the core acknowledges records
 * below it to the sender at once.  A run that binds again on another handle while some of
 * its records wait for a commit gets the durable mark; the store skips the records it
 * holds already and reports them stored on the new handle once they are durable.  The
 * store keys its table on the handle and re-maps it on every STREAM_OPEN (the core reuses
 * handles for other runs). */
int pl_store_event(pl_store *s, pure_link *pl, const pure_link_event *ev, uint64_t now_ns, char *err,
                   size_t err_len);

/* Group commit, in two halves so that a driver can sync off its network thread.
 * pl_store_pending(): 1 when bytes wait for a commit.
 * pl_store_commit_begin(): closes the current batch and fills fds (at most fds_most) with
 * the descriptors to sync: the last *dirs of them are directories, to fsync (a new file's
 * name is durable only then), the others files, to fdatasync.  Returns their count (0:
 * nothing to commit), -EALREADY when a batch is open, or the store's failure once nothing
 * is left to commit (pl_store_commit says it in a line).  Events handled after it belong
 * to the next batch.  At most one batch is open at a time; files that did not fit in
 * fds_most go first in the next one.  A new stream's file needs two batches (its bytes
 * under a temporary name, renamed into place when they are durable; then its directory):
 * its records are claimed after the second, and pl_store_pending() stays 1 in between.
 * pl_store_commit_end(): result is 0 when every sync of the batch returned 0, else a
 * negative errno; on success it calls pure_link_stored() and pure_link_memo_written() for
 * everything the batch covered.  Returns 0 or the error (with one line in err).  A failed
 * sync is never retried: the pages it failed to write may be marked clean, so a later
 * fdatasync that succeeds proves nothing about them.  Every input with a file in the batch
 * fails (above; the memo in it: the store fails for good), nothing of the batch is claimed
 * for them, and each file of the batch is cut back to its durable end, so that a reopen
 * does not find those records either.  A new file that cannot be renamed into place makes
 * its input fail (the rest of the batch is claimed), and so does a failed write of a
 * buffer at commit_begin (the batch claims the whole frames the files hold).  An input's
 * failure returns 0 (its line went to `notice`).
 * pl_store_commit(): both halves with the syncs in between, on this thread, twice when
 * the first renamed new files into place. */
int pl_store_pending(const pl_store *s);
int pl_store_commit_begin(pl_store *s, int *fds, size_t fds_most, size_t *dirs);
int pl_store_commit_end(pl_store *s, pure_link *pl, int result, uint64_t now_ns, char *err, size_t err_len);
int pl_store_commit(pl_store *s, pure_link *pl, uint64_t now_ns, char *err, size_t err_len);

/* Totals for exit statistics.  bytes_durable: of the files, frames included;
 * record_bytes_durable: of the records alone (what a sender counts as its records' bytes).
 * records_missing: records a sender says were stored that this
 * store does not hold (its base was beyond the store's mark: files lost or restored from an
 * older copy).  bytes_cut: torn tails cut off at open. */
typedef struct pl_store_stats {
    uint64_t records_appended, records_durable, bytes_durable;
    uint64_t commits, fdatasyncs, dir_fsyncs, streams_refused;
    uint64_t records_missing, bytes_cut;
    uint64_t record_bytes_durable;
    uint64_t inputs_failed;      /* times an input failed (each logged in one line) */
    uint64_t inputs_recovered;   /* times a failed input stored again */
    uint64_t inputs_failing;     /* inputs failed now */
} pl_store_stats;
void pl_store_stats_get(const pl_store *s, pl_store_stats *out);
/* The negative errno input `name` failed with while it cannot store (pl_store.h "A failing
 * input"); 0 when it stores, or when no input has that name. */
int pl_store_input_failed(const pl_store *s, const char *name);
/* Why the store refused the last STREAM_OPEN it refused, for the host's line about it: the
 * host reads it in its own handling of that event (the driver hands each event to the store
 * first).  The REFUSED reason the sender hears is in parentheses. */
typedef enum pl_store_refusal {
    PL_STORE_REFUSAL_NONE = 0,
    PL_STORE_REFUSAL_NO_INPUT,     /* no input of that name (1) */
    PL_STORE_REFUSAL_SHAPE,        /* the input's shape is another (2) */
    PL_STORE_REFUSAL_INPUT_FULL,   /* the input holds PL_STORE_STREAMS_PER_INPUT_MOST streams (1) */
    PL_STORE_REFUSAL_NAME_TAKEN,   /* a key with the same first 96 bits sends that source to the
                                      input: the stream's file name is taken (1) */
    PL_STORE_REFUSAL_CANNOT_STORE, /* the input failed (4): its own line was told */
    PL_STORE_REFUSAL_CUT_OFF,      /* a newer run of the source took it over (5, §4.3) */
} pl_store_refusal;
pl_store_refusal pl_store_refusal_last(const pl_store *s);

/* ---- Reading record files back (pure-link cat and verify): these only decode bytes the
 * caller read, so a reader needs no lock and may run beside the receiver that appends. ---- */
#define PL_STORE_FILE_HEADER_BYTES 192u /* a record file's header (STORE.md "Record file") */
#define PL_STORE_FRAME_HEADER_BYTES 28u /* a frame's header, before its record bytes */
typedef struct pl_store_file_id {
    uint8_t key[32];                          /* the sender's public key */
    char source[PURE_LINK_NAME_MOST + 1];     /* the source name */
    char input[PURE_LINK_NAME_MOST + 1];      /* the input's name when the file was made */
} pl_store_file_id;
/* Decodes a record file's first PL_STORE_FILE_HEADER_BYTES bytes into *id: 0, or -1 when
 * they are not a valid header (magic, size, CRC or names). */
int pl_store_file_header(const uint8_t in[PL_STORE_FILE_HEADER_BYTES], pl_store_file_id *id);
typedef struct pl_store_frame {
    uint32_t len;                             /* record bytes after the frame's header */
    uint64_t run, record;                     /* the run and its record number */
} pl_store_frame;
/* Reads the frame at `in` (`avail` bytes there, to the end of what the file holds), by the
 * store's own recovery rule: the frame's size in the file (header and record) when it is
 * whole and valid; 0 when the bytes end before it does (*f says its length once its header
 * is there); PL_STORE_FRAME_BAD_HEAD when the tag or length is wrong;
 * PL_STORE_FRAME_BAD_CRC when the CRC32C is (*f is filled).  The store's open cuts the
 * file at the first frame that is not whole and valid.  *why names the check that failed. */
#define PL_STORE_FRAME_BAD_HEAD (-1)
#define PL_STORE_FRAME_BAD_CRC (-2)
long pl_store_frame_read(const uint8_t *in, size_t avail, pl_store_frame *f, const char **why);
/* A checkpoint index (<key>_<source>.pli, STORE.md "Checkpoint index"), `len` bytes at
 * `in`: 0 when its magic, size, run count (at most PL_STORE_RUNS_KEPT) and CRC32C hold,
 * with *h; -1 when not (*why names the check that failed).  The store's open trusts it only
 * if, beyond that, h->end is within the record file and the frame ending there is whole,
 * valid and h->last_bytes long; else it reads the whole file. */
#define PL_STORE_INDEX_BYTES_MOST (32u + 24u * PL_STORE_RUNS_KEPT + 4u)
typedef struct pl_store_index_head {
    uint64_t runs;                            /* entries: run id, mark, offset after its last frame */
    uint64_t end;                             /* the record file offset it covers */
    uint64_t last_bytes;                      /* bytes of the frame that ends at end (0: none) */
} pl_store_index_head;
int pl_store_index_read(const uint8_t *in, size_t len, pl_store_index_head *h, const char **why);

#endif
