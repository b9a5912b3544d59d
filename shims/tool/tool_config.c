/* tool_config.c: the receiver's config file (pure-link recv --config FILE).
 *
 * One directive a line; '#' starts a comment; words are separated by blanks:
 *   peer KEY SOURCE...       a sender key allowed (64 hex digits, from `pure-link pub`) and
 *                            the source names it may send as ('*': any)
 *   input NAME SHAPE DIR     an input: its name, the shape id senders must announce, and
 *                            the directory of its record files (created if missing)
 *   memo FILE                keep the memo of epoch secrets in FILE (at most one line)
 * Every error names the file and line. */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_MOST 64u /* words on one line */

typedef struct parser {
    const char *path;
    int line;
    tool_config *c;
} parser;

static int fail(const parser *p, const char *what, const char *word) {
    tool_log("%s:%d: %s%s%s%s", p->path, p->line, what, word ? " '" : "", word ? word : "", word ? "'" : "");
    return TOOL_ERR_FILE;
}

static int name_ok(const char *s) {
    size_t n = strlen(s);
    return n >= 1 && n <= PURE_LINK_NAME_MOST;
}

static int on_peer(parser *p, char **w, size_t n) {
    tool_config *c = p->c;
    if (n < 3) return fail(p, "want: peer KEY SOURCE... (64 hex digits, then one or more source names or '*')", NULL);
    if (c->peers_len == TOOL_PEERS_MOST) return fail(p, "too many peers (at most 1024)", NULL);
    tool_peer *peer = &c->peers[c->peers_len];
    if (tool_parse_key_hex(w[1], peer->key) != 0) return fail(p, "not a public key (want 64 hex digits)", w[1]);
    for (size_t i = 0; i < c->peers_len; i++)
        if (memcmp(c->peers[i].key, peer->key, 32) == 0) {
            char what[64];
            snprintf(what, sizeof what, "this key is a peer already, on line %d:", c->peers[i].line);
            return fail(p, what, w[1]);
        }
    size_t bytes = 1;
    for (size_t i = 2; i < n; i++) {
        if (!name_ok(w[i])) return fail(p, "a source name has 1..64 bytes", w[i]);
        bytes += strlen(w[i]) + 1;
    }
    peer->sources = malloc(bytes);
    peer->sources[0] = 0;
    for (size_t i = 2; i < n; i++) {
        if (i > 2) strcat(peer->sources, "\n");
        strcat(peer->sources, w[i]);
    }
    peer->line = p->line;
    c->peers_len++;
    return TOOL_OK;
}

static int on_input(parser *p, char **w, size_t n) {
    tool_config *c = p->c;
    if (n != 4) return fail(p, "want: input NAME SHAPE DIR", NULL);
    if (c->inputs_len == TOOL_INPUTS_MOST) return fail(p, "too many inputs (at most 256)", NULL);
    if (!name_ok(w[1])) return fail(p, "an input name has 1..64 bytes", w[1]);
    for (size_t i = 0; i < c->inputs_len; i++)
        if (strcmp(c->inputs[i].name, w[1]) == 0) {
            char what[64];
            snprintf(what, sizeof what, "an input of this name is on line %d already:", c->inputs[i].line);
            return fail(p, what, w[1]);
        }
    char *end;
    errno = 0;
    unsigned long long shape = strtoull(w[2], &end, 0);
    if (*end != 0 || errno != 0 || w[2][0] == '-') return fail(p, "the shape is a number (decimal or 0x hex)", w[2]);
    tool_input *in = &c->inputs[c->inputs_len++];
    in->name = strdup(w[1]);
    in->dir = strdup(w[3]);
    in->shape = shape;
    in->line = p->line;
    return TOOL_OK;
}

static int on_line(parser *p, char *line) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *w[WORDS_MOST], *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n == WORDS_MOST) return fail(p, "too many words (at most 64)", NULL);
        w[n++] = t;
    }
    if (n == 0) return TOOL_OK;
    if (strcmp(w[0], "peer") == 0) return on_peer(p, w, n);
    if (strcmp(w[0], "input") == 0) return on_input(p, w, n);
    if (strcmp(w[0], "memo") == 0) {
        if (n != 2) return fail(p, "want: memo FILE", NULL);
        if (p->c->memo) return fail(p, "a second memo line", NULL);
        p->c->memo = strdup(w[1]);
        return TOOL_OK;
    }
    return fail(p, "unknown directive (want peer, input or memo)", w[0]);
}

int tool_config_load(const char *path, tool_config *c) {
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        tool_log("config %s: %s", path, strerror(errno));
        return TOOL_ERR_FILE;
    }
    parser p = {.path = path, .c = c};
    char line[TOOL_CONFIG_LINE_MOST + 2];
    int code = TOOL_OK;
    while (code == TOOL_OK && fgets(line, sizeof line, f)) {
        p.line++;
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        else if (!feof(f)) code = fail(&p, "line longer than 4096 bytes", NULL);
        if (code == TOOL_OK) code = on_line(&p, line);
    }
    fclose(f);
    if (code == TOOL_OK && c->peers_len == 0) {
        tool_log("%s: no 'peer' line: no sender could send", path);
        code = TOOL_ERR_FILE;
    }
    if (code == TOOL_OK && c->inputs_len == 0) {
        tool_log("%s: no 'input' line: every stream would be refused", path);
        code = TOOL_ERR_FILE;
    }
    if (code != TOOL_OK) tool_config_free(c);
    return code;
}

void tool_config_free(tool_config *c) {
    for (size_t i = 0; i < c->peers_len; i++) free(c->peers[i].sources);
    for (size_t i = 0; i < c->inputs_len; i++) free(c->inputs[i].name), free(c->inputs[i].dir);
    free(c->memo);
    c->peers_len = c->inputs_len = 0;
    c->memo = NULL;
}
