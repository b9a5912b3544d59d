/* pure_link.h: the whole public API of the pure-link core.
 *
 * pure-link delivers records (byte strings up to PURE_LINK_RECORD_MOST) from a sender to a
 * receiver over UDP, encrypted and reliably; the sender lets go of a record only when the
 * receiver's host says it is stored.  The protocol is in spec/.
 *
 * The core is a sans-IO state machine.  It never allocates, never reads a clock, never
 * does I/O and keeps no global state.  The caller:
 *   - owns all memory: it asks pure_link_size() for a config, provides that many bytes
 *     (aligned to PURE_LINK_ALIGN), and the core keeps no pointer to anything else past the
 *     call that received it;
 *   - passes the time (`now_ns`, monotonic nanoseconds, never decreasing) to every call;
 *   - feeds every received datagram to pure_link_receive();
 *   - after any call, pulls datagrams with pure_link_pull() until it returns 0, drains
 *     events with pure_link_event_next() until it returns 0, and calls pure_link_tick() no
 *     later than pure_link_deadline();
 *   - answers events that ask for an answer (stream accepted or refused, records stored,
 *     memo written) with the calls named in the event.
 *
 * Errors come in three classes.  Misuse (a NULL endpoint, a bad handle, time going back)
 * is a bug in the caller and trips an assertion.  A bad datagram is dropped silently and
 * counted in the statistics.  A fatal error is sticky: every later call returns it, and it
 * is reported once as a PURE_LINK_EVENT_FATAL event.  Functions that can fail return a
 * negative pure_link_error; pure_link_strerror() names it. */
#ifndef PURE_LINK_H
#define PURE_LINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PURE_LINK_API __attribute__((visibility("default")))
#else
#define PURE_LINK_API
#endif

/* ---- Spec values (spec/protocol.md "Values"); both sides must agree on them. ---- */
#define PURE_LINK_VERSION          1u          /* the wire version this core speaks */
#define PURE_LINK_DATAGRAM_MOST    1452u       /* bytes in a full datagram (UDP payload) */
#define PURE_LINK_DATAGRAM_BASE    1232u       /* a sender's first datagram size, which every IPv6
                                                  path carries (1,280 - 40 - 8); it searches
                                                  upward from there (spec/protocol.md §5.1) */
#define PURE_LINK_RECORD_MOST      (16u << 20) /* largest record: 16 MiB; one more is refused */
#define PURE_LINK_CREDIT_MOST      65536u      /* records beyond the stored mark, at most */
#define PURE_LINK_CREDIT_FIRST     1024u       /* credit before any delivery */
#define PURE_LINK_AMPLIFICATION    3u          /* bytes to an unvalidated address <= 3x received */
#define PURE_LINK_RUNS_PER_PEER    64u         /* run slots a receiver keeps per peer, at most */
#define PURE_LINK_MEMO_SIDE_SLOTS  1024u       /* memo side slots */
#define PURE_LINK_NAME_MOST        64u         /* bytes in a source or input name */
#define PURE_LINK_KEY_BYTES        32u         /* X25519 public and secret keys */
#define PURE_LINK_ALIGN            64u         /* alignment of caller memory given to the core */
#define PURE_LINK_ADDR_MOST        28u         /* bytes of an opaque address (fits sockaddr_in6) */

/* Return codes: 0 is success; failures are negative.  Positive values are counts. */
typedef enum pure_link_error {
    PURE_LINK_OK = 0,
    PURE_LINK_ERR_INVALID = -1,        /* an argument is out of its stated range */
    PURE_LINK_ERR_TOO_BIG = -2,        /* record larger than PURE_LINK_RECORD_MOST */
    PURE_LINK_ERR_FULL = -3,           /* no room now (queue, table); retry after progress */
    PURE_LINK_ERR_BUFFER = -4,         /* the caller's buffer is too small for the output */
    PURE_LINK_ERR_CRYPTO = -5,         /* a key operation failed (e.g. all-zero X25519) */
    PURE_LINK_ERR_WIRING = -6,         /* wiring is inconsistent (e.g. colliding key ids) */
    PURE_LINK_ERR_MEMO = -7,           /* memo bytes are not a memo of this format */
    PURE_LINK_ERR_CLOSED = -8,         /* the sender or endpoint was closed */
    PURE_LINK_ERR_FATAL = -9,          /* a sticky fatal error was reported earlier */
    PURE_LINK_ERR_NOT_FOUND = -10,     /* no such sender, stream or peer */
    PURE_LINK_OTHER_SHAPE = 2,         /* host's stream answer: the input exists, shape differs
                                          (passed negated: -PURE_LINK_OTHER_SHAPE) */
    PURE_LINK_CANNOT_STORE = 4,        /* host's stream answer or refusal: this input cannot
                                          store now (a full disk, a read-only or failing
                                          directory); passed negated: -PURE_LINK_CANNOT_STORE */
    PURE_LINK_CUT_OFF = 5              /* host's stream answer or refusal: a newer run of this
                                          (key, source) took the source over (spec/protocol.md
                                          §4.3); passed negated: -PURE_LINK_CUT_OFF */
} pure_link_error;

