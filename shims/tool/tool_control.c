/* tool_control.c: the control socket of `pure-link recv` and `send` (tool.h): a unix
 * stream socket, owner-only, that answers one request a connection ("text\n" or "json\n")
 * with the status the command renders, then closes.  Everything is non-blocking and
 * bounded: at most CONTROL_CLIENTS_MOST connections at once (a new one past that is
 * closed at once), a request within CONTROL_REQUEST_BYTES and CONTROL_REQUEST_NS, an answer
 * of at most TOOL_STATUS_BYTES_MOST written as the socket takes it.  The listener and the
 * connections sit in one epoll set, whose descriptor the driver's backend watches. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CONTROL_CLIENTS_MOST 8u
#define CONTROL_REQUEST_BYTES 16u
#define CONTROL_REQUEST_NS 1000000000ull   /* a client that says nothing for this long goes */
#define CONTROL_EVENTS_MOST 16u
#define EXTRA_TAG UINT64_MAX               /* the epoll tag of the command's own descriptor */
#define LISTEN_TAG (UINT64_MAX - 1)

typedef struct client {
    int fd;
    uint64_t since_ns;
    char request[CONTROL_REQUEST_BYTES];
    size_t request_len;
    char *answer;             /* NULL until the request is read */
    size_t answer_len, answer_sent;
} client;

struct tool_control {
    int listen_fd, epoll_fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    client clients[CONTROL_CLIENTS_MOST];
};

/* The directory of default sockets: $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=), else
 * $XDG_RUNTIME_DIR/pure-link, else /run/pure-link for root, else /tmp/pure-link-UID. */
const char *tool_control_dir(char *buf, size_t len) {
    const char *rt = getenv("RUNTIME_DIRECTORY"), *xdg = getenv("XDG_RUNTIME_DIR");
    if (rt && rt[0]) snprintf(buf, len, "%s", rt);
    else if (xdg && xdg[0]) snprintf(buf, len, "%s/pure-link", xdg);
    else if (geteuid() == 0) snprintf(buf, len, "/run/pure-link");
    else snprintf(buf, len, "/tmp/pure-link-%u", (unsigned)geteuid());
    return buf;
}

/* Sockets of the default directory named "COMMAND-PID.sock" whose process is gone (kill -9
 * leaves them): removed, so that `pure-link show` lists live ones. */
static void remove_stale(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char command[8];
        int pid = 0, end = 0;
        if (sscanf(e->d_name, "%7[a-z]-%d.sock%n", command, &pid, &end) != 2 || e->d_name[end] != 0 || pid <= 0) continue;
        if (kill(pid, 0) == 0 || errno != ESRCH) continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* PATH itself, or COMMAND-PID.sock in the default directory (made 0700 if missing). */
static int control_path(const char *path, const char *command, char *out, size_t len) {
    if (path) {
        if (strlen(path) >= len) {
            tool_log("--control %s: longer than a unix socket's path may be (%zu bytes)", path, len - 1);
            return -1;
        }
        snprintf(out, len, "%s", path);
        return 0;
    }
    char dir[256];
    tool_control_dir(dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        tool_log("control socket directory %s: %s (--control PATH names another place)", dir, strerror(errno));
        return -1;
    }
    remove_stale(dir);
    if ((size_t)snprintf(out, len, "%s/%s-%d.sock", dir, command, (int)getpid()) >= len) {
        tool_log("control socket directory %s: too long a path for a unix socket", dir);
        return -1;
    }
    return 0;
}

/* Binds owner-only: the name never exists with a wider mode. */
static int bind_private(int fd, const char *path) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    mode_t old = umask(0177);
    int r = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (r != 0 && errno == EADDRINUSE) {
        /* A socket of that name: another live process's, or one left by a killed one. */
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0;
        if (probe >= 0) close(probe);
        if (live) {
            errno = EADDRINUSE;
            return -1;
        }
        unlink(path);
        old = umask(0177);
        r = bind(fd, (struct sockaddr *)&a, sizeof a);
        umask(old);
    }
    return r;
}

