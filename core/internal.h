/* internal.h: the endpoint's state.  Not part of the API.
 *
 * One endpoint is one node on one socket.  It holds up to senders_most senders (outputs of
 * this node) and a receiver part that serves wired peers, each with run slots.  All of it
 * lives in the caller's memory, carved at init by layout(); pointers in these structs point
 * into that memory only (the caller must not move it). */
#ifndef PL_INTERNAL_H
#define PL_INTERNAL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pure_link.h"
#include "crypto.h"
#include "wire.h"
#include "rtt.h"
#include "rack.h"
#include "cc.h"
#include "pacer.h"

#define PL_NONE UINT64_MAX          /* "no such time / number" */
#define PL_NS_PER_MS 1000000ull
#define PL_NS_PER_S 1000000000ull

/* ---- Limits (every one named; see spec/protocol.md "Values"). ---- */
#define PL_EVENTS_MOST          512u   /* event queue; delivery pauses when it is full */
#define PL_EVENT_KEYS_BYTES     96u    /* an EPOCH event's secret and both publics */
#define PL_RANGES_MOST          256u   /* reassembly holes tracked per run, in a hole table */
#define PL_RANGES_INLINE        16u    /* ... and in the run slot itself, without a table */
#define PL_HOLE_TABLES_LEAST    64u    /* hole tables: this many (up to one per run slot), */
#define PL_HOLE_SLOTS_PER_TABLE 32u    /* or one per 32 run slots if that is more */
#define PL_KEY_CACHE_RUNS_LEAST 1024u  /* expanded run keys: this many (up to 2 per run slot), */
#define PL_KEY_CACHE_SLOTS_PER_ENTRY 8u /* or one per 8 run slots if that is more */
#define PL_RESEND_RANGES_MOST   256u   /* stream ranges awaiting retransmission per sender */
#define PL_ACK_RECV_RANGES_MOST 32u    /* received-pn ranges a run remembers for ACK */
#define PL_REPLAY_WINDOW        2048u  /* packets behind the largest that are still accepted */
#define PL_EPOCH_KEYS           3u     /* previous, current, next epoch keys of a run */
#define PL_SOURCES_BYTES        512u   /* wiring: allowed source names per peer */
#define PL_RESEND_UNSTORED_NS   (1 * PL_NS_PER_S)   /* seed: heard but not stored in 1 s: resend */
#define PL_PTO_NS_MOST          (1 * PL_NS_PER_S)   /* a backed-off PTO waits at most this (or the
                                                       PTO itself, if longer): spec/protocol.md */
#define PL_REFUSE_WAIT_NS_FIRST (1 * PL_NS_PER_S)   /* seed: refusal wait starts at 1 s ... */
#define PL_REFUSE_WAIT_NS_MOST  (64 * PL_NS_PER_S)  /* ... doubling up to 64 s */
#define PL_HOST_ANSWER_NS_MOST  (1 * PL_NS_PER_S)   /* unanswered STREAM_OPEN counts as refused */
#define PL_OLD_EPOCH_NS         (10 * PL_NS_PER_S)  /* old epoch keys kept after a change */
#define PL_RUN_SETTLED_NS       (100 * PL_NS_PER_MS) /* a run with nothing outstanding, quiet this
                                                       long, gives its slot to a new run (§8) */
#define PL_RUN_UNPROVEN_NS      (1 * PL_NS_PER_S)   /* a run never proven live, likewise (§8) */
#define PL_RUN_STOPPED_NS       (1 * PL_NS_PER_S)   /* a run quiet this long gives back its pool
                                                       blocks past delivery and its ticket (§4.2) */
#define PL_REPLY_RUNS_LEFT      8u     /* reply runs a sender has left and refuses: the latest */
#define PL_COPIES_MOST          16u    /* copies of app-limited packets waiting to go */
#define PL_COPY_GAP_NS_LEAST    (1 * PL_NS_PER_MS)   /* a copy leaves srtt/4 after its packet, */
#define PL_COPY_GAP_NS_MOST     (20 * PL_NS_PER_MS)  /* within these bounds */
#define PL_OFFERS_PER_S         4u     /* X25519 for authenticated OFFERs, per peer */
#define PL_LOST_GAP_NS          (5 * PL_NS_PER_MS)  /* spec: LOST per (peer, run, address) at most this often */
#define PL_LOST_RUNS_MOST       64u    /* (peer, run, address) that drew LOST lately: the allowance's table */
#define PL_LOST_ADDR_GAP_NS     (2 * PL_NS_PER_MS)  /* spec: LOST to one address at most this often, */
#define PL_LOST_ADDR_BURST      4u                  /* after a burst of this many */
#define PL_LOST_ADDRS_MOST      64u    /* addresses that drew LOST lately: their table */
#define PL_LOST_BYTES_PER_S     (64u * 1024u)       /* spec: LOST bytes out per second, endpoint-wide, */
#define PL_LOST_BYTES_BURST     (8u * 1024u)        /* after a burst of this many */
#define PL_ACK_EVERY            2u     /* ack-eliciting packets before an immediate ACK */
#define PL_STORED_AT_ONCE       16u    /* records a stored mark moved that call for a reply at once */
#define PL_STORED_QUICK         1024u  /* a run's first packets: every stored mark that moved goes at once */
#define PL_ACK_DELAY_NS_PEER    (25 * PL_NS_PER_MS)  /* spec: a receiver ACKs within 25 ms */
#define PL_PROBE_GAP_NS         PL_ACK_DELAY_NS_PEER /* a PTO's second probe goes this long after its
                                                       first, so each draws a reply of its own */
#define PL_LOST_TRIGGER_LEAST   64u    /* spec: LOST answers only datagrams of >= 64 B */
#define PL_LOST_QUEUE_MOST      16u    /* LOST notices waiting to be pulled */
#define PL_INDEX_SLOTS_PER_ENTRY 4u    /* the peer and run indexes: a slot in four taken at most, */
#define PL_INDEX_PROBES_MOST    64u    /* and a lookup reads this many slots at most (map.c) */
#define PL_REPLY_BYTES_LEAST    64u    /* a reply is not started with less budget than this */
#define PL_ACK_BYTES_LEAST      16u    /* room for an ACK with one range */
#define PL_EPOCH_PACKETS_LIMIT  (1ull << 23) /* spec: a new epoch before this many packets */
#define PL_RUN_PACKETS_DRAIN    (1ull << 31) /* spec: a run starts no new record from here on, */
#define PL_RUN_PACKETS_MOST     (1ull << 32) /* and never sends this packet number (run.c) */
#define PL_EPOCH_PACKETS_RESERVE (1ull << 16) /* the last packets under a key: only what moves
                                                the epoch (a sender's OFFER, a receiver's ACCEPT) */
#define PL_EPOCH_REPLIES_OFFER  (1ull << 22) /* a sender offers after opening this many replies
                                                under one reply key (or epoch_packets if fewer) */

_Static_assert(PL_REPLAY_WINDOW % 64 == 0, "replay bitmap is in 64-bit words");
_Static_assert(PL_EPOCH_PACKETS_LIMIT <= (1ull << 23), "AEAD limit");
_Static_assert(PL_EPOCH_PACKETS_RESERVE < PL_EPOCH_PACKETS_LIMIT / 2, "the default offer point leaves room");
_Static_assert(PURE_LINK_EPOCH_PACKETS_MOST == PL_EPOCH_PACKETS_LIMIT - PL_EPOCH_PACKETS_RESERVE, "the public bound");
_Static_assert(PL_EPOCH_REPLIES_OFFER <= PL_EPOCH_PACKETS_LIMIT / 2, "a lost half of the replies still offers first");