PURE_LINK_API const char *pure_link_strerror(int code);

/* ---- Crypto operations (spec/crypto.md).  The default table uses libsodium for X25519
 * and the core's own allocation-free AES-128-GCM and HKDF-SHA256.  Tests may pass a table
 * with a null cipher.  Contexts live in caller memory inside the endpoint. ---- */
#define PURE_LINK_AEAD_CTX_BYTES 768u
#define PURE_LINK_TAG_BYTES      16u
#define PURE_LINK_NONCE_BYTES    12u
#define PURE_LINK_AEAD_KEY_BYTES 16u

typedef struct pure_link_crypto {
    const char *name;
    /* out = X25519(scalar, point); returns 0, or -1 when the result is all zero. */
    int (*x25519)(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]);
    /* pub = X25519(secret, base point). */
    void (*x25519_base)(uint8_t pub[32], const uint8_t secret[32]);
    /* Expands a 16 B key into ctx (PURE_LINK_AEAD_CTX_BYTES, 16-aligned).  No allocation. */
    void (*aead_init)(void *ctx, const uint8_t key[16]);
    /* Seals len bytes of in to out (len + 16 bytes; in == out allowed). */
    void (*aead_seal)(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                      const uint8_t *in, size_t len, uint8_t *out);
    /* Opens len bytes (tag included) of in to out (len - 16 bytes); 0, or -1 if not authentic. */
    int (*aead_open)(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t *out);
} pure_link_crypto;

PURE_LINK_API const pure_link_crypto *pure_link_crypto_default(void);
/* A cipher that copies plaintext and appends a 16 B checksum tag; for fuzzing and tests. */
PURE_LINK_API const pure_link_crypto *pure_link_crypto_null(void);

/* ---- Addresses are opaque bytes to the core (the shims put a sockaddr in them). ---- */
typedef struct pure_link_addr {
    uint8_t len;                          /* 1..PURE_LINK_ADDR_MOST */
    uint8_t bytes[PURE_LINK_ADDR_MOST];
} pure_link_addr;

/* ---- Configuration: fixes the memory the endpoint needs.  Zero fields take the default
 * named beside them (pure_link_config_default() fills them in).  A count marked "NONE ok"
 * set to PURE_LINK_NONE means none at all: senders_most = PURE_LINK_NONE gives a
 * receiver-only endpoint, peers_most = PURE_LINK_NONE a sender-only one (its run slots
 * default to none too).  0 keeps meaning "the default", so a zeroed config stays valid. ---- */
#define PURE_LINK_NONE 0xFFFFFFFFu
/* The most epoch_packets may be: 2^23 - 2^16, so that the last 2^16 packets under a key,
 * which carry only OFFERs, still fit under the AEAD limit of 2^23 (spec/protocol.md §3). */
#define PURE_LINK_EPOCH_PACKETS_MOST ((1ull << 23) - (1ull << 16))
/* The most epoch_ns and idle_ns may be: 24 h.  Both are added to clock readings, and a key
 * kept longer than a day gains nothing (spec/crypto.md §10 counts its packets anyway). */
#define PURE_LINK_DURATION_NS_MOST (24ull * 3600 * 1000000000ull)
/* The most ack_delay_us may be: the spec's 25 ms, within which a receiver MUST acknowledge
 * (spec/protocol.md §5). */
