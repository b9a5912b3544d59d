/* store_internal.h: the pieces of the receiver's store (shims/store/pl_store.h), shared by the
 * shims/store/store*.c files and the store's tests.  The on-disk format is in shims/store/STORE.md.
 *
 * Layering, top down: store.c (inputs, streams, the core's handles, events) uses
 * store_commit.c (the group-commit batch), store_stream.c (one stream's record file:
 * create, recover, append), store_index.c (a stream's checkpoint index), store_owner.c
 * (a resumed stream's owner log), store_memo.c (the memo file) and store_format.c (bytes:
 * CRC32C, headers, frames).  Only store.c
 * calls the core; everything below it reports through a st_notify, so that the tests can
 * watch exactly what would be acknowledged. */
#ifndef PL_STORE_INTERNAL_H
#define PL_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pl_store.h"

/* ---- store_format.c: bytes on disk (shims/store/STORE.md) ---- */
#define ST_HEADER_BYTES PL_STORE_FILE_HEADER_BYTES  /* record file header */
#define ST_FRAME_BYTES PL_STORE_FRAME_HEADER_BYTES  /* frame header: tag, len, run, record, crc */
#define ST_INDEX_HEAD_BYTES 32u
#define ST_INDEX_ENTRY_BYTES 24u
#define ST_KEY_HEX 24u        /* hex digits of the sender key in a file name (96 bits) */
#define ST_FILE_NAME_MOST (ST_KEY_HEX + 1 + 3 * PURE_LINK_NAME_MOST + 8 + 1)

uint32_t st_crc32c(uint32_t crc, const void *data, size_t len);
uint32_t st_crc32c_portable(uint32_t crc, const void *data, size_t len); /* the table path only */

typedef struct st_header {
    uint8_t key[32];
    char source[PURE_LINK_NAME_MOST + 1];
    char input[PURE_LINK_NAME_MOST + 1];
} st_header;
void st_header_encode(uint8_t out[ST_HEADER_BYTES], const st_header *h);
int st_header_decode(const uint8_t in[ST_HEADER_BYTES], st_header *h); /* 0, or -1 if not one */

typedef pl_store_frame st_frame;  /* len: record bytes after the header; run, record */
/* The frame header for a record in up to two pieces (the crc covers header and bytes). */
void st_frame_encode(uint8_t out[ST_FRAME_BYTES], uint64_t run, uint64_t record, const uint8_t *data,
                     size_t len, const uint8_t *data2, size_t len2);
/* Checks a whole frame at `in` (avail bytes there).  Returns its total size, 0 when it is
 * not (yet) whole or not valid: the tail from here is torn (pl_store_frame_read tells
 * which). */
size_t st_frame_check(const uint8_t *in, size_t avail, st_frame *f);
/* The file name of a stream: <24 hex of the key>_<source, %XX-escaped><suffix>. */
/* out: the first `bytes` bytes of key as 2 * bytes lower-case hex digits and a NUL. */
void st_key_hex(char *out, const uint8_t *key, size_t bytes);
void st_file_name(char out[ST_FILE_NAME_MOST], const uint8_t key[32], const char *source, const char *suffix);

/* ---- One stream: its runs and its record file (store_stream.c) ---- */
typedef struct st_run {
    uint64_t run;
    uint64_t mark_appended;  /* next record number after the last one appended */
    uint64_t mark_batch;     /* mark_appended when the open batch closed */
    uint64_t mark_durable;   /* next record number after the last durable one */
    uint64_t mark_written;   /* next record number after the last one in the file (not the
                                write buffer) */
    uint64_t end_off;        /* file offset after its last frame: how recent it is */
    int handle;              /* the core's stream handle bound to it now, or -1 */
    uint8_t in_next;         /* in its stream's runs_next list */
    uint8_t cut;             /* a newer run took the stream over: this one appends nothing more */
    uint8_t asked;           /* it asked where to resume (its entry is in the owner log) */
} st_run;

