/* tool_cat.c: `pure-link cat [--framed | --json] [--from N] [--follow] [--source NAME]
 * [--peer KEY] STORE_DIR|FILE...`: the records a receiver stored, read back from its record
 * files (shims/store/STORE.md) by the store's own frame check (tool_plr.c).  Only whole,
 * valid frames are written out: a tail torn or still being written is not, and --follow
 * waits for it.  A directory means its "*.plr" files in name order; with --follow, files and
 * directories are looked at again, like tail -F, as soon as inotify says one of the watched
 * directories (each directory argument, and the one of each file argument) changed, and
 * every CAT_FOLLOW_POLL_MS all the same (an argument that does not exist yet, a kernel
 * without inotify). */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#define CAT_FOLLOW_POLL_MS 100          /* --follow: how often files and directories are read again */
#define CAT_BASE64_CHUNK_BYTES (48u << 10) /* record bytes per base64 step (a multiple of 3) */
#define CAT_STDOUT_BUFFER_BYTES (1u << 20)

enum { CAT_LINES, CAT_FRAMED, CAT_JSON };
enum { CAT_READING, CAT_SKIPPED, CAT_DONE };

typedef struct cat_file {
    tool_plr r;
    int state;                /* CAT_READING; CAT_SKIPPED: not selected; CAT_DONE: bad or failed */
} cat_file;

typedef struct cat {
    int format, follow, halt;
    uint64_t from;            /* --from: the first record (index in its file) written out */
    const char *source;       /* --source NAME */
    char peer[65];            /* --peer: a prefix of the sender key's hex, "" for any */
    char **args;              /* STORE_DIR|FILE... */
    int args_len;
    uint8_t *said;            /* per argument: a failure to read it was logged */
    cat_file *files;
    size_t files_len, files_cap;
    char **known;             /* the paths in files, sorted (bsearch) */
    int rc;
    int watch_fd;             /* --follow: inotify's descriptor, -1 without */
} cat;

static volatile sig_atomic_t cat_stop;
static void on_stop(int sig) { (void)sig, cat_stop = 1; }

/* The exit code: corruption outranks the rest; otherwise the first failure stays. */
static void cat_fail(cat *c, int code) {
    if (code == TOOL_ERR_CORRUPT || c->rc == TOOL_OK) c->rc = code;
}

static int cat_option(cat *c, int ch, const char *arg) {
    size_t n;
    switch (ch) {
    case 'f': case 'j':
        if (c->format != CAT_LINES && c->format != (ch == 'f' ? CAT_FRAMED : CAT_JSON)) {
            tool_log("--framed and --json exclude each other (see pure-link help cat)");
            return -1;
        }
        c->format = ch == 'f' ? CAT_FRAMED : CAT_JSON;
        return 0;
    case 'F': return tool_parse_count(arg, "--from", &c->from);
    case 'w': c->follow = 1; return 0;
    case 's':
        if ((n = strlen(arg)) < 1 || n > PURE_LINK_NAME_MOST) {
            tool_log("--source '%s': want a name of 1 to %u bytes", arg, PURE_LINK_NAME_MOST);
            return -1;
        }
        c->source = arg;
        return 0;
    case 'p':
        n = strlen(arg);
        if (n < 1 || n > 64 || strspn(arg, "0123456789abcdefABCDEF") != n) {
            tool_log("--peer '%s': want the sender's public key, or its first hex digits (1 to 64)", arg);
            return -1;
        }
        for (size_t i = 0; i <= n; i++) c->peer[i] = (char)(arg[i] >= 'A' && arg[i] <= 'F' ? arg[i] + 32 : arg[i]);
        return 0;
    }
    return -1;
}