/* ---- A timer table: an enum-indexed array (deadline.c reads the earliest). ---- */
/* Timers set by protocol events.  Other wake-ups are derived from state in
 * pl_sender_deadline(): pacing (pace_wait_ns), the 1 s resend rule (stored_progress_ns),
 * the epoch clock (epoch_started_ns) and copies (copies[0].due_ns). */
typedef enum pl_sender_timer {
    PL_ST_LOSS = 0,      /* RACK time threshold or PTO */
    PL_ST_REFUSE,        /* refusal wait over: send a trial packet */
    PL_ST_OLD_EPOCH,     /* wipe the previous epoch's keys */
    PL_ST_PROBE,         /* a PTO's second probe, PL_PROBE_GAP_NS after its first */
    PL_ST_COUNT
} pl_sender_timer;

typedef enum pl_run_timer {
    PL_RT_ACK = 0,       /* ack delay ran out */
    PL_RT_HOST,          /* host did not answer STREAM_OPEN */
    PL_RT_OLD_EPOCH,     /* drop the previous epoch's keys */
    PL_RT_STOPPED,       /* a run holding pool memory may have stopped: look (pool.c) */
    PL_RT_COUNT
} pl_run_timer;

/* The run slots' intrusive lists, first in first out (deadline.c). */
typedef enum pl_run_list {
    PL_LIST_READY = 0,   /* a reply may be due: pull serves them in turn */
    PL_LIST_HELD,        /* delivery or an event waits for room in the event queue */
    PL_LIST_FREE,        /* let go by an unwired peer: a new run takes it */
    PL_RUN_LISTS
} pl_run_list;

typedef struct pl_range { uint64_t lo, hi; } pl_range; /* [lo, hi) */

/* A set of disjoint, sorted [lo, hi) ranges with a bound on their number. */
typedef struct pl_rangeset {
    uint32_t count, most;
    pl_range *r;
} pl_rangeset;

/* ---- Keys of one epoch of one run, as a side holds them.  The expanded AEAD keys (round
 * keys, GHASH tables: 1.5 KiB) live in the key cache (keycache.c), not here. ---- */
typedef struct pl_epoch_keys {
    uint8_t valid;
    uint8_t reply_valid;                   /* reply keys derived (a sender needs the reply run) */
    uint32_t epoch;
    uint32_t pin;                          /* a sender's keys: its own cache entry + 1; 0: a run's */
    uint32_t entry;                        /* the cache entry that last held their contexts */
    uint64_t build;                        /* this derivation's number (keycache.c); 0: none */
    uint64_t reply_run;                    /* the reply run these reply keys are for */
    uint64_t replies;                      /* replies under the reply key: sealed (a run's keys) or
                                              opened (a sender's); spec/crypto.md §10 */
    uint8_t secret[32];                    /* E(epoch) */
    uint8_t data_key[PURE_LINK_AEAD_KEY_BYTES], reply_key[PURE_LINK_AEAD_KEY_BYTES];
    uint8_t data_iv[12], reply_iv[12];
} pl_epoch_keys;

/* One cache entry: an epoch's two expanded keys. */
typedef struct pl_key_ctx {
    _Alignas(16) uint8_t data[PURE_LINK_AEAD_CTX_BYTES];   /* sender -> receiver */
    _Alignas(16) uint8_t reply[PURE_LINK_AEAD_CTX_BYTES];  /* receiver -> sender */
} pl_key_ctx;

/* The key cache: entries [0, pinned) belong to the senders' keys (two each), the rest serve
 * every run slot's keys and are taken back in CLOCK order (keycache.c). */
typedef struct pl_key_cache {
    pl_key_ctx *ctx;
    uint64_t *build;                       /* per entry: the derivation it holds; 0: none */
    uint8_t *used;                         /* per entry: used since the hand last passed */
    uint32_t entries, pinned, hand;
    uint64_t builds;                       /* derivations numbered so far */
    uint64_t expansions;                   /* contexts expanded: at a derivation, and again after
                                              another build took their entry */
} pl_key_cache;

/* ---- Sender ---- */
typedef enum pl_sent_state { PL_SENT_FREE = 0, PL_SENT_FLIGHT, PL_SENT_ACKED, PL_SENT_LOST } pl_sent_state;

typedef struct pl_sent {
    uint64_t pn;
    uint64_t sent_ns;
    uint64_t off, len;       /* record-stream range carried ([off, off+len)); len 0: none */
    uint32_t bytes;          /* datagram bytes (for congestion control) */
    uint8_t state;
    uint8_t has_stream, has_offer, has_response, trial, app_limited, is_copy;
    uint8_t size_probe;      /* a probe of a larger datagram size (pmtu.c): its loss is no
                                congestion (its record bytes, if any, go again) */
    uint8_t response_turn;   /* has_response: the sender's response_turn when it left */
    uint8_t tag[PL_LOST_TAG_BYTES];  /* the first bytes of its tag: a LOST must echo them */
    uint32_t episode;        /* LOST: the congestion episode its loss counted in */
    /* Delivery-rate state when it left (draft-cheng-iccrg-delivery-rate-estimation). */
    uint64_t delivered, delivered_ns, first_sent_ns, tx_in_flight;
    uint8_t rate_app_limited;
} pl_sent;

/* A sender's datagram size and its search (pmtu.c, spec/protocol.md §5.1, after RFC 8899). */
typedef struct pl_pmtu {
    uint32_t bytes;          /* UDP payload of a full packet now */
    uint32_t acked;          /* the largest size acknowledged (the base before any): the search's floor */
    uint32_t failed;         /* the smallest size known not to pass; PL_DATAGRAM_MOST + 1: none */
    uint32_t probe_bytes;    /* the size being probed; 0: none (the search is over) */
    uint32_t hinted;         /* a size a too-big hint named above `acked`: probed before any
                                other while it is below `failed`; 0: none */
    uint64_t probe_pn;       /* its probe in flight; PL_NONE: none */
    uint64_t sent_pn;        /* the last probe sent, whatever its target: while its ring entry
                                is in flight it takes no room in the window (send.c) */
    uint64_t path_pn;        /* packets from this one on went over the path as it is now (a
                                hint or a black hole said it changed): older ones prove nothing */
    uint32_t probe_losses;   /* probes of probe_bytes lost in a row */
    uint32_t big_losses;     /* packets above the base lost since one above it was acknowledged */
    uint64_t raise_ns;       /* the search starts again then; PL_NONE: not planned */
    uint64_t probe_at_ns;    /* pl_pmtu_probe_due may have a probe from then on (0: now, while
                                no probe is in flight; raise_ns once the search is over) */
    uint64_t raise_interval_ns;  /* config.pmtu_raise_ns */
    uint8_t ack_small, ack_big;  /* the ACK being read acknowledged a packet of at most / above
                                    the base size (pl_pmtu_ack_done reads and clears them) */
    uint32_t ack_quiet_bytes;    /* more packets of this size in the ACK being read tell nothing
                                    new (no loss or change of the search since one was read); 0: none */
} pl_pmtu;

