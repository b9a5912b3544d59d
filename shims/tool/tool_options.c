/* tool_options.c: the command line of `pure-link send` and `pure-link recv`: the options
 * both take (tool_link_options in tool.h, their help in man/pure-link.1.scd), parsed in
 * one loop with each command's own, and the errors every option shares. */
#define _GNU_SOURCE
#include "tool.h"

#include <assert.h>
#include <string.h>
#include <unistd.h>

#define OPTIONS_MOST 40u /* long options of one command, shared ones included */

/* The codes below are the shared options' own: a command's options use other letters. */
static const struct option link_longs[] = {
    {"key", required_argument, 0, 'k'},       {"keylog", required_argument, 0, 'K'},
    {"qlog", required_argument, 0, 'L'},      {"stats", optional_argument, 0, 'J'},
    {"no-gso", no_argument, 0, 'G'},          {"no-gro", no_argument, 0, 'R'},
    {"progress", no_argument, 0, 'P'},        {"no-progress", no_argument, 0, 'Q'},
    {"io", required_argument, 0, 'I'},        {0, 0, 0, 0}};

/* 1 when `code` is a shared option (taken into *o), 0 when it is not. */
static int link_option(int code, const char *arg, tool_link_options *o) {
    switch (code) {
    case 'k': o->key = arg; return 1;
    case 'K': o->keylog = arg; return 1;
    case 'L': o->qlog = arg; return 1;
    case 'J': o->stats = arg; return 1;
    case 'G': o->gso = 0; return 1;
    case 'R': o->gro = 0; return 1;
    case 'P': o->progress = 1; return 1;
    case 'Q': o->progress = 0; return 1;
    case 'I': o->io = arg; return 1;
    default: return 0;
    }
}

/* The command's options, then the shared ones, into `all` (OPTIONS_MOST entries). */
static void join_longs(const struct option *own, struct option *all) {
    size_t n = 0;
    for (const struct option *p = own; p->name; p++) {
        for (const struct option *q = link_longs; q->name; q++) assert(p->val != q->val);
        all[n++] = *p;
    }
    for (const struct option *q = link_longs; n < OPTIONS_MOST; q++) {
        all[n++] = *q;
        if (q->name == NULL) return;
    }
    assert(0 && "more options than OPTIONS_MOST");
}

int tool_options_parse(int argc, char **argv, const char *command, const char *shorts, const struct option *own,
                       tool_option_fn *on_own, void *ctx, int operands, tool_link_options *o) {
    *o = (tool_link_options){.io = "auto", .gso = 1, .gro = 1, .progress = isatty(2)};
    struct option all[OPTIONS_MOST];
    join_longs(own, all);
    char short_all[64];
    int n = snprintf(short_all, sizeof short_all, ":k:%s", shorts);
    assert(n > 0 && (size_t)n < sizeof short_all);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, short_all, all, NULL)) != -1) {
        if (c == ':') {
            tool_log("option %s needs a value (see pure-link help %s)", argv[optind - 1], command);
            return -1;
        }
        if (c == '?') {
            tool_log("unknown option %s (see pure-link help %s)", argv[optind - 1], command);
            return -1;
        }
        /* --stats FILE as getopt's users expect of an option with a value: the next word
         * is its FILE unless it is another option; alone (or "-") it means stdout. */
        if (c == 'J' && optarg == NULL)
            optarg = optind < argc && (argv[optind][0] != '-' || strcmp(argv[optind], "-") == 0) ? argv[optind++] : "-";
        if (!link_option(c, optarg, o) && on_own(ctx, c, optarg) != 0) return -1;
    }
    if (strcmp(o->io, "auto") != 0 && strcmp(o->io, "posix") != 0 && strcmp(o->io, "uring") != 0) {
        tool_log("--io %s: want auto, posix or uring (see pure-link help %s)", o->io, command);
        return -1;
    }
    if (!operands && optind < argc) {
        tool_log("unexpected argument '%s' (see pure-link help %s)", argv[optind], command);
        return -1;
    }
    if (!o->key) {
        tool_log("missing --key FILE (see pure-link help %s)", command);
        return -1;
    }
    return 0;
}
