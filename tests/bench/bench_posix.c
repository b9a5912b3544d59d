/* bench_posix.c: pure-link over the shims on loopback: a sender and a receiver
 * endpoint, each in its own driver loop and thread (tests/posix_pair.h), record bytes from
 * the sender's queue to the receiving host, which stores nothing (the store has its own
 * benchmark) and answers each record at once.
 *
 * Per row (the POSIX and the io_uring backend; 1 KiB and 16 KiB records; with and without
 * UDP GSO/GRO): goodput (record bytes
 * per second of wall time) and Gbit of record bytes per CPU-second of the whole process
 * (sender, receiver and the kernel work their system calls do, from getrusage), beside
 * the raw UDP ceiling that bench_udp_ceiling prints in the same `make bench` run.  The
 * goal (BRIEF §6) is 6 Gbit per CPU-second for 16 KiB records.  Figures, not a test.
 *
 *   bench_posix [MIB_PER_ROW]       (default 256; the best of 3 rounds per row) */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "posix_pair.h"

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static double user_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    double mib = argc > 1 ? atof(argv[1]) : 256;
    printf("pure-link over the shims, loopback, %.0f MiB of records per round, best of 3 rounds\n", mib);
    printf("%-6s %-8s %-9s %10s %12s %10s %10s %12s %10s\n", "io", "record", "offload", "goodput", "Gbit/CPU-s",
           "user %", "us/record", "datagrams", "per batch");
    static const size_t sizes[] = {1024, 16384};
    static const struct {
        const char *name;
        int (*open)(pl_io **, const pl_io_options *, char *, size_t);
    } backends[] = {{"posix", pl_io_posix_open}, {"uring", pl_io_uring_open}};
    for (int bi = 0; bi < 2; bi++)
    for (int si = 0; si < 2; si++)
        for (int off = 1; off >= 0; off--) {
            pp_options o = {.recv_bind = "127.0.0.1:0", .send_bind = "127.0.0.1:0", .offload = off,
                            .size = sizes[si], .count = (int64_t)(mib * 1048576.0 / (double)sizes[si]),
                            .io_open = backends[bi].open};
            double best_rate = 0, best_goodput = 0, best_user = 0, best_us = 0;
            pp_result r;
            for (int round = 0; round < 3; round++) {
                double c0 = cpu_s(), u0 = user_s();
                if (pp_transfer(&o, &r) != 0 || !r.ok || r.records != o.count) {
                    printf("%-6s %-8zu %-9s failed: %s\n", backends[bi].name, sizes[si], off ? "GSO+GRO" : "none",
                           r.why);
                    goto next; /* e.g. a kernel or container without io_uring: the row says why */
                }
                double cpu = cpu_s() - c0, user = user_s() - u0;
                double rate = (double)r.record_bytes * 8 / cpu / 1e9;
                if (rate > best_rate) {
                    best_rate = rate;
                    best_goodput = (double)r.record_bytes * 8 / ((double)r.wall_ns / 1e9) / 1e9;
                    best_user = 100 * user / cpu;
                    best_us = cpu * 1e6 / (double)o.count;
                }
            }
            uint64_t dgrams = r.send_io.datagrams_out + r.recv_io.datagrams_out;
            uint64_t batches = r.send_io.gso_batches;
            printf("%-6s %-8zu %-9s %6.2f Gb/s %12.2f %9.0f%% %10.2f %12llu %10.1f\n", backends[bi].name, sizes[si],
                   off ? "GSO+GRO" : "none",
                   best_goodput, best_rate, best_user, best_us, (unsigned long long)dgrams,
                   batches ? (double)r.send_io.datagrams_out / (double)r.send_io.send_calls : 1.0);
        next:;
        }
    printf("(Gbit/CPU-s: record bytes x 8 over user + system seconds of sender and receiver together;\n"
           " per batch: datagrams per sendmmsg of the sender)\n");
    return 0;
}
