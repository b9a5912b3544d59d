/* tool_show.c: `pure-link show [--json] [PATH...]`: asks running receivers and senders for
 * their status over their control sockets (tool_control.c) and prints each answer.  A PATH
 * is a socket or a directory of them (default: tool_control_dir()); in a directory every
 * "*.sock" is asked, in name order, and one nobody answers on is passed over. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SHOW_WAIT_MS 2000          /* for the whole answer of one process */
#define SHOW_SOCKETS_MOST 256u     /* sockets asked in one directory */

/* Asks one socket; prints its answer.  0, or -1 with *why set (errno). */
static int ask(const char *path, int json, int *why) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) return *why = ENAMETOOLONG, -1;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        *why = errno;
        if (fd >= 0) close(fd);
        return -1;
    }
    const char *req = json ? "json\n" : "text\n";
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
        *why = errno;
        close(fd);
        return -1;
    }
    char buf[65536];
    size_t total = 0;
    uint64_t until = pl_now_ns() + (uint64_t)SHOW_WAIT_MS * 1000000u;
    for (;;) {
        uint64_t now = pl_now_ns();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (now >= until || poll(&p, 1, (int)((until - now) / 1000000u) + 1) <= 0) {
            *why = ETIMEDOUT;
            close(fd);
            return -1;
        }
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        fwrite(buf, 1, (size_t)n, stdout);
        total += (size_t)n;
    }
    close(fd);
    if (total == 0) return *why = ECONNRESET, -1;   /* it closed without an answer: busy */
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every *.sock of dir, sorted; returns how many answered, or -1 when dir cannot be read. */
static int ask_dir(const char *dir, int json, int *asked) {
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    char *names[SHOW_SOCKETS_MOST];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < SHOW_SOCKETS_MOST) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".sock") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    int answered = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        int why;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!json && answered > 0) printf("\n");
        fflush(stdout);
        if (ask(path, json, &why) == 0) answered++;
        else if (why != ECONNREFUSED && why != ENOENT) tool_log("%s: %s", path, strerror(why));
        (*asked)++;
        free(names[i]);
    }
    return answered;
}

int tool_show_main(int argc, char **argv) {
    int json = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--") == 0) { i++; break; }
        else {
            tool_log("unknown option %s (see pure-link help show)", argv[i]);
            return TOOL_ERR_USAGE;
        }
    }
    char dir[256];
    const char *fallback[] = {tool_control_dir(dir, sizeof dir)};
    const char **paths = i < argc ? (const char **)argv + i : fallback;
    int count = i < argc ? argc - i : 1, answered = 0, asked = 0, failed = 0;
    for (int k = 0; k < count; k++) {
        struct stat st;
        int why = 0;
        if (stat(paths[k], &st) != 0) {
            tool_log("%s: %s", paths[k], strerror(errno));
            failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int r = ask_dir(paths[k], json, &asked);
            if (r < 0) tool_log("%s: %s", paths[k], strerror(errno)), failed = 1;
            else answered += r;
            continue;
        }
        if (!json && answered > 0) printf("\n");
        fflush(stdout);
        asked++;
        if (ask(paths[k], json, &why) == 0) answered++;
        else tool_log("%s: %s%s", paths[k], strerror(why), why == ECONNREFUSED ? " (no process answers there)" : ""), failed = 1;
    }
    if (answered == 0 && !failed) {
        tool_log("no running receiver or sender answered in %s (start one, or name its --control PATH)", paths[0]);
        return TOOL_ERR_SYSTEM;
    }
    return failed ? TOOL_ERR_SYSTEM : TOOL_OK;
}