static int cat_options(cat *c, int argc, char **argv) {
    static const struct option longs[] = {
        {"framed", no_argument, 0, 'f'}, {"json", no_argument, 0, 'j'},     {"from", required_argument, 0, 'F'},
        {"follow", no_argument, 0, 'w'}, {"source", required_argument, 0, 's'}, {"peer", required_argument, 0, 'p'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    for (int ch; (ch = getopt_long(argc, argv, ":", longs, NULL)) != -1;) {
        if (ch == ':' || ch == '?') {
            tool_log("%s %s (see pure-link help cat)", ch == ':' ? "a value is needed after" : "unknown option",
                     argv[optind - 1]);
            return -1;
        }
        if (cat_option(c, ch, optarg) != 0) return -1;
    }
    if (optind >= argc) {
        tool_log("a STORE_DIR or FILE is needed (see pure-link help cat)");
        return -1;
    }
    c->args = argv + optind, c->args_len = argc - optind;
    return 0;
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Closes f's descriptor and frees its window, and keeps its name (--follow: whether it is
 * replaced later): a file not read on holds nothing. */
static void cat_release(cat_file *f, int state) {
    char *keep = f->r.path;
    uint64_t dev = f->r.dev, ino = f->r.ino;
    f->r.path = NULL;
    tool_plr_close(&f->r);
    f->r.path = keep, f->r.dev = dev, f->r.ino = ino;
    f->state = state;
}

/* Opens f on path; a file that is not selected (--source, --peer) is closed and passed over. */
static void cat_open(cat *c, cat_file *f, const char *path) {
    int rc = tool_plr_open(&f->r, path);
    f->state = rc == 0 ? CAT_READING : CAT_DONE;
    if (rc < 0) tool_log("%s: %s", path, strerror(-rc)), cat_fail(c, TOOL_ERR_SYSTEM);
    if (rc == 1) {
        tool_log("%s: not a record file: its header is not valid (see pure-link verify)", path);
        cat_fail(c, TOOL_ERR_CORRUPT);
    }
    char key[65];
    tool_hex(f->r.id.key, 32, key);
    if (rc == 0 && ((c->source && strcmp(c->source, f->r.id.source) != 0) || strncmp(key, c->peer, strlen(c->peer)) != 0))
        f->state = CAT_SKIPPED;
    if (f->state != CAT_READING) cat_release(f, f->state);
}

/* Adds a file not read yet.  Returns -1 past TOOL_CAT_FILES_MOST or out of memory. */
static int cat_add(cat *c, const char *path) {
    char *p = (char *)path;
    if (c->files_len > 0 && bsearch(&p, c->known, c->files_len, sizeof *c->known, by_path)) return 0;
    if (c->files_len == TOOL_CAT_FILES_MOST) {
        tool_log("more than %u record files: name fewer", TOOL_CAT_FILES_MOST);
        return -1;
    }
    if (c->files_len == c->files_cap) {
        size_t cap = c->files_cap ? 2 * c->files_cap : 64;
        cat_file *files = reallocarray(c->files, cap, sizeof *files);
        char **known = files ? reallocarray(c->known, cap, sizeof *known) : NULL;
        if (files) c->files = files;
        if (known == NULL) return tool_log("out of memory"), -1;
        c->known = known, c->files_cap = cap;
    }
    cat_file *f = &c->files[c->files_len];
    cat_open(c, f, path);
    if (f->r.path == NULL) return tool_log("out of memory"), -1;
    size_t at = 0;
    while (at < c->files_len && strcmp(c->known[at], f->r.path) < 0) at++;
    memmove(c->known + at + 1, c->known + at, (c->files_len - at) * sizeof *c->known);
    c->known[at] = f->r.path;
    c->files_len++;
    return 0;
}

/* Finds the files of every argument (a directory's new ones too).  -1: stop. */
static int cat_discover(cat *c) {
    for (int i = 0; i < c->args_len; i++) {
        const char *arg = c->args[i];
        struct stat st;
        char **names = NULL;
        size_t n = 0;
        int rc = stat(arg, &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? tool_plr_list(arg, &names, &n) : 1;
        if (rc < 0 && !c->said[i]) {
            c->said[i] = 1;
            if (rc == -EMFILE) tool_log("%s: more than %u record files", arg, TOOL_CAT_FILES_MOST);
            else tool_log("%s: %s%s", arg, strerror(-rc), c->follow ? "; waiting for it (--follow)" : "");
            if (!c->follow || rc == -EMFILE) cat_fail(c, TOOL_ERR_SYSTEM);
        }
        if (rc == 0 && n == 0 && !c->follow && !c->said[i]) c->said[i] = 1, tool_log("%s: no record file (*.plr) in it", arg);
        int failed = (rc == 1 && cat_add(c, arg) != 0) || rc == -EMFILE;
        for (size_t k = 0; k < n; k++) {
            failed = failed || cat_add(c, names[k]) != 0;
            free(names[k]);
        }
        free(names);
        if (failed) return -1;
    }
    return 0;
}

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void cat_json(const tool_plr *r, const pl_store_frame *f, const uint8_t *data, uint64_t index) {
    char key[65], b64[TOOL_BASE64_LEN(CAT_BASE64_CHUNK_BYTES)];
    tool_hex(r->id.key, 32, key);
    fputs("{\"file\":", stdout);
    json_string(r->path);
    printf(",\"peer\":\"%s\",\"source\":", key);
    json_string(r->id.source);
    fputs(",\"input\":", stdout);
    json_string(r->id.input);
    printf(",\"run\":\"%016llx\",\"record\":%llu,\"index\":%llu,\"offset\":%llu,\"len\":%u,\"base64\":\"",
           (unsigned long long)f->run, (unsigned long long)f->record, (unsigned long long)index,
           (unsigned long long)(r->pos - PL_STORE_FRAME_HEADER_BYTES - f->len), f->len);
    for (size_t at = 0; at < f->len; at += CAT_BASE64_CHUNK_BYTES) {
        size_t n = f->len - at < CAT_BASE64_CHUNK_BYTES ? f->len - at : CAT_BASE64_CHUNK_BYTES;
        fwrite(b64, 1, tool_base64(data + at, n, b64), stdout);
    }
    fputs("\"}\n", stdout);
}

/* Writes one record out; -1 when the line format cannot carry it (cat stops). */
static int cat_write(cat *c, const tool_plr *r, const pl_store_frame *f, const uint8_t *data, uint64_t index) {
    if (c->format == CAT_JSON) return cat_json(r, f, data, index), 0;
    if (c->format == CAT_FRAMED) {
        uint8_t be[4] = {(uint8_t)(f->len >> 24), (uint8_t)(f->len >> 16), (uint8_t)(f->len >> 8), (uint8_t)f->len};
        fwrite(be, 1, sizeof be, stdout);
    } else if (memchr(data, '\n', f->len) != NULL) {
        tool_log("%s: record %llu (offset %llu) holds a newline, which the line format cannot carry: use --framed or "
                 "--json", r->path, (unsigned long long)index,
                 (unsigned long long)(r->pos - PL_STORE_FRAME_HEADER_BYTES - f->len));
        return -1;
    }
    fwrite(data, 1, f->len, stdout);
    if (c->format == CAT_LINES) putchar('\n');
    return 0;
}

/* After the last whole frame: the end, a tail to wait for, or damage (the file is done).
 * Returns 1 when the file has more to read at once. */
static int cat_stopped_at(cat *c, cat_file *f, int rc, const char *why) {
    struct stat st;
    uint64_t next = 0;
    if (rc == TOOL_PLR_IO || fstat(f->r.fd, &st) != 0) {
        tool_log("%s: %s", f->r.path, strerror(rc == TOOL_PLR_IO ? f->r.err : errno));
        cat_fail(c, TOOL_ERR_SYSTEM), f->state = CAT_DONE;
        return 0;
    }
    if ((uint64_t)st.st_size < f->r.pos) {  /* cut back after a failed sync (STORE.md) */
        tool_log("%s: cut back to %lld bytes, before records already written out; not read further", f->r.path,
                 (long long)st.st_size);
        cat_fail(c, TOOL_ERR_SYSTEM), f->state = CAT_DONE;
        return 0;
    }
    if ((uint64_t)st.st_size == f->r.pos) return 0;
    int after = tool_plr_after(&f->r, &next);
    if (after < 0) tool_log("%s: %s", f->r.path, strerror(-after)), cat_fail(c, TOOL_ERR_SYSTEM), f->state = CAT_DONE;
    if (after == 1) {
        tool_log("%s: bad frame at offset %llu: %s; a valid frame follows at offset %llu, and nothing from %llu on is "
                 "read (see pure-link verify)", f->r.path, (unsigned long long)f->r.pos, why,
                 (unsigned long long)next, (unsigned long long)f->r.pos);
        cat_fail(c, TOOL_ERR_CORRUPT), f->state = CAT_DONE;
    }
    return after == 2;  /* 0: a torn tail or one being written: not output; --follow reads it again */
}

/* Writes out every whole, valid frame the file holds from where it stands. */
static void cat_pump(cat *c, cat_file *f) {
    pl_store_frame fr;
    const uint8_t *data;
    const char *why = "";
    int rc;
    do {
        while ((rc = tool_plr_next(&f->r, &fr, &data, &why)) == 1) {
            uint64_t index = f->r.index - 1;
            if (index >= c->from && cat_write(c, &f->r, &fr, data, index) != 0) {
                cat_fail(c, TOOL_ERR_USAGE), c->halt = 1;
                return;
            }
        }
    } while (cat_stopped_at(c, f, rc, why));
}

/* --follow: a file replaced under its name (a new store) is read from its start, as tail -F does. */
static void cat_reopen(cat *c, cat_file *f) {
    struct stat st;
    if (stat(f->r.path, &st) != 0 || ((uint64_t)st.st_dev == f->r.dev && (uint64_t)st.st_ino == f->r.ino)) return;
    if (f->state == CAT_READING) cat_pump(c, f);  /* what the old file still holds first */
    char *keep = f->r.path;
    f->r.path = NULL;
    tool_plr_close(&f->r);
    tool_log("%s: replaced; reading the new file from its start", keep);
    cat_open(c, f, keep);
    free(f->r.path);
    f->r.path = keep;
}

/* --follow: each argument's directory (a file's: its own, which sees it replaced too) is
 * watched; one that does not exist yet is tried again at every turn. */
static void cat_watch(cat *c) {
#ifdef __linux__
    if (c->watch_fd < 0) return;
    for (int i = 0; i < c->args_len; i++) {
        struct stat st;
        char dir[4096];
        const char *arg = c->args[i], *slash = strrchr(arg, '/');
        if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(dir, sizeof dir, "%s", arg);
        else if (slash == NULL) snprintf(dir, sizeof dir, ".");
        else snprintf(dir, sizeof dir, "%.*s", (int)(slash - arg) + (slash == arg), arg);
        /* the same directory again gives the same watch: nothing is added twice */
        (void)inotify_add_watch(c->watch_fd, dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF);
    }
#else
    (void)c;
#endif
}

/* --follow: until a watched directory changes, a signal comes, or CAT_FOLLOW_POLL_MS pass;
 * the events are read and dropped (every file is looked at again anyway). */
static void cat_wait(cat *c) {
    struct pollfd p = {.fd = c->watch_fd, .events = POLLIN};
    if (poll(&p, c->watch_fd >= 0, CAT_FOLLOW_POLL_MS) <= 0 || !(p.revents & POLLIN)) return;
    char events[4096] __attribute__((aligned(8)));
    while (read(c->watch_fd, events, sizeof events) > 0) {}
}

static void cat_free(cat *c) {
    for (size_t i = 0; i < c->files_len; i++) tool_plr_close(&c->files[i].r);
    free(c->files);
    free(c->known);
    free(c->said);
    if (c->watch_fd >= 0) close(c->watch_fd);
}

int tool_cat_main(int argc, char **argv) {
    cat c = {.format = CAT_LINES, .watch_fd = -1};
    if (cat_options(&c, argc, argv) != 0) return TOOL_ERR_USAGE;
    if ((c.said = calloc((size_t)c.args_len, 1)) == NULL) return TOOL_ERR_SYSTEM;
    setvbuf(stdout, NULL, _IOFBF, CAT_STDOUT_BUFFER_BYTES);
    struct rlimit fds;  /* every file found is opened at once (its header picks it): up to TOOL_CAT_FILES_MOST */
    if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
        fds.rlim_cur = fds.rlim_max;
        setrlimit(RLIMIT_NOFILE, &fds);
    }
    if (c.follow) {
        struct sigaction sa = {.sa_handler = on_stop};
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
#ifdef __linux__
        c.watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);  /* -1: the poll alone */
#endif
    }
    for (;;) {
        if (cat_discover(&c) != 0) cat_fail(&c, TOOL_ERR_SYSTEM), c.halt = 1;
        for (size_t i = 0; i < c.files_len && !c.halt; i++) {
            if (c.follow && c.files[i].state != CAT_DONE) cat_reopen(&c, &c.files[i]);
            if (c.files[i].state != CAT_READING) continue;
            cat_pump(&c, &c.files[i]);
            if (!c.follow) cat_release(&c.files[i], CAT_DONE);  /* one descriptor at a time */
            else tool_plr_rest(&c.files[i].r);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
            tool_log("standard output: %s", strerror(errno));
            cat_fail(&c, TOOL_ERR_SYSTEM);
            break;
        }
        if (!c.follow || cat_stop || c.halt) break;
        cat_watch(&c);
        cat_wait(&c);  /* a signal ends it early */
    }
    cat_free(&c);
    return c.rc;
}