typedef struct st_stream {
    st_header id;            /* key, source, input name */
    struct st_input *input;
    char *path;              /* the record file */
    int fd;
    uint64_t end_appended, end_batch, end_durable;  /* file offsets */
    uint64_t end_uncached;   /* durable bytes before this were dropped from the page cache */
    uint64_t last_appended, last_batch, last_durable;  /* bytes of the frame before each end */
    uint64_t frames_appended, frames_batch, frames_durable;  /* frames appended since open */
    /* Appended frames wait in a write buffer and go to the file in one write when it is
     * full and before a batch takes the stream (st_stream_flush); "written" is what the
     * file holds (end_written <= end_appended). */
    uint64_t end_written, last_written, frames_written;
    uint8_t *wbuf;            /* NULL until the first small frame; ST_WBUF_BYTES_MOST at most */
    size_t wbuf_len, wbuf_cap;
    st_run *runs;            /* at most PL_STORE_RUNS_KEPT */
    size_t runs_len, runs_cap;
    uint32_t *runs_next, *runs_batch;  /* run indexes appended to since the batch closed / in it */
    size_t runs_next_len, runs_batch_len;
    uint8_t dirty, in_batch;  /* in the store's dirty list / in the open batch */
    uint8_t name;             /* ST_NAME_*: how far its file's name is durable */
    uint8_t name_in_batch;    /* ST_NAME_RENAMED: its directory's fsync is in the open batch */
    /* The checkpoint index: what the file .pli on disk covers, and a new one waiting. */
    uint64_t index_end;
    int index_tmp_fd;         /* .pli.tmp written, waiting for its fdatasync; -1 none */
    uint64_t index_tmp_end;
    uint8_t index_in_batch;
    /* Resuming (store_owner.c): the run that took the stream over, if any; its log. */
    uint8_t owned;            /* a run took it over: runs that did not ask append nothing */
    uint8_t owner_named;      /* <name>.plo exists durably */
    uint64_t owner;           /* that run */
    uint64_t owner_bytes;     /* the log's whole entries */
    /* The owner took over above its own mark, at records other runs appended and that were
     * not yet durable: it is told them stored once the file is durable to hold_end. */
    uint64_t hold_mark, hold_end;  /* hold_mark 0: none */
} st_stream;

/* A new stream's file is written under <name>.plr.tmp and renamed only once a batch's
 * fdatasync has made its header durable; the rename is durable once a later batch's fsync
 * of the directory returned.  Until then nothing of the stream is claimed. */
enum { ST_NAME_DURABLE = 0, ST_NAME_TMP = 1, ST_NAME_RENAMED = 2 };