#define PURE_LINK_ACK_DELAY_US_MOST 25000u
typedef struct pure_link_config {
    uint32_t version;               /* PURE_LINK_VERSION */
    uint8_t static_secret[32];      /* this node's X25519 secret key */
    const pure_link_crypto *crypto; /* NULL: pure_link_crypto_default() */
    /* Sender side. */
    uint32_t senders_most;          /* outputs this node may open (default 4; NONE ok) */
    uint32_t send_queue_bytes;      /* most record bytes one sender queues (default 32 MiB;
                                       >= RECORD_MOST + 8), within the send pool below */
    uint32_t send_queue_records;    /* records queued per sender (default 131072) */
    uint32_t packets_in_flight_most;/* tracked sent packets per sender (default 16384) */
    /* Receiver side. */
    uint32_t peers_most;            /* wired sender keys (default 16; NONE ok) */
    uint32_t runs_most;             /* run slots over all peers (default 64, none without
                                       peers; NONE ok) */
    uint32_t stream_buffer_bytes;   /* most record bytes one run may hold, from its stored mark
                                       (default RECORD_MOST + 64 KiB; >= RECORD_MOST + 8) */
    uint32_t unstored_records_most; /* delivered-but-unstored records per run (default 16384) */
    uint32_t memo_enabled;          /* 1: keep a memo of epoch secrets (spec/memo.md) */
    /* Local choices (spec: each side alone). 0 means the default. */
    uint64_t idle_ns;               /* a run quiet this long is idle (default 60 s; at most
                                       PURE_LINK_DURATION_NS_MOST) */
    uint64_t epoch_ns;              /* start a new epoch after this long (default 120 s; at
                                       most PURE_LINK_DURATION_NS_MOST) */
    uint64_t epoch_packets;         /* ... or after this many packets under one key (default 2^22,
                                       at most PURE_LINK_EPOCH_PACKETS_MOST), or as many
                                       replies opened under its reply key (at most 2^22) */
    uint32_t congestion;            /* PURE_LINK_CC_* (default BBR) */
    uint32_t ack_delay_us;          /* receiver's maximum ack delay (default 5000) */
    uint32_t copies;                /* 1: an app-limited sender (nothing more to send) sends
                                       each packet of record bytes once more a quarter RTT
                                       later, if the window has room and it was not yet
                                       acknowledged (default 1; 2 turns it off) */
    /* Receiver side: one budget for the record bytes of every run (reassembly and
     * delivered-but-unstored), shared as spec/protocol.md §4.2 says (default 20 MiB;
     * >= 16 MiB + 32 KiB, so that a largest record fits).  Beside it the receiver keeps a
     * fixed 16 MiB + 64 KiB hand-over ring for records of more than two 16 KiB blocks. */
    uint64_t receive_memory_bytes;
    /* Sender side: one budget for every sender's queued record bytes (default 16 MiB +
     * 64 KiB; >= 16 MiB + 32 KiB).  An open sender may hold an even share of it among the
     * open senders, and never less than one largest record (spec/protocol.md §4.2). */
    uint64_t send_memory_bytes;
    /* Sender side: after a search for the datagram size ended below PURE_LINK_DATAGRAM_MOST,
     * search again this long later (default 600 s, RFC 8899's; at most
     * PURE_LINK_DURATION_NS_MOST; spec/protocol.md §5.1). */
    uint64_t pmtu_raise_ns;
} pure_link_config;

enum { PURE_LINK_CC_CUBIC = 1, PURE_LINK_CC_NEWRENO = 2, PURE_LINK_CC_BBR = 3 };

PURE_LINK_API void pure_link_config_default(pure_link_config *config);
/* Bytes of caller memory an endpoint with this config needs; 0 if the config is invalid.
 * Beside the two pools (receive_memory_bytes and, for records of more than two 16 KiB
 * blocks, a 16 MiB + 64 KiB hand-over ring; send_memory_bytes) the endpoint keeps fixed
 * state: about 0.6 KiB per peer; about 1.9 KiB per run slot, plus its share of the expanded
 * AEAD keys (1.5 KiB per run epoch kept expanded: 1,024 of them, at most 2 per slot, or one
 * per 8 slots beyond 8,192 slots) and of the hole tables (4 KiB each: 64, at most one per
 * slot, or one per 32 slots beyond 2,048); and per sender its packet, record and block
 * tables (packets_in_flight_most x 96 B, send_queue_records x 8 B) and 10 KiB.  Each datagram
 * finds its peer and run slot through two indexes of 12 B slots, 4 to 8 slots per peer and
 * per run slot (at most a quarter of the slots taken, so a lookup reads at most 64 of them),
 * and the next deadline comes from a heap of 4 B per run slot.  With memo_enabled the
 * endpoint also mirrors the memo's slots: 24 B per peer and 24 KiB for the side slots.
 * `make bench` prints the figures for four configs. */
PURE_LINK_API size_t pure_link_size(const pure_link_config *config);

typedef struct pure_link pure_link; /* opaque; lives in caller memory */

/* Sets up an endpoint in `memory` (pure_link_size(config) bytes, PURE_LINK_ALIGN-aligned).
 * `seed` is 32 random bytes from the caller (the core's only source of randomness).
 * The core copies what it needs from `config`; the caller may free config afterwards.
 * Returns the endpoint or NULL if memory is too small or the config invalid. */