static int epoll_add(int epfd, int fd, uint64_t tag, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.u64 = tag};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int tool_control_open(tool_control **out, const char *path, const char *command) {
    tool_control *c = calloc(1, sizeof *c);
    if (c == NULL) return TOOL_ERR_SYSTEM;
    c->listen_fd = c->epoll_fd = -1;
    for (size_t i = 0; i < CONTROL_CLIENTS_MOST; i++) c->clients[i].fd = -1;
    if (control_path(path, command, c->path, sizeof c->path) != 0) {
        free(c);
        return path ? TOOL_ERR_USAGE : TOOL_ERR_SYSTEM;
    }
    c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (c->listen_fd < 0 || c->epoll_fd < 0 || bind_private(c->listen_fd, c->path) != 0 ||
        listen(c->listen_fd, (int)CONTROL_CLIENTS_MOST) != 0 || epoll_add(c->epoll_fd, c->listen_fd, LISTEN_TAG, EPOLLIN) != 0) {
        tool_log("control socket %s: %s%s", c->path, strerror(errno),
                 errno == EADDRINUSE ? " (another process answers there)" : "");
        c->path[0] = 0;   /* not ours to remove */
        tool_control_close(c);
        return TOOL_ERR_SYSTEM;
    }
    *out = c;
    return TOOL_OK;
}

const char *tool_control_path(const tool_control *c) { return c->path; }
int tool_control_fd(const tool_control *c) { return c->epoll_fd; }

int tool_control_watch_also(tool_control *c, int fd) { return epoll_add(c->epoll_fd, fd, EXTRA_TAG, EPOLLIN) == 0 ? 0 : -errno; }

static void drop(tool_control *c, client *k) {
    epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, k->fd, NULL);
    close(k->fd);
    free(k->answer);
    *k = (client){.fd = -1};
}

static void accept_all(tool_control *c, uint64_t now) {
    for (;;) {
        int fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        client *k = NULL;
        for (size_t i = 0; i < CONTROL_CLIENTS_MOST && k == NULL; i++)
            if (c->clients[i].fd < 0) k = &c->clients[i];
        if (k == NULL || epoll_add(c->epoll_fd, fd, (uint64_t)(k - c->clients), EPOLLIN) != 0) {
            close(fd);   /* full: the client sees the end at once and may ask again */
            continue;
        }
        *k = (client){.fd = fd, .since_ns = now};
    }
}

/* Writes what the socket takes; 1 when the whole answer is gone. */
static int write_some(client *k) {
    while (k->answer_sent < k->answer_len) {
        ssize_t n = send(k->fd, k->answer + k->answer_sent, k->answer_len - k->answer_sent, MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : 1;
        k->answer_sent += (size_t)n;
    }
    return 1;
}

static void on_client(tool_control *c, client *k, tool_status_fn *render, void *ctx, uint64_t now) {
    if (k->answer == NULL) {
        ssize_t n = recv(k->fd, k->request + k->request_len, sizeof k->request - 1 - k->request_len, 0);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) drop(c, k);
            return;
        }
        k->request_len += (size_t)n;
        k->request[k->request_len] = 0;
        char *nl = strchr(k->request, '\n');
        if (nl == NULL) {
            if (k->request_len == sizeof k->request - 1) drop(c, k);   /* not a request */
            return;
        }
        *nl = 0;
        int json = strcmp(k->request, "json") == 0;
        if (!json && strcmp(k->request, "text") != 0) return drop(c, k);
        k->answer = malloc(TOOL_STATUS_BYTES_MOST);
        if (k->answer == NULL) return drop(c, k);
        k->answer_len = render(ctx, json, k->answer, TOOL_STATUS_BYTES_MOST, now);
        struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = (uint64_t)(k - c->clients)};
        epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, k->fd, &ev);
    }
    if (write_some(k)) drop(c, k);
}

int tool_control_serve(tool_control *c, tool_status_fn *render, void *ctx, uint64_t now) {
    struct epoll_event evs[CONTROL_EVENTS_MOST];
    int extra = 0;
    int n = epoll_wait(c->epoll_fd, evs, (int)CONTROL_EVENTS_MOST, 0);
    for (int i = 0; i < n; i++) {
        uint64_t tag = evs[i].data.u64;
        if (tag == EXTRA_TAG) extra = 1;
        else if (tag == LISTEN_TAG) accept_all(c, now);
        else if (tag < CONTROL_CLIENTS_MOST && c->clients[tag].fd >= 0) on_client(c, &c->clients[tag], render, ctx, now);
    }
    for (size_t i = 0; i < CONTROL_CLIENTS_MOST; i++) {
        client *k = &c->clients[i];
        if (k->fd >= 0 && now - k->since_ns > CONTROL_REQUEST_NS) drop(c, k);   /* slow or silent */
    }
    return extra;
}

void tool_control_close(tool_control *c) {
    if (c == NULL) return;
    for (size_t i = 0; i < CONTROL_CLIENTS_MOST; i++)
        if (c->clients[i].fd >= 0) drop(c, &c->clients[i]);
    if (c->listen_fd >= 0) close(c->listen_fd);
    if (c->epoll_fd >= 0) close(c->epoll_fd);
    if (c->path[0]) unlink(c->path);
    free(c);
}