typedef struct pl_sender {
    uint8_t open, closing, closed_reported;
    int handle;
    pure_link_sender_config wiring;        /* names copied below; pointers cleared */
    char source[PURE_LINK_NAME_MOST + 1], input[PURE_LINK_NAME_MOST + 1];
    uint8_t source_len, input_len;
    uint64_t run;
    uint8_t static_e0[32];

    /* Keys: sealing in `epoch`, opening replies of the current and previous epoch. */
    pl_epoch_keys keys[2];                 /* keys[key_cur] current, the other previous; AEAD
                                              contexts may not be copied, so they rotate */
    uint8_t key_cur;
    uint32_t epoch;
    uint8_t epoch_field;                   /* pl_epoch_field(epoch), set with it: each packet's header */
    uint8_t offer_secret[32], offer_public[32];
    uint32_t offer_epoch;                  /* epoch offered and not accepted yet; 0: none */
    uint64_t epoch_started_ns, epoch_packets;
    uint64_t epoch_first_pn;               /* the first packet sealed in the current epoch */
    uint64_t reply_run;                    /* latest authenticated reply run */
    uint8_t reply_run_known;
    uint64_t reply_runs_left[PL_REPLY_RUNS_LEFT]; /* reply runs it left, the latest (ring) */
    uint32_t reply_runs_left_count;        /* ever left: the ring's next slot, mod its size */

    /* Packet numbers and in-flight packets (ring indexed by pn % sent_most). */
    uint64_t pn_next, largest_acked;       /* largest_acked = PL_NONE before any */
    uint64_t pn_anchor;                    /* largest acked by the receiver's current life:
                                              what it decodes our packet numbers against */
    uint64_t largest_reply_pn;             /* replies: for the replay window */
    uint64_t reply_window[PL_REPLAY_WINDOW / 64];
    pl_sent *sent;
    uint32_t sent_most;
    uint64_t pn_oldest;                    /* oldest pn whose entry may still be in use */
    uint64_t bytes_in_flight, eliciting_in_flight;

    /* Record queue: bytes [stored_off, end_off) of the record stream, in blocks of the send
     * pool: blocks [block_lo, block_lo + blocks_held) by number, block_table[n % table_most]. */
    uint32_t *block_table;
    uint32_t table_most, blocks_held;
    uint64_t block_lo;
    uint32_t queue_bytes;                  /* most bytes queued: send_queue_bytes, or the pool */
    uint64_t *record_start;                /* ring of record start offsets by record number */
    uint32_t records_most;
    uint64_t records_stored;               /* heard STORED mark: records below are freed */
    uint64_t records_end;                  /* next record number to queue */
    uint64_t records_started;              /* records whose first byte has been sent */
    uint64_t stored_off, end_off;          /* stream offsets */
    uint64_t next_off;                     /* first stream byte never sent */
    uint64_t acked_end;                    /* highest end of an acknowledged range */
    uint64_t acked_progress_ns;            /* when acked_end last moved */
    uint64_t ack_heard_ns;                 /* when an ACK last came; 0 before any */
    uint64_t credit;                       /* from STORED */
    pl_rangeset resend;
    pl_range resend_store[PL_RESEND_RANGES_MOST];
    uint64_t stored_progress_ns;           /* last time STORED advanced */

    /* Stream binding, address validation. */
    uint8_t stream_known;                  /* an ACK covered a packet that carried STREAM */
    uint8_t resuming;                      /* asks where to resume (STREAM alone) until STORED
                                              answers (spec/protocol.md §4.3) */
    uint8_t response_pending;
    /* Counts CHALLENGE tokens that differed from the one before: an acknowledged RESPONSE
     * settles the pending one only if it carried the current token. */
    uint8_t response_turn;
    uint8_t response_token[16];

    /* Refusal (spec/protocol.md "REFUSED"). */
    uint8_t refused;
    uint32_t refused_reason;
    uint64_t refuse_wait_ns, trial_pn;     /* trial_pn = PL_NONE: no trial in flight */
    uint8_t trial_due;

    /* Delivery rate: bytes delivered so far, when the last was, when the current flight's
     * first packet left, and the delivered count up to which samples are app-limited. */
    uint64_t delivered, delivered_ns, first_sent_ns, app_limited_mark;
    pl_rate_sample rs;                     /* being built from one ACK frame */
    uint8_t rs_have;

    pl_rtt rtt;
    pl_rack rack;
    pl_cc cc;
    pl_pacer pacer;
    pl_pmtu pmtu;
    uint64_t loss_time_ns;                 /* RACK: earliest time a packet times out; PL_NONE */
    uint32_t pto_count;
    uint32_t stored_asks;                  /* PINGs sent since STORED last moved, with nothing in
                                              flight and bytes heard received but not stored:
                                              the backoff of the next (spec/protocol.md §4.2) */

    /* Copies (spec/protocol.md "Local choices"): a sender far below its window sends each
     * packet of record bytes once more, a quarter RTT later, unless it was acknowledged. */
    struct pl_copy { uint64_t pn, off, len, due_ns; } copies[PL_COPIES_MOST];
    uint32_t copies_count;

    uint32_t offers_in_flight, responses_in_flight;
    uint32_t probes_due;                   /* PTO probes that may exceed the window */
    uint8_t live_proof_due;                /* a packet of epoch 1 is due at once (a PING if
                                              nothing else goes): the receiver hands over
                                              nothing of epoch 0 before one opens */
    uint64_t pace_wait_ns;                 /* pacing holds a datagram until then */
    uint64_t epoch_ns_most;
    uint8_t stored_event_due, refused_event_due, released_event_due, epoch_event_due;

    uint64_t timers[PL_ST_COUNT];
    uint64_t last_send_ns;
    uint64_t stray_lost_ns;                /* last probe sent for a LOST naming no packet of ours */
    pure_link_stats stats;
} pl_sender;

/* ---- Receiver ---- */
typedef enum pl_stream_state {
    PL_STREAM_NONE = 0,      /* no STREAM heard (or forgotten) */
    PL_STREAM_ASKING,        /* STREAM_OPEN event out, waiting for the host */
    PL_STREAM_ACCEPTED,
    PL_STREAM_REFUSED
} pl_stream_state;

typedef enum pl_ticket_state { PL_TICKET_NONE = 0, PL_TICKET_WAITING, PL_TICKET_HELD } pl_ticket_state;