PURE_LINK_API pure_link *pure_link_init(void *memory, size_t memory_bytes, const pure_link_config *config,
                                        const uint8_t seed[32], uint64_t now_ns);
/* This node's static public key. */
PURE_LINK_API void pure_link_public_key(const pure_link *pl, uint8_t out[32]);

/* ---- Receiver wiring: which sender keys may send, and as which sources. ----
 * Adds a peer key.  `sources` is a list of allowed source names separated by '\n'
 * ("*" allows any).  Returns the peer index, or PURE_LINK_ERR_WIRING if its key id
 * collides with a wired key, PURE_LINK_ERR_FULL if peers_most are wired (or, by a chance
 * far below one in 2^40, the peer index has no slot within its probe bound for the key). */
PURE_LINK_API int pure_link_wire_peer(pure_link *pl, const uint8_t peer_public[32], const char *sources,
                                      uint64_t now_ns);
/* Unwires peer `peer` (pure_link_wire_peer's index): its runs end at once, without a word
 * on the wire (their slots and receive memory return; records not yet stored stay unstored,
 * and its sender hears nothing more), its datagrams are then dropped as of an unknown key,
 * and its index may be given to a peer wired later.  Events already taken keep their
 * meaning; a pure_link_stored() for an ended run's handle returns PURE_LINK_ERR_NOT_FOUND.
 * Returns 0, or PURE_LINK_ERR_NOT_FOUND when no peer is wired at that index. */
PURE_LINK_API int pure_link_unwire_peer(pure_link *pl, int peer, uint64_t now_ns);

/* ---- Sender: one output of this node to one input of another node. ---- */
typedef struct pure_link_sender_config {
    uint8_t receiver_public[32];    /* from wiring, never from the wire */
    pure_link_addr receiver_addr;
    uint32_t version;               /* from wiring: PURE_LINK_VERSION */
    const char *source;             /* this output's name, 1..PURE_LINK_NAME_MOST bytes */
    const char *input;              /* the receiver's input name */
    uint64_t shape;                 /* shape id of the records (the receiver compares it) */
    /* 1: resume the source where the receiver's host stands (spec/protocol.md §4.3): the
     * sender first asks, and takes no record until the STORED event that answers, whose
     * `record` is the number the host gives (records before it are the host's already);
     * queue from there: pure_link_send numbers the next record so.  0: a new stream of
     * records numbered from 0. */
    uint32_t resume;
} pure_link_sender_config;

/* Opens a sender with a fresh random run.  Returns its handle (>= 0) or an error. */
PURE_LINK_API int pure_link_sender_open(pure_link *pl, const pure_link_sender_config *cfg, uint64_t now_ns);
/* Queues one record; the core copies the bytes.  Returns the record's number, counted over
 * the sender's runs (>= 0), PURE_LINK_ERR_TOO_BIG above PURE_LINK_RECORD_MOST, PURE_LINK_ERR_FULL if the queue
 * has no room (retry after RECORDS_STORED events). */
PURE_LINK_API int64_t pure_link_send(pure_link *pl, int sender, const void *record, size_t len, uint64_t now_ns);
/* Stops taking records; the sender keeps delivering what is queued, then reports CLOSED. */
PURE_LINK_API int pure_link_sender_close(pure_link *pl, int sender, uint64_t now_ns);
/* The sender's current run id (for logs and key logs).  After 2^31 packets a run starts no
 * new record; once its started records are stored the sender moves to a new run with a new
 * id (spec/protocol.md §2): record numbers go on across the move, and the receiver's host
 * sees a STREAM_OPEN for the new run whose `record` is the first record it carries. */
PURE_LINK_API uint64_t pure_link_sender_run(const pure_link *pl, int sender);

/* ---- Datagrams in and out. ---- */
/* Feeds one received datagram.  Bad datagrams are dropped and counted; returns 0 or a
 * sticky fatal error. */
PURE_LINK_API int pure_link_receive(pure_link *pl, const pure_link_addr *from, const uint8_t *data, size_t len,
                                    uint64_t now_ns);
/* Why the last datagram fed to pure_link_receive was dropped, for a host that tells its
 * operator (e.g. one log line per key id now and then): PURE_LINK_DROP_UNKNOWN_KEY when it
 * was counted in dropped_unknown_key (no wired key, or no sender, for it),
 * PURE_LINK_DROP_AUTH in dropped_auth (it did not open), else 0 (it opened, or was dropped
 * for another reason).  The key id a sender packet claims is in its header (spec/wire.md
 * §3.1). */
