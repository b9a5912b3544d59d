/* consumer.c: a program built against the installed library alone, through pkg-config.
 *
 * Shows that the installed header, library and pure-link.pc are all a program needs:
 *     cc consumer.c $(pkg-config --cflags --libs pure-link)
 * (tests/sh/test_install.sh builds it so, shared and static, from a staged `make install`.)
 * Two endpoints in this one process hand each other their datagrams directly, with the
 * default X25519 and AES-128-GCM; time is virtual and moves on to the next deadline only
 * when neither has anything to send.  RECORDS records (default 1000) go from one to the
 * other, every byte checked at the receiver.
 *
 *   consumer [RECORDS]     prints "consumer: N records stored and checked" and exits 0
 */
#include "example_host.h"

#define VIRTUAL_NS_MOST 100000000000u /* gives up after 100 s of virtual time */

/* Answers `from`'s events and gives every datagram it has to `to`; returns how much moved. */
static int hand_over(pure_link *from, ex_receiver *rx, ex_sender *tx, const pure_link_addr *from_addr, pure_link *to,
                     uint64_t now_ns) {
    uint8_t datagram[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr dst;
    int len, moved = ex_answer_events(from, rx, tx, now_ns);
    while ((len = pure_link_pull(from, datagram, sizeof datagram, &dst, now_ns)) > 0) {
        pure_link_receive(to, from_addr, datagram, (size_t)len, now_ns);
        moved++;
    }
    return moved;
}

int main(int argc, char **argv) {
    int64_t count = argc > 1 ? atoll(argv[1]) : 1000;
    /* Fixed keys and seeds keep the run the same every time; a real program draws them
     * from getrandom() and keeps its secret in a file. */
    uint8_t rx_secret[32], tx_secret[32], seed[32] = {1};
    for (int i = 0; i < 32; i++) rx_secret[i] = (uint8_t)(i + 1), tx_secret[i] = (uint8_t)(i + 101);
    const pure_link_addr rx_addr = {.len = 1, .bytes = {1}}, tx_addr = {.len = 1, .bytes = {2}};

    pure_link_config rx_cfg, tx_cfg;
    ex_config(&rx_cfg, rx_secret, 1);
    ex_config(&tx_cfg, tx_secret, 0);
    uint64_t now = 0;
    void *rx_memory, *tx_memory;
    pure_link *receiver = ex_endpoint_new(&rx_cfg, seed, now, &rx_memory);
    pure_link *sender = ex_endpoint_new(&tx_cfg, seed, now, &tx_memory);
    static ex_receiver rx;
    ex_sender tx = {.pl = sender, .count = count};
    if (count < 1 || !receiver || !sender || ex_receiver_init(&rx, receiver, &rx_cfg) != 0) return 1;

    uint8_t rx_public[32], tx_public[32];
    pure_link_public_key(receiver, rx_public);
    pure_link_public_key(sender, tx_public);
    if (pure_link_wire_peer(receiver, tx_public, EX_SOURCE, now) < 0 || ex_sender_start(&tx, rx_public, &rx_addr, now))
        return 1;

    for (;;) {
        while (hand_over(sender, NULL, &tx, &tx_addr, receiver, now) + hand_over(receiver, &rx, NULL, &rx_addr, sender, now))
            ;
        if (tx.closed || tx.failed || now >= VIRTUAL_NS_MOST) break;
        uint64_t s_ns = pure_link_deadline(sender), r_ns = pure_link_deadline(receiver);
        uint64_t next_ns = s_ns < r_ns ? s_ns : r_ns;
        if (next_ns == UINT64_MAX) break; /* nothing will ever happen again */
        if (next_ns > now) now = next_ns;
        if (s_ns <= now) pure_link_tick(sender, now);
        if (r_ns <= now) pure_link_tick(receiver, now);
    }
    int ok = tx.closed && tx.stored == count && rx.records_stored == count && rx.records_bad == 0;
    printf("consumer: %lld records stored and checked, %lld bad%s\n", (long long)rx.records_stored,
           (long long)rx.records_bad, ok ? "" : ": FAILED");
    free(rx_memory);
    free(tx_memory);
    return ok ? 0 : 1;
}
