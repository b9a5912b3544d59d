/* sim_tcp.h: a bulk TCP flow in the simulator, to measure how pure-link shares a
 * bottleneck with the traffic it will meet (BRIEF §6: share next to one TCP CUBIC flow).
 *
 * A flow runs between two simulated nodes, beside their pure-link endpoints, and puts its
 * segments on the very same path objects, so it competes in the same drop-tail queue.  It
 * is a model of Linux's TCP, not a TCP stack: no handshake, no header bytes, no receive
 * window updates; sequence numbers count whole segments.  What it models:
 *   - segments of SIM_TCP_MSS_BYTES payload, SIM_TCP_WIRE_BYTES on the wire, ACKs of
 *     SIM_TCP_ACK_WIRE_BYTES (IPv4 + TCP + timestamps);
 *   - the receiver: cumulative ACKs with up to 3 SACK blocks (the block of the segment that
 *     triggered the ACK first, then the most recently changed ones, RFC 2018), delayed ACKs
 *     (every 2nd segment, else after 40 ms), immediate ACKs for out-of-order data and for
 *     data that fills a hole, quick ACKs for the first 16 segments;
 *   - the sender: a SACK scoreboard; loss detection by RACK (RFC 8985: a segment is lost
 *     when one sent after it was delivered and its RTT plus a reordering window has
 *     passed; the window is 0 until reordering is seen, then min_rtt / 4), which also
 *     covers the three-duplicate-ACK rule; Proportional Rate Reduction in recovery
 *     (RFC 6937); the retransmission timeout of RFC 6298 (min 200 ms, backoff doubling),
 *     after which every unSACKed segment is retransmitted from a window of one;
 *   - congestion control in fixed point (sim_tcp_cc.c): slow start from an initial window
 *     of 10 with Linux's HyStart delay test, then CUBIC (RFC 9438) or NewReno (RFC 5681);
 *   - no pacing by default (segments leave in bursts on the ACK clock, as Linux without the
 *     fq qdisc); `pacing: yes` spaces them at 2x (slow start) or 1.2x cwnd / srtt.
 * Not modelled: TLP, DSACK and undo of spurious recoveries, F-RTO, ECN, TSO, receive
 * window limits other than window_most, and crashes (a node's crash leaves its TCP flows
 * alone).  Everything is integer arithmetic, so a run is a function of (scenario, seed). */
#ifndef SIM_TCP_H
#define SIM_TCP_H

#include <stddef.h>
#include <stdint.h>

#define SIM_TCP_MSS_BYTES 1448u          /* payload of a full segment */
#define SIM_TCP_HEADER_BYTES 52u         /* IPv4 20 + TCP 20 + timestamps option 12 */
#define SIM_TCP_WIRE_BYTES (SIM_TCP_MSS_BYTES + SIM_TCP_HEADER_BYTES)
#define SIM_TCP_ACK_WIRE_BYTES SIM_TCP_HEADER_BYTES
#define SIM_TCP_SACK_BLOCKS_MOST 3u      /* room in the options beside timestamps */
#define SIM_TCP_INITIAL_WINDOW 10u       /* segments (RFC 6928, Linux) */
#define SIM_TCP_WINDOW_MOST_DEFAULT (4u << 20) /* bytes in flight at most (a receive window) */
#define SIM_TCP_RTO_MIN_NS 200000000ull  /* Linux's TCP_RTO_MIN */
#define SIM_TCP_RTO_INITIAL_NS 1000000000ull /* RFC 6298 (2.1) */
#define SIM_TCP_RTO_MOST_NS 120000000000ull  /* Linux's TCP_RTO_MAX */
#define SIM_TCP_DELACK_NS 40000000ull    /* Linux's TCP_DELACK_MIN */
#define SIM_TCP_DELACK_SEGMENTS 2u       /* ACK at least every second full segment */
#define SIM_TCP_QUICKACKS 16u            /* Linux's TCP_MAX_QUICKACKS at the start */
#define SIM_TCP_FLOWS_MOST 16u           /* TCP flows in one scenario */