enum { PURE_LINK_DROP_UNKNOWN_KEY = 1, PURE_LINK_DROP_AUTH = 2 };
PURE_LINK_API uint32_t pure_link_last_drop(const pure_link *pl);
/* Writes the next datagram due now into buf (cap >= PURE_LINK_DATAGRAM_MOST) and its
 * destination into *to.  Returns its length, 0 when nothing is due (pacing or nothing
 * to send), or a negative error.  Call until it returns 0. */
PURE_LINK_API int pure_link_pull(pure_link *pl, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns);
/* What the host learned about the path to `to` (an address a sender sends to).
 * PURE_LINK_HINT_TOO_BIG: a datagram of `datagram_bytes` could not go (EMSGSIZE) or an ICMP
 *   packet-too-big said the path carries at most `datagram_bytes` of UDP payload
 *   (0: unknown); the sender lowers its datagram size as spec/protocol.md §5.1 says.  A hint
 *   of the size the sender uses now, or of 0, drops it to PURE_LINK_DATAGRAM_BASE; one of a
 *   probe's size fails that probe; one between the base and the size now lowers it to the
 *   hint at once, and a probe of that size then confirms it; one above the size now is the
 *   next probe's size and bounds the search (the size rises only if that probe is acknowledged).
 *   A hint below the base is only counted (the base is the floor).  Prefer the path MTU the
 *   kernel knows (IP_MTU less 28, IPV6_MTU less 48) to the size of the datagram refused.
 * PURE_LINK_HINT_UNREACHABLE: ICMP port or host unreachable for `to` (datagram_bytes 0);
 *   counted, and reported to the host through statistics, never trusted to stop a run.
 * Returns the number of open senders sending to `to` (0: none; the hint is then counted in
 * the endpoint's totals only), or PURE_LINK_ERR_INVALID for an unknown kind or address. */
enum { PURE_LINK_HINT_TOO_BIG = 1, PURE_LINK_HINT_UNREACHABLE = 2 };
PURE_LINK_API int pure_link_path_hint(pure_link *pl, const pure_link_addr *to, uint32_t kind,
                                      uint32_t datagram_bytes, uint64_t now_ns);
/* Runs the timers due at now_ns.  Returns 0 or a sticky fatal error. */
PURE_LINK_API int pure_link_tick(pure_link *pl, uint64_t now_ns);
/* The earliest time a timer, or pacing, needs a call; UINT64_MAX if none. */
PURE_LINK_API uint64_t pure_link_deadline(const pure_link *pl);

/* ---- Events: a bounded queue; drain it after every call. ---- */
typedef enum pure_link_event_kind {
    PURE_LINK_EVENT_NONE = 0,
    PURE_LINK_EVENT_STREAM_OPEN,   /* receiver: a run binds a stream; answer with
                                      pure_link_stream_answer() */
    PURE_LINK_EVENT_RECORD,        /* receiver: a record for the host; bytes valid until the
                                      next call; answer later with pure_link_stored() */
    PURE_LINK_EVENT_STORED,        /* sender: records up to `record` (exclusive) are stored */
    PURE_LINK_EVENT_REFUSED,       /* sender: the receiver refused the stream (`reason`);
                                      once per refusal episode: log one line */
    PURE_LINK_EVENT_RELEASED,      /* sender: a refusal was lifted */
    PURE_LINK_EVENT_MEMO_WRITE,    /* receiver: write `data` at `offset` of the memo file,
                                      make it durable, then pure_link_memo_written(token) */
    PURE_LINK_EVENT_EPOCH,         /* either side: a run entered `epoch` (for logs, keylogs) */
    PURE_LINK_EVENT_CLOSED,        /* sender: closed and everything stored */
    PURE_LINK_EVENT_FATAL,         /* the endpoint failed; `code` says why; reported once */
    PURE_LINK_EVENT_STREAM_REFUSED /* receiver: the core refused a run's stream itself (reason 3:
                                      this key may not send as that source); no answer is due:
                                      log it (it comes again at each of the run's trials) */
} pure_link_event_kind;

/* Which fields each kind fills (the others are 0 or NULL, or -1 for handles):
 *   STREAM_OPEN  stream, peer, run, source, input, shape, record (the sender's base record),
 *                reason (PURE_LINK_OPEN_RESUME when the sender asks where to resume)
 *   RECORD       stream, peer, run, record, data/len (+ data2/len2)
 *   STORED       sender, run, record
 *   REFUSED      sender, run, reason            RELEASED, CLOSED  sender, run
 *   MEMO_WRITE   offset, token, data/len
 *   EPOCH        the side that derived it: a sender sets `sender` (stream = -1), a receiver
 *                sets `stream` and `peer` (sender = -1); run, epoch, secret, both publics
 *   FATAL        code
 *   STREAM_REFUSED  stream, peer, run, source, input, shape, reason */