typedef struct pl_run {
    uint8_t in_use;
    int handle;
    int peer;
    uint64_t run;
    uint64_t last_heard_ns;
    pl_epoch_keys keys[PL_EPOCH_KEYS];     /* by epoch: the slot (epoch % 3) */
    uint32_t epoch;                        /* highest epoch the sender is heard to use */
    uint32_t epoch_newest;                 /* highest epoch derived (>= epoch) */
    /* OFFER / ACCEPT */
    uint8_t offer_public[32], accept_public[32];
    uint32_t accept_epoch;                 /* ACCEPT to (re)send for this epoch; 0: none */
    uint64_t memo_token;                   /* ACCEPT waits until this memo write is durable */
    uint8_t accept_pending;
    uint8_t fresh;                         /* a packet proved the run live (epoch >= 1 opened) */
    uint32_t restored_epoch;               /* restored from the memo in this epoch; 0: built */
    /* Replay window over received packet numbers. */
    uint64_t largest_pn;                   /* PL_NONE before any */
    uint64_t window[PL_REPLAY_WINDOW / 64];
    /* ACK state. */
    pl_rangeset acks;
    pl_range ack_store[PL_ACK_RECV_RANGES_MOST];
    uint64_t largest_recv_ns;
    uint32_t eliciting_unacked;
    uint8_t ack_pending, stream_unknown_flag;
    uint64_t reply_run;                    /* this build's reply run: new at every build */
    uint64_t reply_pn_next;                /* reply packet numbers of this build, from 0 */
    /* Address. */
    pure_link_addr addr;
    uint8_t validated;
    uint64_t unvalidated_in, unvalidated_out;  /* bytes since the address was taken */
    uint8_t challenge_token[16];
    uint8_t challenge_pending;
    /* Stream. */
    uint8_t stream_state;
    uint32_t refused_reason;
    uint8_t refused_notice_pending;
    char source[PURE_LINK_NAME_MOST + 1], input[PURE_LINK_NAME_MOST + 1];
    uint64_t shape;
    uint64_t base_record;                  /* from STREAM: first record the sender holds */
    uint64_t host_mark;                    /* records below this the host already stored */
    uint8_t resume_asked;                  /* bound by a STREAM without record bytes (§4.3) */
    uint64_t deliver_off, deliver_record;  /* next record to hand over */
    /* The record at deliver_off as its prefix was read ([head_start, head_stop) holds its
     * bytes), while head_stop != 0: delivery waiting for the rest of a record reads the
     * prefix once, not at every packet and stored mark.  Zeroed wherever deliver_off moves
     * other than past the record, when bytes before head_start are written again (stream.c),
     * and by pl_run_clear. */
    uint64_t head_start, head_stop;
    uint64_t stored_off, stored_record;    /* host's durable mark */
    uint64_t delivered_bytes, delivered_records;   /* for the credit formula */
    /* Record bytes [stored_off, ...) in blocks of the receive pool (pool.c). */
    uint32_t mem_blocks;                   /* blocks held */
    uint64_t mem_top;                      /* highest block number held + 1 */
    uint64_t share, share_at;              /* its share of the pool while holding_changes == share_at */
    uint64_t mem_hint_at;                  /* block number + 1 of the block written last, */
    uint32_t mem_hint_block;               /* its pool block (no map lookup); 0: none */
    uint8_t ticket_state;                  /* pl_ticket_state */
    uint64_t ticket_end;                   /* end of the record the ticket is (to be) for */
    uint64_t ticket_entry;                 /* number of its entry in the ticket's queue */
    pl_rangeset have;                      /* stream ranges received beyond deliver_off: */
    pl_range have_inline[PL_RANGES_INLINE]; /* here, or in hole table have_table (holes.c) */
    uint32_t have_table;                   /* its number + 1; 0: none */
    uint8_t stored_pending;
    uint64_t stored_told;                  /* the count the last STORED sent said */
    uint8_t broken;                        /* the record stream failed to parse: no delivery */
    uint8_t deliver_capped;                /* delivery stopped at unstored_records_most: only a
                                              STORED from the host lets it on (pure_link_stored) */
    uint8_t open_event_due, epoch_event_due, refused_event_due;
    uint64_t timers[PL_RT_COUNT];          /* set through pl_run_timer_set (deadline.c) */
    uint64_t deadline_ns;                  /* the earliest of timers while in use: its heap key */
    uint32_t heap_at;                      /* its place in the deadline heap + 1; 0: not there */
    /* Its links in the run lists (deadline.c): the next slot + 1 (0 ends a list), and
     * whether it is on the list.  They outlive the slot's runs (pl_run_clear keeps them), as
     * a list may still hold the slot: whoever takes it from a list looks at it then. */
    uint32_t list_next[PL_RUN_LISTS];
    uint8_t listed[PL_RUN_LISTS];
    uint32_t heard_prev, heard_next;       /* its neighbours + 1 in the heard list (deadline.c) */
    uint64_t index_key;                    /* its key in the run index (peer.c); 0: not there */
} pl_run;

typedef struct pl_peer {
    uint8_t in_use;
    uint8_t public_key[32];
    uint32_t key_id;
    uint8_t e0[32];                        /* E(0) of this peer, once e0_ready */
    uint8_t e0_ready;
    char sources[PL_SOURCES_BYTES];
    uint32_t runs;                         /* run slots held (pl_run_reset counts them) */
    uint32_t runs_holding;                 /* of them, runs holding pool blocks (pool.c) */
    uint64_t offer_tat_ns;                 /* X25519 rate (GCRA, see PL_OFFERS_PER_S) */
} pl_peer;

/* ---- Memo (memo.c, spec/memo.md) ---- */
#define PL_MEMO_LAYOUT          1u     /* layout number inside the PLM3 format */
#define PL_MEMO_HEADER_BYTES    64u
#define PL_MEMO_SLOT_BYTES      192u
#define PL_MEMO_WRITES_MOST     32u    /* slot writes in progress */
#define PL_MEMO_WRITES_PER_EPOCH 3u    /* header + slot + erased side slot */
enum {                                 /* byte offsets inside a slot image */
    PL_MEMO_SEQ = 0, PL_MEMO_STATE = 8, PL_MEMO_EPOCH = 12, PL_MEMO_PEER = 16, PL_MEMO_RUN = 48,
    PL_MEMO_SECRET = 56, PL_MEMO_OFFER = 88, PL_MEMO_ACCEPT = 120, PL_MEMO_PN = 152, PL_MEMO_SUM = 176
};
_Static_assert(PL_MEMO_SUM + 16 == PL_MEMO_SLOT_BYTES, "the checksum closes a slot");
_Static_assert(PL_MEMO_ACCEPT + 32 <= PL_MEMO_PN && PL_MEMO_PN + 8 <= PL_MEMO_SUM, "slot fields do not overlap");

typedef struct pl_memo_write {
    uint8_t busy, emitted, step, copy;   /* step 1: first copy; 2: second copy (or header) */
    uint32_t slot;
    uint32_t run_at;                     /* the run slot + 1 whose ACCEPT waits for it; 0: none */
    uint64_t token, offset;
    size_t len;
    uint8_t image[PL_MEMO_SLOT_BYTES];
} pl_memo_write;
_Static_assert(PL_MEMO_HEADER_BYTES <= PL_MEMO_SLOT_BYTES, "the header fits a write image");

typedef struct pl_memo_mirror {        /* what each memo slot holds, in memory */
    uint64_t seq;
    uint64_t run;
    int peer;
    uint8_t full;
} pl_memo_mirror;

typedef struct pl_lost_notice {
    int peer;
    uint64_t run;
    uint8_t epoch_field, pn_len;
    uint32_t pn_truncated;
    uint8_t tag[PL_LOST_TAG_BYTES];
    pure_link_addr to;
} pl_lost_notice;

/* ---- Receive pool (pool.c, spec/protocol.md §4.2 "Receive memory") ---- */
#define PL_BLOCK_BYTES  (16u * 1024u)   /* unit of the pool: fine enough for 1,000 runs in 64 MiB */
#define PL_STAGE_BYTES  (PURE_LINK_RECORD_MOST + 64u * 1024u) /* hand-over ring: one largest record */
#define PL_POOL_BYTES_LEAST ((PURE_LINK_RECORD_MOST / PL_BLOCK_BYTES + 2u) * PL_BLOCK_BYTES) /* one record */

