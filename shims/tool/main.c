/* main.c: the `pure-link` command-line tool: keygen, pub, recv, send, show, cat, verify, help. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

/* help_overview, help_recv, help_send, help_link, help_show, help_cat, help_verify: the manual's text (man/pure-link.1.scd),
 * generated at build time by tools/scd2help.awk. */
#include "pure-link-help.h"

static int help(const char *topic) {
    if (topic && strcmp(topic, "recv") == 0) fputs(help_recv, stdout), fputs(help_link, stdout);
    else if (topic && strcmp(topic, "send") == 0) fputs(help_send, stdout), fputs(help_link, stdout);
    else if (topic && strcmp(topic, "show") == 0) fputs(help_show, stdout);
    else if (topic && strcmp(topic, "cat") == 0) fputs(help_cat, stdout);
    else if (topic && strcmp(topic, "verify") == 0) fputs(help_verify, stdout);
    else if (topic && strcmp(topic, "keygen") != 0 && strcmp(topic, "pub") != 0) {
        tool_log("no help on '%s' (commands: keygen, pub, recv, send, show, cat, verify)", topic);
        return TOOL_ERR_USAGE;
    } else fputs(help_overview, stdout);
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
        tool_log("a command is needed: keygen, pub, recv, send, show, cat, verify or help");
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
    if (strcmp(cmd, "show") == 0) return tool_show_main(argc - 1, argv + 1);
    if (strcmp(cmd, "cat") == 0) return tool_cat_main(argc - 1, argv + 1);
    if (strcmp(cmd, "verify") == 0) return tool_verify_main(argc - 1, argv + 1);
    tool_set_command("pure-link");
    tool_log("unknown command '%s' (commands: keygen, pub, recv, send, show, cat, verify, help)", cmd);
    return TOOL_ERR_USAGE;
}