typedef struct pure_link_event {
    pure_link_event_kind kind;
    int sender;                    /* sender events: the sender handle */
    int stream;                    /* receiver events: the stream (run slot) handle */
    int peer;                      /* receiver events: the peer index */
    uint64_t run;                  /* the sender's run id */
    int64_t record;                /* RECORD: its number; STORED: records stored so far */
    uint32_t reason;               /* REFUSED: 1 no input, 2 other shape, 3 source not allowed,
                                      4 the receiver cannot store the input now, 5 cut off: a
                                      newer run took the source over (for good: end the run) */
    uint32_t epoch;                /* EPOCH */
    int code;                      /* FATAL */
    uint64_t offset;               /* MEMO_WRITE */
    uint64_t token;                /* MEMO_WRITE; EPOCH at a receiver: the reply run of this
                                      build of the run (a run rebuilt after it lost its state
                                      starts its epochs again under a new one) */
    const uint8_t *data;           /* RECORD bytes, MEMO_WRITE bytes; valid until the next call */
    size_t len;
    const uint8_t *data2;          /* RECORD: the rest of the record when it wraps around the
                                      receiver's ring (len2 bytes; usually 0) */
    size_t len2;
    const char *source;            /* STREAM_OPEN: names (NUL-terminated), valid until the next call */
    const char *input;
    uint64_t shape;                /* STREAM_OPEN */
    const uint8_t *secret;         /* EPOCH: the epoch secret (32 bytes), for a keylog
                                      (spec/keylog.md); inside the endpoint, valid until the
                                      next call, and wiped by the next pure_link_event_next */
    const uint8_t *sender_public;  /* EPOCH: 32 bytes, valid until the next call */
    const uint8_t *receiver_public;/* EPOCH: 32 bytes, valid until the next call */
} pure_link_event;

/* Takes the next event into *ev; returns 1, or 0 when the queue is empty. */
PURE_LINK_API int pure_link_event_next(pure_link *pl, pure_link_event *ev);

/* A STREAM_OPEN whose `reason` is PURE_LINK_OPEN_RESUME asks where the source stands
 * (spec/protocol.md §4.3): accept with `stored_mark` = how many records of (peer key,
 * source) the host holds durably in the order the sender reads its input, and the run's
 * records are numbered from there (the sender skips as many of its input).  A host that
 * does not know resuming answers as for any new run (0): the sender then starts from its
 * input's first record. */
enum { PURE_LINK_OPEN_RESUME = 1 };
/* Answers STREAM_OPEN: 0 accepts, with `stored_mark` = how many records of this run the
 * host already stored (0 for a new run; records below it are not delivered again);
 * -1 refuses with reason 1 (no such input), -PURE_LINK_OTHER_SHAPE with reason 2,
 * -PURE_LINK_CANNOT_STORE with reason 4 (the input cannot store now), -PURE_LINK_CUT_OFF
 * with reason 5 (a newer run of this key and source took the source over, §4.3).
 *
 * The mark must be durable (fdatasync returned): the sender lets go of every record below
 * it, so a mark that a crash can take back loses records.  Records the host wrote but has
 * not yet made durable are above the mark; they are delivered again, and the host writes
 * them again under the same record numbers.
 *
 * Exactly-once across a restart: the host keeps, durably and beside the records, each
 * run's stored count under (sender key, run) and answers with it when the run's stream
 * opens again (after a crash, or after the run went idle).  A count kept in memory is lost
 * with the process, and the records after the last one the sender heard stored are then
 * written twice.  shims/store/pl_store.h keeps it for its users.
 *
 * Handles: a stream handle names a run slot.  After a run is quiet for idle_ns, or sooner
 * once the host has stored all it handed over (spec/protocol.md §8), its slot may serve
 * another run, of any peer: a STREAM_OPEN on a handle ends the previous run's use of it, and
 * a run that comes back after going idle may come on another handle.  Key host state on
 * (peer, run), never on the handle alone; the run's state may be forgotten once its
 * records are durable, because the stored count is what a later STREAM_OPEN needs. */
PURE_LINK_API int pure_link_stream_answer(pure_link *pl, int stream, int answer, int64_t stored_mark,
                                          uint64_t now_ns);