/* Blocks of PL_BLOCK_BYTES handed out from a free stack (the receive and the send pool):
 * free_stack[0, free_count), taken from the top.  Its first never_taken entries are
 * implicit, never written: entry i stands for block blocks - 1 - i, so the blocks nobody has
 * taken yet come out in ascending order, as from a stack filled at init, without init
 * writing 4 bytes per block (64 KiB for a 256 MiB pool) that may never be read. */
typedef struct pl_blocks {
    uint8_t *bytes;                        /* blocks * PL_BLOCK_BYTES */
    uint32_t *free_stack;                  /* free block numbers, written from never_taken on */
    uint32_t blocks, free_count;
    uint32_t never_taken;                  /* implicit entries at the stack's bottom */
    uint32_t used_peak;                    /* most blocks ever taken at once */
} pl_blocks;

static inline void pl_blocks_init(pl_blocks *b) {
    b->free_count = b->never_taken = b->blocks;
}

static inline uint32_t pl_blocks_take(pl_blocks *b) {
    assert(b->free_count > 0 && b->never_taken <= b->free_count);
    uint32_t block = b->free_count > b->never_taken ? b->free_stack[b->free_count - 1]  /* given back */
                                                    : b->blocks - b->never_taken--;     /* never taken */
    b->free_count--;
    if (b->blocks - b->free_count > b->used_peak) b->used_peak = b->blocks - b->free_count;
    assert(block < b->blocks);
    return block;
}

static inline void pl_blocks_give(pl_blocks *b, uint32_t block) {
    assert(block < b->blocks && b->free_count < b->blocks && b->never_taken <= b->free_count);
    b->free_stack[b->free_count++] = block;
}

static inline uint8_t *pl_block_bytes(const pl_blocks *b, uint32_t block) {
    return b->bytes + (size_t)block * PL_BLOCK_BYTES;
}

/* An open-addressing table (map.c): keys[i] == 0 marks an empty slot; an entry sits at most
 * probes_most - 1 slots past its home, so a lookup reads at most probes_most slots. */
#define PL_MAP_NONE UINT32_MAX
typedef struct pl_map {
    uint64_t *keys;
    uint32_t *values;
    uint32_t mask, probes_most;
} pl_map;

/* The slot a key's probes start at (Fibonacci hashing: the key's bits spread over the top). */
static inline uint32_t pl_map_home(const pl_map *m, uint64_t key) {
    return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & m->mask;
}

/* The first value under key, or PL_MAP_NONE; inline: the receive pool asks for every block
 * it reads or writes. */
static inline uint32_t pl_map_get(const pl_map *m, uint64_t key) {
    assert(key != 0);
    uint32_t h = pl_map_home(m, key);
    for (uint32_t k = 0; k < m->probes_most; k++) {
        uint32_t i = (h + k) & m->mask;
        if (m->keys[i] == key) return m->values[i];
        if (m->keys[i] == 0) break;
    }
    return PL_MAP_NONE;
}

typedef struct pl_pool {
    pl_blocks store;
    pl_map map;                            /* (run slot, block number) -> block, see pool.c */
    uint32_t runs_holding;                 /* runs that hold at least one block */
    uint32_t peers_holding;                /* peers with a run that holds one */
    uint64_t holding_changes;              /* changes of the two counts above, from 1 (pl_run_window) */
    uint32_t big_blocks;                   /* kept outside the shares for one largest record */
    int ticket;                            /* run slot holding the ticket, -1: none */
    uint32_t promised;                     /* free blocks kept for the ticket's record */
    uint32_t *queue;                       /* run slots waiting for the ticket, FIFO */
    uint32_t queue_head, queue_count, queue_most;
    uint64_t queue_head_no;                /* the head entry's number (entries count up) */
    uint8_t *stage;                        /* PL_STAGE_BYTES hand-over ring */
    uint64_t stage_head, stage_tail, stage_popped_end;
} pl_pool;

typedef struct pl_lost_sent {          /* the LOST allowance of one (peer, run, address) */
    uint8_t used;
    int peer;
    uint64_t run;
    pure_link_addr to;
    uint64_t seen_ns;                      /* its latest trigger: the table drops the oldest */
    uint64_t due_ns;                       /* its allowance (a GCRA: answer.c) */
    uint64_t window_ns;                    /* its triggers: counted per PL_LOST_GAP_NS from here */
    uint32_t count, count_before;          /* in this window, and in the one before */
} pl_lost_sent;

typedef struct pl_lost_addr {          /* the LOST allowance of one address */
    uint8_t used;
    pure_link_addr to;
    uint64_t seen_ns, due_ns;
} pl_lost_addr;

/* ---- The endpoint ---- */
struct pure_link {
    uint32_t magic;
    pure_link_config config;
    const pure_link_crypto *crypto;
    uint8_t static_secret[32], static_public[32];
    uint32_t static_key_id;                /* FNV-1a of static_public, for every sender header */
    uint8_t rng_key[32];
    uint64_t rng_counter;
    uint64_t now_ns;
    int fatal;
    uint8_t fatal_reported;

    pl_sender *senders;
    pl_peer *peers;
    pl_run *runs;
    uint32_t sender_cursor;                /* round-robin for pull */
    uint32_t senders_used, runs_used;      /* slots [0, used) have ever been taken: loops over
                                              live objects stop there, not at the config's most */
    uint32_t peers_used;                   /* peers [0, peers_used) wired; peers and run slots
                                              beyond their used count are not cleared at init */
    uint64_t map_secret[2];                /* keys the indexes' hash (map.c): from the seed */
    pl_map peer_index;                     /* key id -> peer (peer.c) */
    pl_map run_index;                      /* (peer, run) -> run slot (peer.c) */
    uint32_t peer_last, run_last;          /* the last lookups' peer and slot + 1; 0: none (a
                                              burst from one run skips both hashes) */
    uint32_t *run_heap;                    /* run slots with a deadline, a min-heap on it */
    uint32_t run_heap_count;
    uint32_t list_head[PL_RUN_LISTS], list_tail[PL_RUN_LISTS];  /* the run lists: slot + 1, 0:
                                              empty; pull and event_next read them, no scan */
    uint32_t heard_head, heard_tail;       /* the runs in use, the longest quiet first (slot + 1):
                                              a new run finds an idle or reusable slot there */
    uint32_t peers_running;                /* peers holding at least one run slot */
    uint32_t peers_unwired;                /* holes in peers [0, peers_used) an unwiring left */

    pure_link_event events[PL_EVENTS_MOST];  /* written when pushed, not cleared at init (event.c) */
    uint64_t event_stage_end[PL_EVENTS_MOST]; /* a RECORD copied to the hand-over ring: its end */
    uint8_t event_keys[PL_EVENTS_MOST][PL_EVENT_KEYS_BYTES];  /* an EPOCH slot's keys, which its
                                              event points at; written by an EPOCH push only */
    uint32_t ev_head, ev_count;
    uint32_t event_keys_out;               /* slot + 1 whose secret the host holds until its
                                              next pure_link_event_next wipes it; 0: none */
    pl_pool pool;
    pl_key_cache keys;
    pl_blocks hole_tables;                 /* numbers of free hole tables (holes.c) */
    pl_range *hole_store;                  /* hole_tables.blocks * PL_RANGES_MOST */
    pl_blocks send_store;                  /* the send pool: every sender's queue */
    uint32_t senders_open;
    uint8_t deliver_blocked;               /* the event queue filled during delivery */