_Static_assert(SIM_TCP_WIRE_BYTES == 1500u, "a full segment is a 1,500 B IP packet");

/* Windows are kept in 1/65536 of a segment, so growth of a fraction of a segment per ACK
 * is not lost to rounding. */
#define SIM_TCP_FP_SHIFT 16u
#define SIM_TCP_FP (1ull << SIM_TCP_FP_SHIFT)

typedef enum sim_tcp_algo { SIM_TCP_CUBIC = 1, SIM_TCP_NEWRENO = 2 } sim_tcp_algo;

/* ---- sim_tcp_cc.c: slow start, HyStart, CUBIC and NewReno, in fixed point ---- */

/* RFC 9438: beta_cubic = 0.7, C = 0.4 segments / s^3; alpha_cubic = 3(1-beta)/(1+beta). */
#define SIM_CUBIC_BETA_NUM 7u
#define SIM_CUBIC_BETA_DEN 10u
#define SIM_CUBIC_C_NUM 2u
#define SIM_CUBIC_C_DEN 5u
#define SIM_CUBIC_ALPHA_NUM 9u
#define SIM_CUBIC_ALPHA_DEN 17u
_Static_assert(SIM_CUBIC_ALPHA_NUM * (SIM_CUBIC_BETA_DEN + SIM_CUBIC_BETA_NUM) ==
                   SIM_CUBIC_ALPHA_DEN * 3u * (SIM_CUBIC_BETA_DEN - SIM_CUBIC_BETA_NUM),
               "alpha_cubic = 3 (1 - beta) / (1 + beta)");
/* HyStart (Linux's two tests), from a window of 16 segments on; a round is one window of
 * data.  Ack train: ACKs of a round arriving at most 2 ms apart for longer than min_rtt / 2
 * (unpaced) or min_rtt (paced) show the window has reached the path's BDP.  Delay: the
 * least RTT of a round's first 8 samples above min_rtt + clamp(min_rtt / 8, 4 ms, 16 ms)
 * shows a queue building.  Either ends slow start there. */
#define SIM_HYSTART_ACK_DELTA_NS 2000000ull
#define SIM_HYSTART_WINDOW_LEAST 16u
#define SIM_HYSTART_SAMPLES 8u
#define SIM_HYSTART_DELAY_LEAST_NS 4000000ull
#define SIM_HYSTART_DELAY_MOST_NS 16000000ull

typedef struct sim_tcp_cc {
    sim_tcp_algo algo;
    int hystart;                /* the delay test is on */
    uint64_t cwnd_fp;           /* congestion window (segments, fixed point) */
    uint64_t ssthresh_fp;       /* UINT64_MAX: none yet */
    uint64_t window_most_fp;    /* the window never grows beyond this */
    /* CUBIC */
    uint64_t w_max_fp;          /* window before the last reduction (fast convergence may lower it) */
    uint64_t cwnd_prior_fp;     /* window before the last reduction */
    uint64_t w_est_fp;          /* the Reno-friendly estimate */
    uint64_t k_us;              /* time from the epoch start to W_max */
    uint64_t epoch_start_ns;    /* 0: no epoch (the next ACK in congestion avoidance starts one) */
    uint64_t origin_fp;         /* W_cubic's plateau for this epoch */
    uint64_t acc;               /* growth remainders not yet a fixed-point unit */
    uint64_t est_acc;
    /* HyStart */
    uint64_t round_end_seq;     /* the round ends when this segment is acknowledged */
    uint64_t round_start_ns;    /* when the round began (the ack train's start) */
    uint64_t last_ack_ns;       /* the train's latest ACK */
    uint64_t round_rtt_min_ns;  /* least sample of the round's first samples */
    uint32_t round_samples;
    int hystart_done;           /* slow start ended (by HyStart or a loss); a timeout re-arms it */
    /* Statistics. */
    uint64_t reductions, hystart_exits;
} sim_tcp_cc;

void sim_tcp_cc_init(sim_tcp_cc *cc, sim_tcp_algo algo, uint32_t initial_window, uint64_t window_most_segments,
                     int hystart);
