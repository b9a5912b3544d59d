/* main.c: the `pure-link` command-line tool: keygen, pub, recv, send, help. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

static const char overview[] =
    "NAME\n"
    "    pure-link - send records reliably and encrypted over UDP, stored exactly once\n"
    "\n"
    "SYNOPSIS\n"
    "    pure-link keygen FILE\n"
    "    pure-link pub FILE\n"
    "    pure-link recv --key FILE --config FILE [--listen ADDR] [OPTIONS]\n"
    "    pure-link send --key FILE --to ADDR --peer KEY --input NAME [OPTIONS] [FILE...]\n"
    "    pure-link help [COMMAND]\n"
    "    pure-link --version\n"
    "\n"
    "DESCRIPTION\n"
    "    A sender ships records (byte strings up to 16 MiB) of one stream to an input of a\n"
    "    receiver.  The receiver stores each record in the input's directory, makes it\n"
    "    durable (fdatasync), and only then tells the sender, which lets go of it.  Every\n"
    "    packet is sealed with AES-128-GCM under keys from X25519; each side is known by its\n"
    "    public key, which `pure-link pub` prints and the other side names.\n"
    "\n"
    "    keygen FILE   writes a new secret key to FILE (mode 0600; an existing FILE is never\n"
    "                  overwritten) and prints its public key.\n"
    "    pub FILE      prints the public key of the secret key in FILE.\n"
    "    recv          listens and stores; see pure-link help recv.\n"
    "    send          sends records and waits until every one is stored; see pure-link help send.\n"
    "\n"
    "    Sizes take units: 1500, 16KiB, 1MiB (also kB, MB: powers of ten).  Durations need\n"
    "    one: 250ms, 30s, 2m, 1h.  Addresses: 192.0.2.1:4433, [2001:db8::1]:4433, host:4433,\n"
    "    :4433 (every local address, IPv6 and IPv4).\n"
    "\n"
    "    A key file holds the raw X25519 secret key (32 bytes, spec/crypto.md) as 64\n"
    "    lowercase hex digits and a newline, and must not be readable by others (chmod 600);\n"
    "    pure-link pub prints the public key derived from it.\n"
    "\n"
    "    A standard input, output or error that is closed at start is opened onto /dev/null\n"
    "    first, so that no socket or file of the tool's own takes its place.\n"
    "\n"
    "STATISTICS\n"
    "    --stats writes one JSON object on exit: command, seconds, cpu_seconds; endpoint\n"
    "    (and for send, sender): rtt_ns_smoothed, rtt_ns_min, cwnd_bytes and every counter\n"
    "    of pure_link_stats, by the same names, each explained in core/pure_link.h (e.g.\n"
    "    records_stored, lost_notices_sent, address_moves, addresses_validated,\n"
    "    listener_refused, memo_runs_restored, epochs, dropped_*); io: the socket\n"
    "    backend's datagrams, bytes, batches and system calls; then for recv a store\n"
    "    object (records_appended, records_durable, bytes_durable, commits, fdatasyncs,\n"
    "    dir_fsyncs, streams_refused, records_missing, bytes_cut), a driver object (turns,\n"
    "    commits, commit_wait_ns_most and _total: from a batch's start to its end),\n"
    "    streams_opened, refusals_logged and exit, for send records_queued,\n"
    "    records_stored, record_bytes and exit.\n"
    "    dropped_amplification counts the times a due reply was held because less than\n"
    "    64 B of an unvalidated address's 3x allowance was left: the reply waits (nothing\n"
    "    is discarded), and a reply cut short to fit the allowance is not counted.\n"
    "\n"
    "EXIT STATUS\n"
    "    0  send: every record stored; recv: stopped by SIGINT or SIGTERM, cleanly\n"
    "    1  the system said no: socket, address in use, full disk, I/O error, a store\n"
    "       directory or memo that another receiver holds (its process id is named)\n"
    "    2  usage: an unknown option, a missing or malformed argument\n"
    "    3  a key file or config file is missing, malformed or readable by others\n"
    "    4  send: the receiver refused the stream until --deadline\n"
    "    5  send: --deadline passed before every record was stored\n"
    "    6  send: stopped by SIGINT or SIGTERM before every record was stored\n"
    "\n"
    "EXAMPLE\n"
    "    On the receiver:\n"
    "        pure-link keygen recv.key            # prints RECV_PUB\n"
    "        printf 'peer SEND_PUB *\\ninput logs 1 /var/lib/logs\\nmemo /var/lib/logs/memo\\n' > recv.conf\n"
    "        pure-link recv --key recv.key --config recv.conf --listen :4433\n"
    "    On the sender:\n"
    "        pure-link keygen send.key            # prints SEND_PUB\n"
    "        tail -F app.log | pure-link send --key send.key --to receiver:4433 --peer RECV_PUB \\\n"
    "            --input logs --shape 1\n";

static const char recv_help[] =
    "NAME\n"
    "    pure-link recv - receive records and store each one exactly once\n"
    "\n"
    "SYNOPSIS\n"
    "    pure-link recv --key FILE --config FILE [--listen ADDR] [--keylog FILE] [--qlog FILE]\n"
    "                   [--stats[=FILE]] [--progress | --no-progress] [--no-gso] [--no-gro]\n"
    "                   [--io auto|posix|uring]\n"
    "\n"
    "DESCRIPTION\n"
    "    Listens on ADDR (default :4433) and takes streams from the senders the config\n"
    "    allows.  Each input's directory holds one append-only file per stream (sender key\n"
    "    and source) with an index that survives a crash; records are made durable by group\n"
    "    commit (one fdatasync per file covers everything that arrived while the previous\n"
    "    commit ran, off the network thread) before the sender hears they are stored.  A\n"
    "    new stream's file is named once its first bytes are durable, and its records are\n"
    "    stored once that name is (an fsync of the directory).  After a crash or kill -9,\n"
    "    a restart with the same config stores nothing twice and loses nothing.\n"
    "\n"
    "    SIGINT or SIGTERM stop it cleanly: what arrived is committed, the statistics are\n"
    "    printed (with --stats as JSON), and it exits 0.\n"
    "\n"
    "CONFIG FILE\n"
    "    One directive a line; '#' starts a comment.\n"
    "        peer KEY SOURCE...     a sender's public key (64 hex digits) and the source names\n"
    "                               it may send as; '*' allows any\n"
    "        input NAME SHAPE DIR   an input, the shape id its senders announce (a number),\n"
    "                               and its store directory (created if missing)\n"
    "        memo FILE              keeps the epoch secrets across restarts, so that a\n"
    "                               restarted receiver goes on with the senders' runs\n"
    "    An error names the file and the line.\n"
    "\n"
    "OPTIONS\n"
    "    --key FILE        this receiver's secret key (pure-link keygen)\n"
    "    --config FILE     the config file above\n"
    "    --listen ADDR     local address and port (default :4433; port 0 picks one)\n"
    TOOL_LINK_OPTIONS_HELP
    "\n"
    "LOG\n"
    "    One line on stderr for what a person must act on: the address it listens on, a\n"
    "    stream refused (once per sender run), a store or disk failure.\n";

static const char send_help[] =
    "NAME\n"
    "    pure-link send - send records and wait until every one is stored\n"
    "\n"
    "SYNOPSIS\n"
    "    pure-link send --key FILE --to ADDR --peer KEY --input NAME [--source NAME]\n"
    "                   [--shape N] [--framed | --generate COUNT [--size SIZE]] [--deadline DUR]\n"
    "                   [--bind ADDR] [--keylog FILE] [--qlog FILE] [--stats[=FILE]]\n"
    "                   [--progress | --no-progress] [--no-gso] [--no-gro] [--io KIND]\n"
    "                   [--epoch-time DUR] [--epoch-packets N] [FILE...]\n"
    "\n"
    "DESCRIPTION\n"
    "    Records come from stdin, one per line (without its newline), or with --framed each\n"
    "    as a 4-byte big-endian length and that many bytes; or each FILE is one record; or\n"
    "    --generate makes COUNT records of SIZE bytes (record i starts with i, 8 bytes\n"
    "    little-endian) for measurements.  The tool exits 0 once the receiver has stored\n"
    "    every record.  A refusal by the receiver is logged once; the sender keeps asking\n"
    "    until the receiver accepts or --deadline passes.  The progress line shows the\n"
    "    records stored, goodput, RTT and retransmits.\n"
    "\n"
    "OPTIONS\n"
    "    --key FILE        this sender's secret key (pure-link keygen)\n"
    "    --to ADDR         the receiver's address\n"
    "    --peer KEY        the receiver's public key (64 hex digits, pure-link pub)\n"
    "    --input NAME      the receiver's input\n"
    "    --source NAME     this output's name (default out)\n"
    "    --shape N         the shape id of the records (default 0); the input must match\n"
    "    --framed          stdin holds length-prefixed records\n"
    "    --generate COUNT  generated records; --size SIZE each (default 1KiB)\n"
    "    --deadline DUR    give up after DUR (exit 4 when refused, else 5); default: never\n"
    "    --bind ADDR       local address (default: any, a port the system picks)\n"
    "    --epoch-time DUR  offer a new epoch (fresh keys, spec/protocol.md section 3) after\n"
    "                      DUR in one (1ms..24h; default 120s)\n"
    "    --epoch-packets N ... or after N packets under one key (1..8323072, which is\n"
    "                      2^23 - 2^16; default 4194304).  The receiver grants at most 4 new\n"
    "                      keys a second, so an epoch may last longer than asked; out of range\n"
    "                      is a usage error (exit 2)\n"
    TOOL_LINK_OPTIONS_HELP;

static int help(const char *topic) {
    if (topic && strcmp(topic, "recv") == 0) fputs(recv_help, stdout);
    else if (topic && strcmp(topic, "send") == 0) fputs(send_help, stdout);
    else if (topic && strcmp(topic, "keygen") != 0 && strcmp(topic, "pub") != 0) {
        tool_log("no help on '%s' (commands: keygen, pub, recv, send)", topic);
        return TOOL_ERR_USAGE;
    } else fputs(overview, stdout);
    return TOOL_OK;
}

/* A closed 0, 1 or 2 would be the next socket or file opened, which then reads itself as
 * stdin or takes log lines as data: each one closed is opened onto /dev/null, as daemons do.
 * Returns 0, or -1 when /dev/null cannot be opened (nothing may be said then: stderr may be
 * the one missing). */
static int std_fds_open(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0) continue;
        int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got < 0) return -1;
        if (got != fd) { /* a lower one was closed too and is open now: not possible in order */
            close(got);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (std_fds_open() != 0) return TOOL_ERR_SYSTEM;
    if (argc < 2) {
        tool_log("a command is needed: keygen, pub, recv, send or help");
        return TOOL_ERR_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("pure-link %s (wire version %u)\n", TOOL_VERSION, PURE_LINK_VERSION);
        return TOOL_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return help(argc > 2 ? argv[2] : NULL);
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return help(cmd);
    static char label[32];
    snprintf(label, sizeof label, "pure-link %s", cmd);
    tool_set_command(label);
    if (strcmp(cmd, "keygen") == 0) return tool_keygen_main(argc - 1, argv + 1);
    if (strcmp(cmd, "pub") == 0) return tool_pub_main(argc - 1, argv + 1);
    if (strcmp(cmd, "send") == 0) return tool_send_main(argc - 1, argv + 1);
    if (strcmp(cmd, "recv") == 0) return tool_recv_main(argc - 1, argv + 1);
    tool_set_command("pure-link");
    tool_log("unknown command '%s' (commands: keygen, pub, recv, send, help)", cmd);
    return TOOL_ERR_USAGE;
}