int st_write_all(int fd, const void *buf, size_t len, uint64_t off);
int st_read_all(int fd, void *buf, size_t len, uint64_t off);
/* Errors: every function that can fail returns a negative errno and writes one line. */
int st_err(char *err, size_t err_len, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Takes the lock file `name` (under at_fd; `shown` in messages) with flock for as long as
 * the returned descriptor is open, and writes this process's id into it.  Returns the
 * descriptor, or -errno with one line; one held elsewhere is -EWOULDBLOCK, and the line
 * names its holder's process id and says that another receiver uses `what`. */
#define ST_LOCK_NAME "pure-link.lock"   /* in each input's directory */
#define ST_LOCK_SUFFIX ".lock"          /* appended to the memo's path */
int st_lock_take(int at_fd, const char *name, const char *shown, const char *what, char *err, size_t err_len);

/* Creates a stream's file: its header under the temporary name (ST_NAME_TMP), no sync. */
int st_stream_create(st_stream *st, int dir_fd, const char *dir, char *err, size_t err_len);
/* Renames the temporary file into place, never over another (after an fdatasync of it
 * returned 0): ST_NAME_RENAMED.  Returns 0 or -errno with one line. */
int st_stream_rename(st_stream *st, int dir_fd, char *err, size_t err_len);
/* Opens an existing file and recovers it: reads its checkpoint, scans the frames after
 * it, cuts a torn tail, fdatasyncs (so every frame it kept is durable). */
int st_stream_recover(st_stream *st, int dir_fd, const char *dir, const char *name, uint64_t *bytes_cut,
                      char *err, size_t err_len);
void st_stream_free(st_stream *st);
/* The run's entry (NULL if the stream does not know it). */
st_run *st_run_find(st_stream *st, uint64_t run);
/* Adds a run (forgetting the least recent idle one when PL_STORE_RUNS_KEPT are kept). */
st_run *st_run_add(st_stream *st, uint64_t run, char *err, size_t err_len);
/* The run appends nothing to its resumed stream (spec/protocol.md §4.3): a newer run took
 * it over, or it never asked where to resume and the stream has an owner. */
static inline int st_run_cut_off(const st_stream *st, const st_run *r) { return r->cut || (st->owned && !r->asked); }
/* Write buffers: a frame of at most ST_WBUF_FRAME_MOST bytes is copied into its stream's
 * buffer (grown from ST_WBUF_BYTES_LEAST up to ST_WBUF_BYTES_MOST), a larger one goes to
 * the file at once (after the buffer), in one pwritev of its pieces. */
/* Durable bytes leave the page cache once they are ST_CACHE_TAIL_BYTES behind the durable
 * end, in steps of ST_UNCACHE_STEP_BYTES (one posix_fadvise each).  A record file is
 * written once and read only by a reader that follows the tail or comes much later: kept
 * in the cache, a stream's bytes evict everything else, and each page the next write takes
 * is a fresh one, which the kernel must find and zero (and a virtual machine whose host
 * took its free memory back must fault in: most of a receiver's CPU at full rate).
 * Dropped pages are the ones the next writes take, still hot. */
#define ST_CACHE_TAIL_BYTES (4u << 20)
#define ST_UNCACHE_STEP_BYTES (1u << 20)
#define ST_WBUF_BYTES_LEAST (16u << 10)
#define ST_WBUF_BYTES_MOST (256u << 10)
#define ST_WBUF_FRAME_MOST (64u << 10)
/* Appends one frame (not yet durable; maybe not yet written); file_bytes_most bounds the
 * file.  Returns 0 or -errno with one line, after a write (of the buffer, when full, or of
 * a large frame) failed: then the file holds the whole frames that went before the failure
 * and nothing after them, and what the buffer held is forgotten (see st_stream_flush). */
int st_stream_append(st_stream *st, st_run *r, uint64_t record, const uint8_t *data, size_t len,
                     const uint8_t *data2, size_t len2, uint64_t file_bytes_most, char *err, size_t err_len);
/* Writes the buffer to the file (one pwrite).  On a failure, the whole frames the kernel
 * took stay (each run's marks as far as they go), the file is cut after them, and the
 * frames after them are no longer appended.  Returns 0 or -errno with one line. */
int st_stream_flush(st_stream *st, char *err, size_t err_len);
/* Cuts the file back to its durable end (after a failed fdatasync); returns 0 or -errno. */
int st_stream_cut_to_durable(st_stream *st);

/* ---- store_owner.c: a resumed stream's owner log (shims/store/STORE.md "Owner log") ---- */
#define ST_OWNER_ENTRY_BYTES 28u
enum { ST_OWNER_ASKED = 1, ST_OWNER_OWNS = 2 };
/* Reads <name>.plo (when there is one) after the record file's recovery: the runs that
 * asked, the owner and the runs it cut off; a torn tail is cut.  0 or -errno. */
int st_owner_load(st_stream *st, int dir_fd, char *err, size_t err_len);
/* Appends one entry, makes it durable (and the log's name, when new), then applies it:
 * ASKED (run, the answer): the run asked and may take the stream over; OWNS (run): it took
 * the stream over, every other run it knows is cut off.  0 or -errno with one line. */
int st_owner_write(st_stream *st, int dir_fd, uint32_t kind, uint64_t run, uint64_t mark, char *err, size_t err_len);
void st_owner_apply(st_stream *st, uint32_t kind, uint64_t run, uint64_t mark);
/* Where a resumed stream stands: one past the last record of the run that appended last
 * (durable marks). */
uint64_t st_stream_place(const st_stream *st);

/* ---- store_index.c: a stream's checkpoint (shims/store/STORE.md "Index") ---- */
/* Writes the checkpoint of the durable state to <name>.pli.tmp; returns the open fd
 * (to fdatasync) or -errno. */
int st_index_write_tmp(const st_stream *st, int dir_fd, char *err, size_t err_len);
/* Renames <name>.pli.tmp to <name>.pli (after its fdatasync returned 0). */
int st_index_install(const st_stream *st, int dir_fd, char *err, size_t err_len);
/* Loads <name>.pli into st->runs when it is valid and agrees with the file (size, last
 * frame); returns the offset it covers, or ST_HEADER_BYTES when there is none to trust. */
uint64_t st_index_load(st_stream *st, int dir_fd, uint64_t file_bytes);
/* Write, fdatasync, rename: a checkpoint on this thread (at open and close). */
int st_index_checkpoint_now(st_stream *st, int dir_fd, char *err, size_t err_len);

/* ---- store_memo.c: the memo file ---- */
typedef struct st_memo {
    char *path;
    int fd;               /* -1: no memo */
    int lock_fd;          /* its lock file (st_lock_take), -1: none */
    size_t bytes;
    uint8_t *loaded;      /* the memo read at open, NULL if none */
    uint64_t *tokens_next, *tokens_batch;  /* MEMO_WRITE tokens waiting / in the open batch */
    size_t next_len, next_cap, batch_len, batch_cap;
    uint8_t in_batch;
} st_memo;
int st_memo_open(st_memo *m, const char *path, size_t bytes, char *err, size_t err_len);
int st_memo_write(st_memo *m, uint64_t offset, uint64_t token, const uint8_t *data, size_t len, char *err,
                  size_t err_len);
/* Moves the waiting tokens into the (empty) batch; returns 1 if there were any. */
int st_memo_batch_close(st_memo *m);
void st_memo_close(st_memo *m);

/* ---- What an acknowledgement does (the core in store.c; a recorder in the tests) ---- */
typedef struct st_notify {
    void (*stored)(void *ctx, int stream, int64_t record);
    void (*memo_written)(void *ctx, uint64_t token);
    void *ctx;
    /* The stream of `run` on this handle is refused (may be NULL): `answer` is
     * -PURE_LINK_CANNOT_STORE (its input cannot store now) or -PURE_LINK_CUT_OFF (a newer
     * run took its source over).  A handle that serves another run now is left alone. */
    void (*refuse)(void *ctx, int stream, uint64_t run, int answer);
} st_notify;

/* ---- The store (store.c) ---- */
typedef struct st_input {
    char name[PURE_LINK_NAME_MOST + 1];
    uint64_t shape;
    char *dir;
    int dir_fd;
    int lock_fd;            /* the directory's lock file (st_lock_take), -1: none */
    st_stream **streams;    /* at most PL_STORE_STREAMS_PER_INPUT_MOST */
    size_t streams_len;
    uint8_t dir_in_batch;   /* its fsync is in the open batch */
    uint8_t retired;        /* gone from the config (pl_store_inputs_set): takes no new stream */
    /* Failed (pl_store.h "A failing input"): 0, or the negative errno its storage failed
     * with; it appends nothing and refuses its streams until a try brings it back. */
    int failed;
    uint64_t failed_at_ns;  /* when it failed, or when the last try to bring it back failed */
    uint64_t failed_since_ns; /* when it failed (for the line that says it stores again) */
    uint8_t refuse_due;     /* its streams' handles are still to be refused (st_refusals) */
    char failed_line[256];
} st_input;

typedef struct st_handle {
    st_stream *stream;      /* NULL: not bound */
    uint64_t run;
    size_t run_idx;         /* where the run was in stream->runs (checked before use) */
    uint64_t seen;          /* next record number the core handed over on this handle */
} st_handle;

struct pl_store {
    st_input *inputs;
    size_t inputs_len;
    uint64_t file_bytes_most;
    st_memo memo;
    uint8_t (*peers)[32];   /* the key of each peer index */
    uint8_t *peer_known;
    size_t peers_len;
    st_handle *handles;
    size_t handles_len;
    /* Group commit: streams appended to since the batch closed, and those in it. */
    st_stream **dirty, **batch;
    size_t dirty_len, dirty_cap, batch_len, batch_cap;
    int batch_open;
    size_t batch_fds, batch_dirs;
    size_t names_waiting;   /* streams renamed whose directory is not yet fsync'ed */
    int failed;             /* sticky: a write or fdatasync failed (negative errno) */
    struct st_input *failed_unreported;  /* its write at pl_store_commit_begin failed: commit_end says it */
    char failed_line[256];
    pl_store_stats stats;
    pl_store_refusal refusal;  /* why the last STREAM_OPEN refused was (pl_store_refusal_last) */
    uint64_t now_ns;        /* of the last pl_store_event or commit: when inputs fail and retry */
    void (*notice)(void *ctx, const char *line);
    void *notice_ctx;
    /* Runs that asked where to resume while records of their stream waited for a commit:
     * answered once the stream is durable (spec/protocol.md §4.3). */
    struct st_resume { int handle; uint64_t run; st_stream *stream; } *resumes;
    size_t resumes_len, resumes_cap;
};

/* The store without the core: STREAM_OPEN's answer (0, -1, -PURE_LINK_OTHER_SHAPE,
 * -PURE_LINK_CANNOT_STORE, -PURE_LINK_CUT_OFF for a run cut off) in *answer with the
 * durable mark in *mark; RECORD; the second half of a commit. */
int st_open_stream(pl_store *s, int handle, int peer, uint64_t run, const char *source, const char *input,
                   uint64_t shape, int *answer, int64_t *mark, char *err, size_t err_len);
/* STREAM_OPEN of a run that asks where to resume: as st_open_stream, and the mark is where
 * the stream stands (*answer 1: not yet, resume_answers answers it after a commit); the
 * ask is in the owner log before the answer.  The run's first record takes the stream
 * over (st_record): every other run is cut off then. */
int st_open_resume(pl_store *s, int handle, int peer, uint64_t run, const char *source, const char *input,
                   uint64_t shape, int *answer, int64_t *mark, char *err, size_t err_len);
int st_record(pl_store *s, int handle, uint64_t run, int64_t record, const uint8_t *data, size_t len,
              const uint8_t *data2, size_t len2, const st_notify *n, char *err, size_t err_len);
void st_dirty_add(pl_store *s, st_stream *st);
/* Makes the store fail for good with the line in err (later calls repeat it). */
int st_fail(pl_store *s, int rc, const char *line);
/* Makes input `in` fail (its directory's storage failed with rc, told in line): it logs one
 * line, appends nothing more and its streams are refused (st_refusals) until st_input_retry
 * brings it back.  Returns rc.  Memory errors are the store's (st_fail), not an input's. */
int st_input_fail(pl_store *s, st_input *in, int rc, const char *line);
/* Refuses (n->refuse) every handle bound to a stream of an input that failed since. */
void st_refusals(pl_store *s, const st_notify *n);
/* Tries to bring a failed input back: each stream file cut to its durable end and synced,
 * a probe written and synced in its directory.  0 (it stores again: one line), or -errno
 * (still failed; tried again PL_STORE_INPUT_RETRY_NS later), -EBUSY while a batch syncs it. */
int st_input_retry(pl_store *s, st_input *in);
/* Returns the sticky failure (with its line in err), 0 if none. */
int st_failed(const pl_store *s, char *err, size_t err_len);

/* store_commit.c */
int st_commit_end(pl_store *s, int result, const char *failed_path, const st_notify *n, char *err, size_t err_len);
int st_commit(pl_store *s, const st_notify *n, char *err, size_t err_len);

#endif