    pl_memo_write memo_writes[PL_MEMO_WRITES_MOST];
    pl_memo_mirror *memo_mirror;           /* PURE_LINK_MEMO_SIDE_SLOTS + peers_most */
    uint8_t memo_generation[8];
    uint8_t memo_header_due;
    uint32_t memo_unemitted;               /* writes not yet handed out in an event */

    pl_lost_notice lost_queue[PL_LOST_QUEUE_MOST];
    uint32_t lost_count;
    pl_lost_sent lost_sent[PL_LOST_RUNS_MOST];
    pl_lost_addr lost_addrs[PL_LOST_ADDRS_MOST];
    uint64_t lost_bytes_due_ns;            /* the endpoint's LOST byte budget (a GCRA) */

    pure_link_stats stats;                 /* endpoint totals (receiver side and drops) */
    uint32_t last_drop;                    /* PURE_LINK_DROP_* of the last datagram received */
    uint64_t memo_token_next;
};

#define PL_MAGIC 0x706c6e6bu

/* pure_link_init clears the endpoint around its event slots: they lie together before ev_head. */
_Static_assert(offsetof(pure_link, events) < offsetof(pure_link, event_stage_end) &&
               offsetof(pure_link, event_stage_end) < offsetof(pure_link, event_keys) &&
               offsetof(pure_link, event_keys) + sizeof(((pure_link *)0)->event_keys) <= offsetof(pure_link, ev_head),
               "the event slots lie together, before ev_head");

#define PL_SENDER_KEYS(s) (&(s)->keys[(s)->key_cur])

/* Does the sender's run start no new record (run.c)? */
static inline int pl_sender_draining(const pl_sender *s) { return s->pn_next >= PL_RUN_PACKETS_DRAIN; }

/* endpoint.c */
void pl_config_resolve(const pure_link_config *in, pure_link_config *c);
void pl_fatal(pure_link *pl, int code);

/* The services below both halves: random.c, event.c, epoch_keys.c, deadline.c. */
void pl_random(pure_link *pl, void *out, size_t len);
pure_link_event *pl_event_push(pure_link *pl, pure_link_event_kind kind);
pure_link_event *pl_event_push_epoch(pure_link *pl, const uint8_t secret[32], const uint8_t sender_public[32],
                                     const uint8_t receiver_public[32]);
static inline uint32_t pl_events_room(const pure_link *pl) { return PL_EVENTS_MOST - pl->ev_count; }
/* Takes the RECORD events of stream handle `stream` still queued out of the queue (their
 * bytes go back with a refused run's memory); returns how many. */
uint32_t pl_events_drop_records(pure_link *pl, int stream);
void pl_aead_key(const pure_link *pl, void *ctx, uint8_t iv[12], const pl_packet_key *k);
void pl_epoch_keys_set(pure_link *pl, pl_epoch_keys *k, uint32_t epoch, const uint8_t secret[32],
                       const uint8_t sender_pub[32], const uint8_t receiver_pub[32], uint64_t run,
                       uint64_t reply_run, int reply_known);
void pl_random_aside(const pure_link *pl, uint8_t domain, void *out, size_t len);
uint64_t pl_deadline(const pure_link *pl);
uint64_t pl_sender_deadline(const pl_sender *s);
uint64_t pl_run_deadline(const pl_run *r);
void pl_run_timer_set(pure_link *pl, pl_run *r, pl_run_timer t, uint64_t at_ns);
pl_run *pl_run_due(pure_link *pl, uint64_t now_ns);
void pl_run_ready_append(pure_link *pl, pl_run *r);
pl_run *pl_run_ready_take(pure_link *pl);
void pl_run_hold(pure_link *pl, pl_run *r);
uint32_t pl_runs_held_take(pure_link *pl);
void pl_run_free(pure_link *pl, pl_run *r);
pl_run *pl_run_free_take(pure_link *pl);
void pl_run_heard_move(pure_link *pl, pl_run *r);
void pl_run_unheard(pure_link *pl, pl_run *r);

/* Run r was heard now: it goes to the tail of the heard list (deadline.c).  Inline: once
 * per packet, and a burst from one run finds it at the tail already. */
static inline void pl_run_heard(pure_link *pl, pl_run *r, uint64_t now_ns) {
    r->last_heard_ns = now_ns;
    if (pl->heard_tail != (uint32_t)r->handle + 1) pl_run_heard_move(pl, r);
}

/* Run r may have a reply due: on the ready list unless it is there (deadline.c).  Inline:
 * after every packet and every stored mark, and a busy run is on the list already. */
static inline void pl_run_ready(pure_link *pl, pl_run *r) {
    if (!r->listed[PL_LIST_READY]) pl_run_ready_append(pl, r);
}

/* map.c */
uint64_t pl_siphash(const uint64_t key[2], const uint64_t *words, size_t count, unsigned c_rounds,
                    unsigned d_rounds);
uint64_t pl_map_key_of(const pure_link *pl, const uint64_t *words, size_t count);
size_t pl_map_slots(uint32_t entries_most, uint32_t slots_per_entry);
void pl_map_init(pl_map *m, uint64_t *keys, uint32_t *values, size_t slots, uint32_t probes_most);
uint32_t pl_map_next(const pl_map *m, uint64_t key, uint32_t *at);
int pl_map_room(const pl_map *m, uint64_t key);
void pl_map_put(pl_map *m, uint64_t key, uint32_t value);
void pl_map_del(pl_map *m, uint64_t key, uint32_t value);

/* Byte rings indexed by a 64-bit stream offset (the sender's queue, a run's reassembly
 * buffer): a stretch may wrap around the end of the ring once. */
static inline void pl_ring_write(uint8_t *ring, size_t size, uint64_t off, const uint8_t *src, size_t n) {
    assert(n <= size);
    size_t at = (size_t)(off % size), first = size - at < n ? size - at : n;
    memcpy(ring + at, src, first);
    memcpy(ring, src + first, n - first);
}

static inline void pl_ring_read(const uint8_t *ring, size_t size, uint64_t off, uint8_t *dst, size_t n) {
    assert(n <= size);
    size_t at = (size_t)(off % size), first = size - at < n ? size - at : n;
    memcpy(dst, ring + at, first);
    memcpy(dst + first, ring, n - first);
}