uint64_t sim_tcp_cc_cwnd(const sim_tcp_cc *cc);            /* whole segments, at least 1 */
uint64_t sim_tcp_cc_ssthresh(const sim_tcp_cc *cc);        /* whole segments; UINT64_MAX none */
int sim_tcp_cc_in_slow_start(const sim_tcp_cc *cc);
/* `acked` segments newly delivered (cumulatively or by SACK) outside recovery.  min_rtt_ns
 * is the path's least RTT so far (CUBIC's t + RTT, like Linux). */
void sim_tcp_cc_on_ack(sim_tcp_cc *cc, uint64_t acked, uint64_t now_ns, uint64_t min_rtt_ns);
/* HyStart's view of an ACK with an RTT sample; snd_una and snd_nxt in segments; paced:
 * the sender paces (the ack train is then spread over up to a whole RTT). */
void sim_tcp_cc_on_rtt(sim_tcp_cc *cc, uint64_t now_ns, uint64_t rtt_ns, uint64_t min_rtt_ns, uint64_t snd_una,
                       uint64_t snd_nxt, int paced);
/* A congestion event (entering fast recovery or a timeout): ssthresh and the curve's new
 * origin.  The window itself is then set by the caller (PRR, or 1 after a timeout). */
void sim_tcp_cc_on_congestion(sim_tcp_cc *cc);
/* Sets the window (recovery: PRR's choice; its end: ssthresh). */
void sim_tcp_cc_set_cwnd(sim_tcp_cc *cc, uint64_t segments);
/* A retransmission timeout: a window of one segment, slow start again (HyStart too). */
void sim_tcp_cc_on_timeout(sim_tcp_cc *cc);
/* CUBIC's curve (exposed for tests): K in microseconds for a window w_max_fp reduced to
 * cwnd_fp, and W_cubic(t) in fixed point. */
uint64_t sim_cubic_k_us(uint64_t w_max_fp, uint64_t cwnd_fp);
uint64_t sim_cubic_w_fp(uint64_t origin_fp, uint64_t k_us, uint64_t t_us);

/* ---- sim_tcp.c: the flow ---- */

typedef struct sim_tcp_spec {
    char from_name[32], to_name[32];
    uint32_t from, to;          /* resolved node indices */
    sim_tcp_algo algo;
    uint64_t start_ns;
    uint64_t until_ns;          /* no new data after this; UINT64_MAX: never */
    uint64_t bytes;             /* payload to send; 0: no limit */
    int pacing;
    int hystart;
    uint32_t initial_window;    /* segments */
    uint64_t window_most_bytes; /* bytes in flight at most */
    uint64_t rto_min_ns;
} sim_tcp_spec;

void sim_tcp_spec_default(sim_tcp_spec *spec);

/* One segment or ACK on a path (the event's payload). */
typedef struct sim_tcp_seg {
    struct sim_tcp_seg *next_free;
    uint32_t flow;
    uint8_t is_ack;
    uint8_t sack_count;
    uint64_t seq;               /* data: segment number */
    uint64_t ack;               /* ACK: the next segment expected */
    uint64_t sack[SIM_TCP_SACK_BLOCKS_MOST][2]; /* [start, end) segment numbers */
} sim_tcp_seg;

/* Sender's view of one segment in [snd_una, snd_nxt). */
enum {
    SIM_TCP_SACKED = 1,         /* the receiver has it (SACK) */
    SIM_TCP_LOST = 2,           /* declared lost: to be (or being) retransmitted */
    SIM_TCP_RETRANS = 4,        /* a retransmission is in flight (with LOST) */
    SIM_TCP_EVER_RETRANS = 8    /* retransmitted at least once: no RTT sample, no reordering proof */
};
typedef struct sim_tcp_slot {
    uint64_t sent_ns;           /* its latest transmission */
    uint64_t xmit;              /* that transmission's number in the flow: orders sends at one instant */
    uint32_t flags;
} sim_tcp_slot;