/* The host made records of `stream` durable up to `record` (exclusive); the core
 * tells the sender (STORED).  Call only after the write is durable.  Returns
 * PURE_LINK_ERR_NOT_FOUND for a stream that is not accepted now (refused, ended). */
PURE_LINK_API int pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns);
/* The host takes back its acceptance of `stream` (or answers its STREAM_OPEN): `answer` is
 * one of stream_answer's refusals, -PURE_LINK_CANNOT_STORE when the input's storage failed
 * (spec/protocol.md §4.1 "Refused after accepting"), -PURE_LINK_CUT_OFF when a newer run
 * took the stream's source over (§4.3).  The run is refused with that reason
 * at once: its next reply carries REFUSED and no STORED; the mark stays where the host's
 * last pure_link_stored() put it, and every record above it is forgotten — the RECORD
 * events of the stream still in the queue are taken out, and the sender sends them again
 * from the mark once a later STREAM is accepted (the host answers it with its durable
 * count, so records it made durable meanwhile are not handed over twice).  Call
 * pure_link_stored() first for what is durable.  Returns 0 (also for a stream refused
 * already), PURE_LINK_ERR_INVALID for another answer, PURE_LINK_ERR_NOT_FOUND when no run
 * holds the handle. */
PURE_LINK_API int pure_link_stream_refuse(pure_link *pl, int stream, int answer, uint64_t now_ns);

/* What one of a receiver's run slots holds now, for a host's status view (pure-link show):
 * read-only, and nothing in it is needed to run the protocol. */
typedef struct pure_link_run_info {
    int peer;                       /* the wired peer's index */
    uint64_t run;                   /* the sender's run id */
    uint32_t epoch;                 /* the highest epoch the sender was heard using */
    uint8_t validated;              /* 1: the address answered a challenge (spec/protocol.md §6) */
    uint8_t accepted;               /* 1: the host accepted the run's stream */
    pure_link_addr addr;            /* where the run's packets come from now */
    uint64_t last_heard_ns;         /* now_ns of the last packet of the run that opened */
    uint64_t records_delivered;     /* records handed to the host (RECORD events), counted
                                       as record numbers: the next one to hand over */
    uint64_t records_stored;        /* the host's durable mark (pure_link_stored) */
    uint64_t bytes_delivered;       /* the stream offset handed over up to (framing included;
                                       a run that binds mid-stream starts at its base) */
} pure_link_run_info;
/* Fills *out for the run slot `stream` (a STREAM_OPEN handle, 0..runs_most - 1): 0, or
 * PURE_LINK_ERR_NOT_FOUND when no run holds that slot now.  A host lists every run by
 * asking each handle. */
PURE_LINK_API int pure_link_run_info_get(const pure_link *pl, int stream, pure_link_run_info *out);

/* ---- Memo (spec/memo.md): the receiver's persistent epoch secrets. ---- */
/* Bytes of the memo file for this config. */
PURE_LINK_API size_t pure_link_memo_size(const pure_link_config *config);
/* Loads a memo read from disk before any datagram; returns 0, or PURE_LINK_ERR_MEMO when
 * the bytes are not a memo of this format (the caller then starts empty and the core
 * rewrites it). */
PURE_LINK_API int pure_link_memo_load(pure_link *pl, const uint8_t *memo, size_t len, uint64_t now_ns);
/* The write named by a MEMO_WRITE token is durable. */
PURE_LINK_API int pure_link_memo_written(pure_link *pl, uint64_t token, uint64_t now_ns);

