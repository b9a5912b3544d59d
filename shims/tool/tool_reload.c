/* tool_reload.c: `pure-link recv` rereads its config on SIGHUP (tool.h).  Peers added are
 * wired, peers removed are unwired (their runs end: pure_link_unwire_peer), a peer whose
 * sources changed is wired again with them (its runs end; a sender's next run binds again);
 * inputs added, removed or given a new shape go to the store (pl_store_inputs_set).  The
 * runs of every peer that did not change go on untouched.  A config that cannot be read,
 * or asks for what a running receiver cannot do (more peers than it has room for, another
 * memo, an input moved to another directory), is refused in one line and the old one
 * stays. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdlib.h>
#include <string.h>

#include "pl_store.h"

static const tool_peer *peer_by_key(const tool_config *c, const uint8_t key[32], size_t *at) {
    for (size_t i = 0; i < c->peers_len; i++)
        if (memcmp(c->peers[i].key, key, 32) == 0) return *at = i, &c->peers[i];
    return NULL;
}

/* The same key with the same sources: its core peer and runs stay as they are. */
static int peer_kept(const tool_config *next, const tool_peer *p, size_t *at) {
    const tool_peer *q = peer_by_key(next, p->key, at);
    return q != NULL && strcmp(q->sources, p->sources) == 0;
}

static int refuse(const char *path, const char *what) {
    tool_log("SIGHUP: reload refused, the old config stays: %s: %s", path, what);
    return -1;
}

int tool_reload(tool_reload_state *r, const char *path, uint64_t now) {
    tool_config *next = calloc(1, sizeof *next);
    if (next == NULL) return refuse(path, "out of memory");
    /* The loader's own line is the one line: it names the file and line, after this prefix. */
    char label[64];
    snprintf(label, sizeof label, "%s: SIGHUP: reload refused, the old config stays", r->command);
    tool_set_command(label);
    int code = tool_config_load(path, next);
    tool_set_command(r->command);
    if (code != TOOL_OK) return free(next), -1;
    tool_config *cur = r->config;
    size_t kept = 0, at;
    for (size_t i = 0; i < cur->peers_len; i++) kept += peer_kept(next, &cur->peers[i], &at);
    int fail = 0;
    char why[600];
    if (next->peers_len > r->peers_most) {
        snprintf(why, sizeof why, "%zu peers, and this receiver has room for %u (it was started with %zu; restart it for more)",
                 next->peers_len, r->peers_most, r->peers_started);
        fail = refuse(path, why);
    } else if ((cur->memo == NULL) != (next->memo == NULL) || (cur->memo && strcmp(cur->memo, next->memo) != 0)) {
        fail = refuse(path, "the memo line changed: a running receiver keeps its memo file (restart it to change)");
    }
    pl_store_input inputs[TOOL_INPUTS_MOST];
    for (size_t i = 0; i < next->inputs_len; i++)
        inputs[i] = (pl_store_input){next->inputs[i].name, next->inputs[i].shape, next->inputs[i].dir};
    if (!fail && pl_store_inputs_set(r->store, inputs, next->inputs_len, why, sizeof why) != 0) fail = refuse(path, why);
    if (fail) {
        tool_config_free(next);
        free(next);
        return -1;
    }
    /* From here on it cannot fail but for a peer the core will not take (logged). */
    int index[TOOL_PEERS_MOST];
    size_t removed = 0, added = 0;
    for (size_t i = 0; i < next->peers_len; i++) index[i] = -1;
    for (size_t i = 0; i < cur->peers_len; i++) {
        if (peer_kept(next, &cur->peers[i], &at)) index[at] = r->peer_index[i];
        else pure_link_unwire_peer(r->pl, r->peer_index[i], now), removed++;
    }
    for (size_t i = 0; i < next->peers_len; i++) {
        if (index[i] >= 0) continue;
        int idx = pure_link_wire_peer(r->pl, next->peers[i].key, next->peers[i].sources, now);
        if (idx < 0 || pl_store_peer(r->store, idx, next->peers[i].key) != 0) {
            tool_log("SIGHUP: reload: %s:%d: this peer cannot be wired: %s", path, next->peers[i].line,
                     idx < 0 ? pure_link_strerror(idx) : "the store did not take it");
            if (idx >= 0) pure_link_unwire_peer(r->pl, idx, now);
            continue;
        }
        index[i] = idx;
        added++;
    }
    /* Peers that could not be wired leave the config: the view shows what runs. */
    size_t n = 0;
    for (size_t i = 0; i < next->peers_len; i++) {
        if (index[i] < 0) {
            free(next->peers[i].sources);
            continue;
        }
        next->peers[n] = next->peers[i];
        r->peer_index[n++] = index[i];
    }
    next->peers_len = n;
    tool_config_free(cur);
    *cur = *next;
    free(next);
    r->reloads++;
    tool_log("SIGHUP: reloaded %s: %zu peers (%zu added, %zu removed or changed, %zu kept), %zu inputs", path, cur->peers_len,
             added, removed, kept, cur->inputs_len);
    return 0;
}