static inline int pl_addr_equal(const pure_link_addr *a, const pure_link_addr *b) {
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* C11 has no strnlen: length of s, at most `most`. */
static inline size_t pl_strnlen(const char *s, size_t most) {
    size_t n = 0;
    while (n < most && s[n] != 0) n++;
    return n;
}

/* ranges.c */
void pl_rangeset_init(pl_rangeset *s, pl_range *store, uint32_t most);
int pl_rangeset_add_scan(pl_rangeset *s, uint64_t lo, uint64_t hi);
/* Adds [lo, hi), merging neighbours.  Returns -1 (and changes nothing) when the range
 * would need a new entry and the set is full.  Inline for a range at or past the start of
 * the last one (the ranges before it end below it): the usual case of bytes and packet
 * numbers that come in order, found without a scan (ranges.c scans for the others). */
static inline int pl_rangeset_add(pl_rangeset *s, uint64_t lo, uint64_t hi) {
    assert(lo <= hi);
    if (lo == hi) return 0;
    if (s->count == 0 || lo < s->r[s->count - 1].lo) return pl_rangeset_add_scan(s, lo, hi);
    pl_range *last = &s->r[s->count - 1];
    if (lo <= last->hi) {
        if (hi > last->hi) last->hi = hi;
        return 0;
    }
    if (s->count == s->most) return -1;
    s->r[s->count].lo = lo, s->r[s->count].hi = hi, s->count++;
    return 0;
}
void pl_rangeset_add_cover(pl_rangeset *s, uint64_t lo, uint64_t hi); /* never forgets */
void pl_rangeset_add_pn_full(pl_rangeset *s, uint64_t pn);
static inline void pl_rangeset_add_pn(pl_rangeset *s, uint64_t pn) {  /* drops the oldest when full */
    if (pl_rangeset_add(s, pn, pn + 1) != 0) pl_rangeset_add_pn_full(s, pn);
}
void pl_rangeset_remove_below(pl_rangeset *s, uint64_t lo);
void pl_rangeset_remove(pl_rangeset *s, uint64_t lo, uint64_t hi);
int pl_rangeset_contains(const pl_rangeset *s, uint64_t v);
int pl_replay_check(const uint64_t *window, uint64_t largest, uint64_t pn);
void pl_replay_mark(uint64_t *window, uint64_t *largest, uint64_t pn);

/* epoch.c */
void pl_sender_keys_wipe(pure_link *pl, pl_sender *s);
void pl_sender_set_epoch(pure_link *pl, pl_sender *s, uint32_t epoch, const uint8_t secret[32]);
void pl_sender_offer_new(pure_link *pl, pl_sender *s, uint32_t epoch);
void pl_sender_epoch_due(pure_link *pl, pl_sender *s, uint64_t now_ns);
void pl_sender_on_accept(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns);
void pl_sender_on_lost(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns);

/* run.c */
pl_sender *pl_sender_by_run(pure_link *pl, uint64_t run);
void pl_sender_clear(pure_link *pl, pl_sender *s);
int pl_sender_run_start(pure_link *pl, pl_sender *s, uint64_t now_ns);
void pl_sender_run_move(pure_link *pl, pl_sender *s, uint64_t now_ns);

/* queue.c */
int pl_queue_grow(pure_link *pl, pl_sender *s, uint64_t end);
void pl_queue_put(const pure_link *pl, pl_sender *s, uint64_t off, const uint8_t *p, size_t len);
void pl_queue_put_record(const pure_link *pl, pl_sender *s, uint64_t off, size_t prefix_len, const uint8_t *p,
                         size_t len);
void pl_queue_get(const pure_link *pl, const pl_sender *s, uint64_t off, uint8_t *out, size_t len);
void pl_queue_stored(pure_link *pl, pl_sender *s);
uint64_t pl_sender_credit_off(const pl_sender *s);
uint64_t pl_sender_record_at(const pl_sender *s, uint64_t off);
void pl_sender_resend_heard(pl_sender *s, uint64_t hi);

/* notify.c */
void pl_sender_check_closed(pure_link *pl, pl_sender *s);
void pl_sender_emit(pure_link *pl, pl_sender *s);

/* loss.c */
void pl_sender_detect_losses(pure_link *pl, pl_sender *s, uint64_t now_ns);
void pl_sender_requeue_oldest(pl_sender *s);
void pl_sender_free_slot(pl_sender *s, uint64_t now_ns);
void pl_sender_flight_lost(pl_sender *s, uint64_t now_ns, int congestion);
void pl_sender_arm_loss_timer(pl_sender *s, uint64_t now_ns);

/* A sender's pacing rate: what its congestion controller asks for at its RTT. */
static inline uint64_t pl_sender_pacing_rate(const pl_sender *s) { return pl_cc_pacing_rate(&s->cc, &s->rtt); }

/* pmtu.c */
void pl_pmtu_start(pl_pmtu *m, uint64_t raise_interval_ns);
void pl_pmtu_forget_probe(pl_pmtu *m);
uint32_t pl_pmtu_probe_due(pl_pmtu *m, uint64_t now_ns);
void pl_pmtu_probe_sent(pl_sender *s, uint64_t pn);
void pl_pmtu_on_larger(pl_sender *s, const pl_sent *e, uint64_t now_ns);
void pl_pmtu_on_lost(pl_sender *s, const pl_sent *e, uint64_t now_ns);
void pl_pmtu_black_hole(pl_sender *s, uint64_t now_ns);
void pl_pmtu_hint(pl_sender *s, uint32_t kind, uint32_t bytes, uint64_t now_ns);

/* Does the probe due carry record bytes?  The first of a search, at the largest size, which
 * most paths carry; the others, sent once a size failed or below one that did, are likely
 * lost and stay PING and PADDING alone (spec/protocol.md §5.1). */
static inline int pl_pmtu_probe_carries(const pl_pmtu *m) {
    return m->probe_bytes == PL_DATAGRAM_MOST && m->probe_losses == 0;
}

/* Is a size probe perhaps due (pl_pmtu_probe_due says)?  Inline: asked before every packet,
 * and after a search almost always "no", in one comparison. */
static inline int pl_pmtu_searching(const pl_pmtu *m, uint64_t now_ns) {
    return now_ns >= m->probe_at_ns;
}

/* A packet was acknowledged (inline: once per packet).  One above the base clears the black
 * hole count; one larger than any acknowledged on the path as it is now raises the size. */
static inline void pl_pmtu_on_acked(pl_sender *s, const pl_sent *e, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    if (e->bytes == m->ack_quiet_bytes) return;  /* the one comparison of almost every packet */
    if (e->bytes > PL_DATAGRAM_BASE) {
        m->ack_big = 1;
        m->big_losses = 0;
    } else {
        m->ack_small = 1;
    }
    if (e->bytes > m->acked && e->pn >= m->path_pn) pl_pmtu_on_larger(s, e, now_ns);
    else if (e->bytes <= m->acked) m->ack_quiet_bytes = e->bytes;
}

/* After an ACK frame's packets and the losses it showed (inline: once per ACK): a black hole
 * is packets above the base lost and, after them, only smaller ones acknowledged. */
static inline void pl_pmtu_ack_done(pl_sender *s, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    int hole = m->ack_small && !m->ack_big && m->big_losses >= PL_PMTU_BLACK_HOLE_LOSSES &&
               m->bytes > PL_DATAGRAM_BASE;
    m->ack_small = m->ack_big = 0;
    m->ack_quiet_bytes = 0;
    if (hole) pl_pmtu_black_hole(s, now_ns);
}

/* send.c */
int pl_sender_pull(pure_link *pl, pl_sender *s, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns);
void pl_sender_tick(pure_link *pl, pl_sender *s, uint64_t now_ns);

/* reply.c */
int pl_sender_on_reply(pure_link *pl, pl_sender *s, const pl_header *h, size_t hl, const uint8_t *data,
                       size_t len, uint64_t now_ns);
void pl_sender_release(pure_link *pl, pl_sender *s);

/* receiver.c */
int pl_receiver_on_packet(pure_link *pl, const pure_link_addr *from, const pl_header *h, size_t hl,
                          const uint8_t *data, size_t len, uint64_t now_ns);
void pl_run_tick(pure_link *pl, pl_run *r, uint64_t now_ns);

/* peer.c */
int pl_peer_allows(const pl_peer *p, const char *source);
pl_peer *pl_peer_find(pure_link *pl, uint32_t key_id);
int pl_peer_index_add(pure_link *pl, pl_peer *p);
void pl_peer_index_del(pure_link *pl, pl_peer *p);
void pl_run_clear(pure_link *pl, pl_run *r);
pl_run *pl_run_find(const pure_link *pl, int peer, uint64_t run);
pl_run *pl_run_find_last(pure_link *pl, int peer, uint64_t run);
int pl_run_index_room(const pure_link *pl, int peer, uint64_t run);
const uint8_t *pl_peer_e0(pure_link *pl, pl_peer *p);
pl_run *pl_run_fresh(pure_link *pl);
void pl_run_reset(pure_link *pl, pl_run *r, int peer, uint64_t run, const pure_link_addr *from, uint64_t now_ns);

/* stream.c */
void pl_run_on_packet(pure_link *pl, pl_run *r, const pure_link_addr *from, const pl_frame *frames, int count,
                      size_t datagram_len, uint64_t pn, uint32_t epoch, uint64_t now_ns);
void pl_receiver_deliver(pure_link *pl, pl_run *r);

/* answer.c */
void pl_run_emit(pure_link *pl, pl_run *r);
int pl_run_pull(pure_link *pl, pl_run *r, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns);
void pl_notice_lost(pure_link *pl, pl_peer *p, const pl_header *h, const uint8_t *data, size_t len,
                    const pure_link_addr *from, uint64_t now_ns);
int pl_lost_pull(pure_link *pl, uint8_t *buf, pure_link_addr *to);

/* pool.c */
void pl_pool_init(pl_pool *p, const pure_link_config *c);
uint64_t pl_run_window_of(const pure_link *pl, pl_run *r);
/* Bytes from its stored mark that run r may hold (pool.c), asked at every packet and
 * delivery: while no run holds or waits for the ticket, r's share changes only when a run
 * starts or stops holding blocks, so it is kept beside the run until the pool counts such
 * a change (holding_changes), and this is inline. */
static inline uint64_t pl_run_window(const pure_link *pl, pl_run *r) {
    const pl_pool *p = &pl->pool;
    if (r->share_at == p->holding_changes && p->ticket < 0 && p->queue_count == 0) return r->share;
    return pl_run_window_of(pl, r);
}
uint64_t pl_run_pool_free(const pure_link *pl, const pl_run *r);
uint64_t pl_run_credit(const pure_link *pl, const pl_run *r);
void pl_run_ticket_ask(pure_link *pl, pl_run *r, uint64_t end);
void pl_run_ticket_done(pure_link *pl, pl_run *r);
int pl_run_mem_write(pure_link *pl, pl_run *r, uint64_t off, const uint8_t *src, size_t n);
int pl_run_mem_write_lower(pure_link *pl, pl_run *r, uint64_t off, const uint8_t *src, size_t n);
/* Where off lies in its block; *n_out: how many of the n bytes from off the block holds. */
static inline size_t pl_block_piece(uint64_t off, size_t n, size_t *n_out) {
    size_t at = (size_t)(off % PL_BLOCK_BYTES);
    *n_out = PL_BLOCK_BYTES - at < n ? PL_BLOCK_BYTES - at : n;
    return at;
}
const uint8_t *pl_run_mem_at_map(const pure_link *pl, const pl_run *r, uint64_t off, size_t n, size_t *n_out);
/* The bytes at off, contiguous up to the end of their block (*n_out of them, at most n).
 * Inline when they lie in the block the run wrote last (its hint, pool.c), as the records
 * handed over mostly do; pool.c looks the others up. */
static inline const uint8_t *pl_run_mem_at(const pure_link *pl, const pl_run *r, uint64_t off, size_t n,
                                           size_t *n_out) {
    if (r->mem_hint_at != off / PL_BLOCK_BYTES + 1) return pl_run_mem_at_map(pl, r, off, n, n_out);
    return pl_block_bytes(&pl->pool.store, r->mem_hint_block) + pl_block_piece(off, n, n_out);
}
void pl_run_mem_read(const pure_link *pl, const pl_run *r, uint64_t off, uint8_t *dst, size_t n);
void pl_run_mem_stored(pure_link *pl, pl_run *r, uint64_t from);
void pl_run_mem_release(pure_link *pl, pl_run *r);
void pl_run_mem_trim_for_head(pure_link *pl, pl_run *r);
/* A run gives back the blocks beyond its share while a long record waits for them (pool.c):
 * nothing to do, and no call, while no run waits for the ticket. */
static inline void pl_run_mem_trim(pure_link *pl, pl_run *r) {
    if (pl->pool.queue_count > 0) pl_run_mem_trim_for_head(pl, r);
}
void pl_run_mem_broken(pure_link *pl, pl_run *r);
void pl_run_mem_stopped(pure_link *pl, pl_run *r, uint64_t now_ns);
const uint8_t *pl_stage_record(pure_link *pl, const pl_run *r, uint64_t start, size_t len, uint64_t *end_out);
/* The host has taken every event before the one popped last: their copies go (at every
 * entry point, so inline). */
static inline void pl_stage_release(pure_link *pl) {
    pl_pool *p = &pl->pool;
    if (p->stage_popped_end > p->stage_head) p->stage_head = p->stage_popped_end;
}

/* keycache.c */
uint32_t pl_key_cache_entries(const pure_link_config *c);
void pl_keys_derived(pure_link *pl, pl_epoch_keys *k);
const pl_key_ctx *pl_keys_ctx_fill(pure_link *pl, pl_epoch_keys *k);
/* Entry e of the cache holds the contexts of k. */
static inline int pl_keys_holds(const pl_key_cache *c, uint32_t e, const pl_epoch_keys *k) {
    return e < c->entries && k->build != 0 && c->build[e] == k->build;
}
/* The contexts of k.  Inline for the case of every packet but the first after a derivation
 * or after another build took the entry: its entry still holds them. */
static inline const pl_key_ctx *pl_keys_ctx(pure_link *pl, pl_epoch_keys *k) {
    pl_key_cache *c = &pl->keys;
    assert(k->valid && k->build != 0);
    uint32_t e = k->pin != 0 ? k->pin - 1 : k->entry;
    if (!pl_keys_holds(c, e, k)) return pl_keys_ctx_fill(pl, k);
    c->used[e] = 1;
    return &c->ctx[e];
}
void pl_keys_wipe(pure_link *pl, pl_epoch_keys *k);

/* holes.c */
uint32_t pl_hole_tables(const pure_link_config *c);
void pl_run_have_clear(pure_link *pl, pl_run *r);
int pl_run_have_add(pure_link *pl, pl_run *r, uint64_t lo, uint64_t hi);
void pl_run_have_fit(pure_link *pl, pl_run *r);

/* memo.c */
size_t pl_memo_slots(const pure_link_config *c);
size_t pl_memo_bytes(const pure_link_config *c);
int pl_memo_room(const pure_link *pl);
void pl_memo_on_epoch(pure_link *pl, pl_run *r);
void pl_memo_epoch_proven(pure_link *pl, pl_run *r, uint32_t epoch, uint64_t now_ns);
void pl_memo_emit(pure_link *pl);

#endif