/* ---- Statistics: a versioned struct; the caller sets `version`. ---- */
#define PURE_LINK_STATS_VERSION 5u
typedef struct pure_link_stats {
    uint32_t version;                 /* in: PURE_LINK_STATS_VERSION */
    /* RTT of a sender (0 for endpoint totals). */
    uint64_t rtt_ns_latest, rtt_ns_min, rtt_ns_smoothed, rtt_ns_variance;
    uint64_t cwnd_bytes, bytes_in_flight, pacing_rate_bytes_per_s;
    uint64_t packets_sent, packets_received, packets_lost, packets_retransmitted;
    uint64_t bytes_sent, bytes_received;
    uint64_t records_queued, records_sent, records_delivered, records_stored, records_resent;
    uint64_t link_refused, listener_refused;
    uint64_t epochs, run_key_builds, x25519_ops;
    uint64_t lost_notices_sent, lost_notices_received;
    uint64_t spurious_losses, congestion_events, congestion_undos, packets_copied;
    uint64_t memo_runs_restored;
    /* Every datagram fed to pure_link_receive() (packets_received) is counted once more:
     * in packets_opened (it authenticated and its frames were acted on) or in one
     * dropped_* reason: bad_header, unknown_key (no wired key, or no sender, for it), auth
     * (did not open), replay, malformed (opened, frames unreadable), no_slot (authentic,
     * no run slot free), stale_epoch (its epoch's keys are wiped), no_run (epoch >= 1 of
     * a run this receiver has no state for: LOST's case).  The other counters are not
     * datagrams: dropped_no_room counts packets whose record bytes were not kept,
     * dropped_amplification the times a due reply was held back (it waits, nothing is
     * discarded) because less than 64 B of the 3x allowance was left (a reply cut short to
     * fit is not counted), and dropped_malformed also
     * counts, once, a run's record stream that failed to parse. */
    uint64_t dropped_bad_header, dropped_unknown_key, dropped_auth, dropped_replay,
             dropped_malformed, dropped_amplification, dropped_no_slot, dropped_stale_epoch,
             dropped_no_room, dropped_no_run, packets_opened;
    /* Version 2.  Address validation (spec/protocol.md §6): a receiver counts the runs it
     * moved to a new address and the addresses a RESPONSE validated (a run's first address
     * included); a sender counts the CHALLENGE frames it heard. */
    uint64_t address_moves, addresses_validated, challenges_received;
    /* Version 3.  The receive pool (endpoint totals only): its bytes, and the most of them
     * ever held at once by the runs' record bytes. */
    uint64_t receive_memory_bytes, receive_memory_bytes_peak;
    /* Version 4.  The AEAD limit on reply keys (spec/crypto.md §10), endpoint totals only:
     * the times a due reply was held back (it waits, nothing is discarded) because its run's
     * reply key was in its last 2^16 replies, which carry only an ACCEPT, or at its 2^23.
     * Nonzero only when a sender did not move to a new epoch in time (replies lost, or a
     * sender that does not count them). */
    uint64_t replies_held_key_limit;
    /* Version 5.  Datagram sizes (spec/protocol.md §5.1), per sender: the UDP payload bytes its
     * full data packets have now, the probes of a larger size it sent and lost (a lost probe
     * is not a lost packet: not in packets_lost, no congestion event), the black holes it
     * left (packets above the base lost while smaller ones came through), and the host's
     * hints for its address (pure_link_path_hint).  Endpoint totals add the counters up
     * (hints for an address no sender sends to count there alone); their datagram_bytes is
     * the smallest of the open senders', or 0 with none open. */
    uint64_t datagram_bytes, pmtu_probes_sent, pmtu_probes_lost, pmtu_black_holes;
    uint64_t path_too_big_hints, path_unreachable_hints;
} pure_link_stats;

/* Every counter of pure_link_stats (not the RTT and window figures), for hosts that print
 * them all: X(name) once per field. */
#define PURE_LINK_STATS_COUNTERS(X) \
    X(packets_sent) X(packets_received) X(packets_lost) X(packets_retransmitted) \
    X(bytes_sent) X(bytes_received) \
    X(records_queued) X(records_sent) X(records_delivered) X(records_stored) X(records_resent) \
    X(link_refused) X(listener_refused) X(epochs) X(run_key_builds) X(x25519_ops) \
    X(lost_notices_sent) X(lost_notices_received) \
    X(spurious_losses) X(congestion_events) X(congestion_undos) X(packets_copied) X(memo_runs_restored) \
    X(dropped_bad_header) X(dropped_unknown_key) X(dropped_auth) X(dropped_replay) \
    X(dropped_malformed) X(dropped_amplification) X(dropped_no_slot) X(dropped_stale_epoch) \
    X(dropped_no_room) X(dropped_no_run) X(packets_opened) X(address_moves) X(addresses_validated) X(challenges_received) \
    X(receive_memory_bytes) X(receive_memory_bytes_peak) X(replies_held_key_limit) \
    X(pmtu_probes_sent) X(pmtu_probes_lost) X(pmtu_black_holes) X(path_too_big_hints) X(path_unreachable_hints)

/* Fills *out for one sender (sender >= 0) or for the whole endpoint (sender = -1).
 * A sender's own figures stay readable after its CLOSED event, until pure_link_sender_open
 * reuses the handle.  Endpoint totals add up every sender's counters and the receiver's:
 * `epochs` counts the epochs senders moved to and the epochs the receiver's runs entered
 * (its EPOCH events). */
PURE_LINK_API int pure_link_stats_get(const pure_link *pl, int sender, pure_link_stats *out);

#ifdef __cplusplus
}
#endif
#endif