/* An out-of-order block the receiver holds above rcv_nxt. */
typedef struct sim_tcp_block {
    uint64_t start, end;        /* [start, end) */
    uint64_t touched;           /* recency, for the order of SACK blocks */
} sim_tcp_block;

typedef enum sim_tcp_state { SIM_TCP_OPEN = 0, SIM_TCP_RECOVERY = 1, SIM_TCP_LOSS = 2 } sim_tcp_state;

typedef struct sim_tcp {
    uint32_t index;
    const sim_tcp_spec *spec;
    int started;
    uint64_t segments_most;     /* new segments allowed; UINT64_MAX: no limit */
    int writing_over;           /* until passed */
    int done;                   /* every segment written was acknowledged */
    uint64_t done_ns;
    /* Sender. */
    uint64_t snd_una, snd_nxt;  /* segment numbers */
    sim_tcp_slot *slots;        /* ring indexed by seq & (slot_capacity - 1) */
    uint64_t slot_capacity;     /* a power of two */
    uint64_t sacked_out, lost_out, retrans_out;
    uint64_t fack;              /* one past the highest segment SACKed (>= snd_una) */
    uint64_t retx_hint;         /* no LOST, unretransmitted segment below this */
    uint64_t window_most_segments;
    sim_tcp_cc cc;
    sim_tcp_state state;
    uint64_t recovery_point;    /* recovery ends when snd_una reaches it */
    uint64_t prr_delivered, prr_out, recover_fs;
    /* RTT (RFC 6298) and RACK. */
    uint64_t srtt_ns, rttvar_ns, rtt_ns_min, rto_ns;
    uint32_t rto_backoff;
    uint64_t xmit_next;         /* number of the next transmission */
    uint64_t rack_xmit;         /* the latest-sent segment delivered so far: its number ... */
    uint64_t rack_rtt_ns;       /* ... and its RTT */
    int rack_valid, reordering_seen;
    /* Timers: one event stream per side, re-armed lazily (a stale event finds nothing due). */
    uint64_t rto_at_ns, rack_at_ns, pace_at_ns, next_send_ns; /* 0: not armed */
    uint64_t snd_timer_ns, snd_timer_gen;
    int snd_timer_pending;
    /* Receiver. */
    uint64_t rcv_nxt;
    sim_tcp_block *blocks;      /* sorted, disjoint, above rcv_nxt */
    size_t block_count, block_capacity;
    uint64_t touch_clock;
    uint32_t unacked_segments;  /* received since the last ACK */
    uint32_t quickacks;
    uint64_t delack_at_ns;      /* 0: not armed */
    uint64_t rcv_timer_gen;
    /* Counters. */
    uint64_t segments_sent, retransmissions, acks_sent, acks_received;
    uint64_t fast_recoveries, timeouts, dropped, acks_dropped;
    uint64_t share_mark_segments; /* delivered_segments at the share window's start */
} sim_tcp;

struct sim_world;
int sim_tcp_setup(struct sim_world *w, sim_tcp *t, char *err, size_t err_len);
void sim_tcp_free(sim_tcp *t);
void sim_tcp_on_start(struct sim_world *w, sim_tcp *t);
void sim_tcp_on_until(struct sim_world *w, sim_tcp *t);
/* A segment or ACK of this flow arrives at its far end; takes seg. */
void sim_tcp_on_arrive(struct sim_world *w, sim_tcp *t, sim_tcp_seg *seg);
/* A timer event: arg = generation << 1 | side (0 sender, 1 receiver). */
void sim_tcp_on_timer(struct sim_world *w, sim_tcp *t, uint64_t arg);
/* Samples the flow into the trace (tcp:metrics_updated). */
void sim_tcp_sample(struct sim_world *w, const sim_tcp *t);
/* Payload bytes delivered in order to the receiving application. */
uint64_t sim_tcp_delivered_bytes(const sim_tcp *t);
uint64_t sim_tcp_in_flight(const sim_tcp *t);   /* segments (RFC 6675 pipe) */
const char *sim_tcp_algo_name(sim_tcp_algo algo);

#endif
