/* sim_scenario.c: the scenario file parser; see sim_scenario.h and sim/README.md. */
#include "sim_scenario.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pure_link.h"
#include "sim_value.h"

#define SIM_PORT_DEFAULT 4433u
#define SIM_DURATION_DEFAULT_NS 10000000000ull   /* 10 s */
#define SIM_METRICS_DEFAULT_NS 100000000ull      /* 100 ms */
#define SIM_PROGRESS_DEFAULT_NS 1000000000ull    /* 1 s */
#define SIM_MEMO_SYNC_DEFAULT_NS 1000000ull      /* 1 ms */
#define SIM_RECORD_BYTES_DEFAULT 1024u
#define SIM_SCENARIO_FILE_MOST (1u << 20)        /* bytes of a scenario file */

typedef enum section { SECTION_NONE, SECTION_NODE, SECTION_LINK, SECTION_TCP } section;

typedef struct parser {
    sim_scenario *sc;
    section in;
    unsigned line;
    char *err;
    size_t err_len;
} parser;

static int fail(parser *p, const char *fmt, ...) {
    int n = p->line ? snprintf(p->err, p->err_len, "line %u: ", p->line) : 0;
    if (n < 0 || (size_t)n >= p->err_len) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->err_len - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* Splits off the next whitespace-separated word of *s (NULL at the end). */
static char *word(char **s) {
    char *p = *s;
    while (isspace((unsigned char)*p)) p++;
    if (*p == 0) return NULL;
    char *w = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    if (*p) *p++ = 0;
    *s = p;
    return w;
}

static int valid_node_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > SIM_NODE_NAME_MOST) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

static int copy_name(parser *p, char *dst, size_t cap, const char *src, const char *what) {
    size_t n = strlen(src);
    if (n == 0 || n >= cap) return fail(p, "%s must be 1..%zu bytes", what, cap - 1);
    memcpy(dst, src, n + 1);
    return 0;
}

int sim_scenario_node(const sim_scenario *sc, const char *name) {
    for (uint32_t i = 0; i < sc->node_count; i++)
        if (strcmp(sc->nodes[i].name, name) == 0) return (int)i;
    return -1;
}

/* ---- path parameters ---- */

static int parse_path_value(parser *p, sim_path_field f, const char *text, uint64_t *v) {
    int r;
    uint32_t ppb;
    switch (f) {
    case SIM_PF_RATE: r = sim_value_rate_bps(text, v); break;
    case SIM_PF_QUEUE: r = sim_value_bytes(text, v); break;
    case SIM_PF_DELAY:
    case SIM_PF_JITTER: r = sim_value_duration_ns(text, v); break;
    case SIM_PF_OVERHEAD:
        r = sim_value_bytes(text, v);
        if (r == 0 && *v > 1000) r = -1;
        break;
    case SIM_PF_MTU:
        r = sim_value_bytes(text, v);
        if (r == 0 && *v > 65535) r = -1;
        break;
    default:
        r = sim_value_ppb(text, &ppb);
        *v = ppb;
        break;
    }
    if (r != 0) return fail(p, "bad value '%s' for path.%s", text, sim_path_field_name(f));
    return 0;
}

/* key is what follows "path.": FIELD, FROM>TO.FIELD or A<>B.FIELD. */
static int parse_path_key(parser *p, const char *key, const char *value, uint64_t at_ns, int timed) {
    sim_path_setting s;
    memset(&s, 0, sizeof s);
    s.at_ns = at_ns;
    const char *field = key;
    const char *dot = strrchr(key, '.');
    if (dot == NULL) {
        s.all = 1;
    } else {
        char sel[2 * SIM_NODE_NAME_MOST + 8];
        size_t n = (size_t)(dot - key);
        if (n >= sizeof sel) return fail(p, "bad path selector in '%s'", key);
        memcpy(sel, key, n);
        sel[n] = 0;
        field = dot + 1;
        char *sep = strstr(sel, "<>");
        size_t sep_len = 2;
        if (sep) s.both_ways = 1;
        else { sep = strchr(sel, '>'); sep_len = 1; }
        if (sep == NULL) return fail(p, "path selector '%s' needs FROM>TO or A<>B", sel);
        *sep = 0;
        if (!valid_node_name(sel) || !valid_node_name(sep + sep_len))
            return fail(p, "bad node names in path selector");
        strcpy(s.from_name, sel);
        strcpy(s.to_name, sep + sep_len);
    }
    int f = -1;
    for (int i = 0; i < SIM_PF_COUNT; i++)
        if (strcmp(field, sim_path_field_name(i)) == 0) f = i;
    if (f < 0) return fail(p, "unknown path parameter '%s'", field);
    s.field = (sim_path_field)f;
    if (parse_path_value(p, s.field, value, &s.value) != 0) return -1;
    sim_scenario *sc = p->sc;
    if (timed) {
        if (sc->change_count == SIM_CHANGES_MOST) return fail(p, "more than %u timed changes", SIM_CHANGES_MOST);
        sc->changes[sc->change_count++] = s;
    } else if (s.all) {
        sim_path_params_apply(&sc->path_default, s.field, s.value);
    } else {
        if (sc->setting_count == SIM_PATH_SETTINGS_MOST)
            return fail(p, "more than %u per-direction path settings", SIM_PATH_SETTINGS_MOST);
        sc->settings[sc->setting_count++] = s;
    }
    return 0;
}

/* A.B.C.D, each 0..255, not 0.0.0.0. */
static int parse_ipv4(const char *text, uint8_t ip[4]) {
    const char *s = text;
    for (int i = 0; i < 4; i++) {
        if (!isdigit((unsigned char)*s)) return -1;
        unsigned v = 0;
        int digits = 0;
        while (isdigit((unsigned char)*s)) {
            v = v * 10 + (unsigned)(*s++ - '0');
            if (++digits > 3 || v > 255) return -1;
        }
        ip[i] = (uint8_t)v;
        if (i < 3 && *s++ != '.') return -1;
    }
    if (*s != 0 || (ip[0] | ip[1] | ip[2] | ip[3]) == 0) return -1;
    return 0;
}

/* key is what follows "node.": NAME.port or NAME.addr (a timed address change). */
static int parse_node_change(parser *p, const char *key, const char *value, uint64_t at_ns) {
    sim_scenario *sc = p->sc;
    if (sc->node_change_count == SIM_NODE_CHANGES_MOST)
        return fail(p, "more than %u timed node changes", SIM_NODE_CHANGES_MOST);
    sim_node_change c;
    memset(&c, 0, sizeof c);
    c.at_ns = at_ns;
    const char *dot = strrchr(key, '.');
    if (dot == NULL) return fail(p, "'at' changes node.NAME.port or node.NAME.addr, not 'node.%s'", key);
    size_t n = (size_t)(dot - key);
    if (n == 0 || n > SIM_NODE_NAME_MOST) return fail(p, "bad node name in 'node.%s'", key);
    memcpy(c.node_name, key, n);
    c.node_name[n] = 0;
    if (!valid_node_name(c.node_name)) return fail(p, "bad node name '%s'", c.node_name);
    uint64_t v;
    if (strcmp(dot + 1, "port") == 0) {
        if (sim_value_u64(value, &v) != 0 || v == 0 || v > 65535) return fail(p, "bad port '%s'", value);
        c.field = SIM_NF_PORT;
        c.port = (uint16_t)v;
    } else if (strcmp(dot + 1, "addr") == 0) {
        if (parse_ipv4(value, c.ip) != 0) return fail(p, "bad IPv4 address '%s' (A.B.C.D)", value);
        c.field = SIM_NF_ADDR;
    } else {
        return fail(p, "a node's timed keys are port and addr, not '%s'", dot + 1);
    }
    sc->node_changes[sc->node_change_count++] = c;
    return 0;
}

/* `at TIME path.KEY VALUE` or `at TIME node.NAME.port|addr VALUE` (colons after `at` and
 * after the key are optional). */
static int parse_at(parser *p, char *rest) {
    char *t = word(&rest);
    if (t == NULL) return fail(p, "'at' needs a time");
    size_t tl = strlen(t);
    if (tl && t[tl - 1] == ':') t[tl - 1] = 0;
    uint64_t at;
    if (sim_value_duration_ns(t, &at) != 0) return fail(p, "bad time '%s'", t);
    char *k = word(&rest);
    if (k == NULL) return fail(p, "'at' needs a key");
    size_t kl = strlen(k);
    if (kl && k[kl - 1] == ':') k[--kl] = 0;
    char *v = trim(rest);
    if (*v == ':') v = trim(v + 1);
    if (*v == 0) return fail(p, "'at %s' needs a value", k);
    if (strncmp(k, "node.", 5) == 0) return parse_node_change(p, k + 5, v, at);
    if (strncmp(k, "path.", 5) != 0) return fail(p, "'at' changes path.* and node.NAME.* keys only, not '%s'", k);
    return parse_path_key(p, k + 5, v, at, 1);
}

/* "FROM > TO" of a link or TCP flow: two different valid node names. */
static int split_pair(parser *p, char *value, const char *what, char **from, char **to) {
    char *gt = strchr(value, '>');
    if (gt == NULL) return fail(p, "%s is 'FROM > TO'", what);
    *gt = 0;
    *from = trim(value);
    *to = trim(gt + 1);
    if (!valid_node_name(*from) || !valid_node_name(*to)) return fail(p, "bad node names in %s", what);
    if (strcmp(*from, *to) == 0) return fail(p, "a %s joins two different nodes", what);
    return 0;
}

/* `replay: FROM > TO at TIME` and `spoof: FROM > TO as VICTIM at TIME`: the pair, then
 * `at TIME` and (spoof only) `as NAME`, in either order. */
static int parse_attack(parser *p, char *value, const char *what, char *from_out, char *to_out, char *as_out,
                        uint64_t *at_ns) {
    char *gt = strchr(value, '>');
    if (gt == NULL) return fail(p, "%s is 'FROM > TO%s at TIME'", what, as_out ? " as NAME" : "");
    *gt = 0;
    char *from = trim(value), *rest = gt + 1;
    char *to = word(&rest);
    if (to == NULL || !valid_node_name(from) || !valid_node_name(to)) return fail(p, "bad node names in %s", what);
    if (strcmp(from, to) == 0) return fail(p, "a %s joins two different nodes", what);
    int have_at = 0, have_as = 0;
    for (char *w; (w = word(&rest)) != NULL;) {
        char *arg = word(&rest);
        if (arg == NULL) return fail(p, "'%s' needs a value", w);
        if (strcmp(w, "at") == 0) {
            if (sim_value_duration_ns(arg, at_ns) != 0) return fail(p, "bad time '%s'", arg);
            have_at = 1;
        } else if (strcmp(w, "as") == 0 && as_out != NULL) {
            if (!valid_node_name(arg)) return fail(p, "bad node name '%s'", arg);
            strcpy(as_out, arg);
            have_as = 1;
        } else {
            return fail(p, "%s takes %s'at TIME', not '%s'", what, as_out ? "'as NAME' and " : "", w);
        }
    }
    if (!have_at || (as_out != NULL && !have_as))
        return fail(p, "%s is 'FROM > TO%s at TIME'", what, as_out ? " as NAME" : "");
    strcpy(from_out, from);
    strcpy(to_out, to);
    return 0;
}

static int parse_count(parser *p, const char *what, const char *arg, uint64_t *out, uint64_t least, uint64_t most) {
    if (sim_value_u64(arg, out) != 0 || *out < least || *out > most)
        return fail(p, "bad %s '%s' (%llu..%llu)", what, arg, (unsigned long long)least, (unsigned long long)most);
    return 0;
}

/* `forge: FROM > TO as ATTACKER at TIME [epoch E] [len N] [count C] [every D] [run seen|random]` */
static int parse_forge(parser *p, char *value, sim_forge_spec *x) {
    char *gt = strchr(value, '>');
    if (gt == NULL) return fail(p, "forge is 'FROM > TO as NAME at TIME [...]'");
    *gt = 0;
    char *from = trim(value), *rest = gt + 1, *to = word(&rest);
    if (to == NULL || !valid_node_name(from) || !valid_node_name(to)) return fail(p, "bad node names in forge");
    x->count = 1, x->len = 80, x->every_ns = 1000000;
    int have_at = 0;
    for (char *w; (w = word(&rest)) != NULL;) {
        char *arg = word(&rest);
        if (arg == NULL) return fail(p, "'%s' needs a value", w);
        int r = 0;
        if (strcmp(w, "at") == 0) r = sim_value_duration_ns(arg, &x->at_ns) ? fail(p, "bad time '%s'", arg) : 0, have_at = 1;
        else if (strcmp(w, "every") == 0)
            r = sim_value_duration_ns(arg, &x->every_ns) || x->every_ns == 0 ? fail(p, "bad every '%s'", arg) : 0;
        else if (strcmp(w, "as") == 0) {
            if (!valid_node_name(arg)) return fail(p, "bad node name '%s'", arg);
            strcpy(x->as_name, arg);
        } else if (strcmp(w, "epoch") == 0) r = parse_count(p, "epoch field", arg, &x->epoch_field, 0, 15);
        else if (strcmp(w, "len") == 0) r = parse_count(p, "len", arg, &x->len, 32, PURE_LINK_DATAGRAM_MOST);
        else if (strcmp(w, "count") == 0) r = parse_count(p, "count", arg, &x->count, 1, 100000000);
        else if (strcmp(w, "run") == 0 && (strcmp(arg, "seen") == 0 || strcmp(arg, "random") == 0))
            x->run_seen = strcmp(arg, "seen") == 0;
        else return fail(p, "forge takes at, as, epoch, len, count, every, run (seen|random), not '%s %s'", w, arg);
        if (r != 0) return -1;
    }
    if (!have_at || x->as_name[0] == 0) return fail(p, "forge is 'FROM > TO as NAME at TIME [...]'");
    strcpy(x->from_name, from);
    strcpy(x->to_name, to);
    return 0;
}

/* ---- global keys ---- */

static int parse_global(parser *p, const char *key, char *value, int *handled) {
    sim_scenario *sc = p->sc;
    *handled = 1;
    if (strcmp(key, "seed") == 0) {
        if (sim_value_u64(value, &sc->seed) != 0) return fail(p, "bad seed");
        sc->seed_given = 1;
    } else if (strcmp(key, "duration") == 0) {
        if (sim_value_duration_ns(value, &sc->duration_ns) != 0 || sc->duration_ns == 0)
            return fail(p, "bad duration '%s' (give a unit: ns us ms s min)", value);
    } else if (strcmp(key, "stop_when_done") == 0) {
        if (sim_value_bool(value, &sc->stop_when_done) != 0) return fail(p, "bad stop_when_done");
    } else if (strcmp(key, "events_most") == 0) {
        if (sim_value_u64(value, &sc->events_most) != 0 || sc->events_most == 0) return fail(p, "bad events_most");
    } else if (strcmp(key, "metrics_interval") == 0) {
        if (sim_value_duration_ns(value, &sc->metrics_interval_ns) != 0) return fail(p, "bad metrics_interval");
    } else if (strcmp(key, "progress_interval") == 0) {
        if (sim_value_duration_ns(value, &sc->progress_interval_ns) != 0 || sc->progress_interval_ns == 0)
            return fail(p, "bad progress_interval");
    } else if (strcmp(key, "crypto") == 0) {
        if (strcmp(value, "default") == 0) sc->null_crypto = 0;
        else if (strcmp(value, "null") == 0) sc->null_crypto = 1;
        else return fail(p, "crypto is 'default' or 'null'");
    } else if (strncmp(key, "path.", 5) == 0) {
        return parse_path_key(p, key + 5, value, 0, 0);
    } else if (strcmp(key, "node") == 0) {
        if (sc->node_count == SIM_NODES_MOST) return fail(p, "more than %u nodes", SIM_NODES_MOST);
        if (!valid_node_name(value)) return fail(p, "bad node name '%s' (1..%u of A-Z a-z 0-9 _ -)", value, SIM_NODE_NAME_MOST);
        if (sim_scenario_node(sc, value) >= 0) return fail(p, "node '%s' declared twice", value);
        sim_node_spec *n = &sc->nodes[sc->node_count++];
        memset(n, 0, sizeof *n);
        strcpy(n->name, value);
        n->port = SIM_PORT_DEFAULT;
        n->memo = 1;
        n->memo_sync_ns = SIM_MEMO_SYNC_DEFAULT_NS;
        p->in = SECTION_NODE;
    } else if (strcmp(key, "replay") == 0) {
        if (sc->replay_count == SIM_ATTACKS_MOST) return fail(p, "more than %u replays", SIM_ATTACKS_MOST);
        sim_replay_spec *r = &sc->replays[sc->replay_count];
        memset(r, 0, sizeof *r);
        if (parse_attack(p, value, "replay", r->from_name, r->to_name, NULL, &r->at_ns) != 0) return -1;
        sc->replay_count++;
    } else if (strcmp(key, "spoof") == 0) {
        if (sc->spoof_count == SIM_ATTACKS_MOST) return fail(p, "more than %u spoofs", SIM_ATTACKS_MOST);
        sim_spoof_spec *x = &sc->spoofs[sc->spoof_count];
        memset(x, 0, sizeof *x);
        if (parse_attack(p, value, "spoof", x->from_name, x->to_name, x->as_name, &x->at_ns) != 0) return -1;
        sc->spoof_count++;
    } else if (strcmp(key, "forge") == 0) {
        if (sc->forge_count == SIM_ATTACKS_MOST) return fail(p, "more than %u forges", SIM_ATTACKS_MOST);
        sim_forge_spec *x = &sc->forges[sc->forge_count];
        memset(x, 0, sizeof *x);
        if (parse_forge(p, value, x) != 0) return -1;
        sc->forge_count++;
    } else if (strcmp(key, "forward") == 0) {
        if (sc->forward_count == SIM_ATTACKS_MOST) return fail(p, "more than %u forwards", SIM_ATTACKS_MOST);
        sim_forward_spec *x = &sc->forwards[sc->forward_count];
        memset(x, 0, sizeof *x);
        if (parse_attack(p, value, "forward", x->from_name, x->to_name, NULL, &x->at_ns) != 0) return -1;
        sc->forward_count++;
    } else if (strcmp(key, "share_from") == 0) {
        if (sim_value_duration_ns(value, &sc->share_from_ns) != 0) return fail(p, "bad share_from");
    } else if (strcmp(key, "tcp") == 0) {
        if (sc->tcp_count == SIM_TCP_FLOWS_MOST) return fail(p, "more than %u TCP flows", SIM_TCP_FLOWS_MOST);
        char *from, *to;
        if (split_pair(p, value, "tcp", &from, &to) != 0) return -1;
        sim_tcp_spec *t = &sc->tcps[sc->tcp_count++];
        sim_tcp_spec_default(t);
        strcpy(t->from_name, from);
        strcpy(t->to_name, to);
        p->in = SECTION_TCP;
    } else if (strcmp(key, "link") == 0) {
        if (sc->link_count == SIM_LINKS_MOST) return fail(p, "more than %u links", SIM_LINKS_MOST);
        char *from, *to;
        if (split_pair(p, value, "link", &from, &to) != 0) return -1;
        sim_link_spec *l = &sc->links[sc->link_count++];
        memset(l, 0, sizeof *l);
        strcpy(l->from_name, from);
        strcpy(l->to_name, to);
        snprintf(l->source, sizeof l->source, "out%u", sc->link_count);
        strcpy(l->input, "in");
        l->shape = 1;
        l->record_bytes = SIM_RECORD_BYTES_DEFAULT;
        l->until_ns = SIM_NEVER;
        l->close_when_done = 1;
        p->in = SECTION_LINK;
    } else {
        *handled = 0;
    }
    return 0;
}

/* ---- node keys ---- */

/* input: NAME [shape N] [at TIME] */
static int parse_input(parser *p, sim_node_spec *n, char *value) {
    if (n->input_count == SIM_INPUTS_MOST) return fail(p, "more than %u inputs on a node", SIM_INPUTS_MOST);
    sim_input_spec *in = &n->inputs[n->input_count];
    memset(in, 0, sizeof *in);
    in->any_shape = 1;
    char *name = word(&value);
    if (name == NULL || copy_name(p, in->name, sizeof in->name, name, "input name") != 0) return -1;
    for (char *w; (w = word(&value)) != NULL;) {
        char *arg = word(&value);
        if (arg == NULL) return fail(p, "'%s' needs a value", w);
        if (strcmp(w, "shape") == 0) {
            if (sim_value_u64(arg, &in->shape) != 0) return fail(p, "bad shape");
            in->any_shape = 0;
        } else if (strcmp(w, "at") == 0) {
            if (sim_value_duration_ns(arg, &in->at_ns) != 0) return fail(p, "bad time '%s'", arg);
        } else {
            return fail(p, "input takes 'shape N' and 'at TIME', not '%s'", w);
        }
    }
    n->input_count++;
    return 0;
}

/* wire: PEER [SOURCE,SOURCE...]  (default "*") */
static int parse_wire(parser *p, sim_node_spec *n, char *value) {
    if (n->wire_count == SIM_WIRES_MOST) return fail(p, "more than %u wires on a node", SIM_WIRES_MOST);
    sim_wire_spec *w = &n->wires[n->wire_count];
    memset(w, 0, sizeof *w);
    char *peer = word(&value);
    if (peer == NULL || !valid_node_name(peer)) return fail(p, "wire needs a peer node name");
    strcpy(w->peer, peer);
    char *list = trim(value);
    if (*list == 0) list = "*";
    if (strlen(list) >= sizeof w->sources) return fail(p, "source list too long");
    strcpy(w->sources, list);
    for (char *c = w->sources; *c; c++)
        if (*c == ',') *c = '\n';
    n->wire_count++;
    return 0;
}

/* crash: TIME [restart TIME] */
static int parse_crash(parser *p, sim_node_spec *n, char *value) {
    if (n->crash_count == SIM_CRASHES_MOST) return fail(p, "more than %u crashes of a node", SIM_CRASHES_MOST);
    sim_crash_spec *c = &n->crashes[n->crash_count];
    c->restart_ns = SIM_NEVER;
    char *t = word(&value);
    if (t == NULL || sim_value_duration_ns(t, &c->at_ns) != 0) return fail(p, "crash needs a time");
    char *w = word(&value);
    if (w != NULL) {
        char *r = word(&value);
        if (strcmp(w, "restart") != 0 || r == NULL || sim_value_duration_ns(r, &c->restart_ns) != 0)
            return fail(p, "crash: TIME [restart TIME]");
        if (c->restart_ns <= c->at_ns) return fail(p, "restart must come after the crash");
    }
    if (n->crash_count > 0) {
        const sim_crash_spec *prev = &n->crashes[n->crash_count - 1];
        if (prev->restart_ns == SIM_NEVER || c->at_ns <= prev->restart_ns)
            return fail(p, "a crash must follow the previous restart");
    }
    n->crash_count++;
    return 0;
}

typedef struct u64_key {
    const char *name;
    size_t offset;
    int (*parse)(const char *, uint64_t *);
} u64_key;

static int parse_congestion(const char *text, uint64_t *out) {
    if (strcmp(text, "cubic") == 0) { *out = 1; return 0; }   /* PURE_LINK_CC_CUBIC */
    if (strcmp(text, "newreno") == 0) { *out = 2; return 0; } /* PURE_LINK_CC_NEWRENO */
    if (strcmp(text, "bbr") == 0) { *out = 3; return 0; }     /* PURE_LINK_CC_BBR */
    return sim_value_u64(text, out);
}

static int parse_node_key(parser *p, const char *key, char *value) {
    sim_node_spec *n = &p->sc->nodes[p->sc->node_count - 1];
    static const u64_key endpoint_keys[] = {
        {"senders_most", offsetof(sim_endpoint_spec, senders_most), sim_value_u64},
        {"send_queue_bytes", offsetof(sim_endpoint_spec, send_queue_bytes), sim_value_bytes},
        {"send_queue_records", offsetof(sim_endpoint_spec, send_queue_records), sim_value_u64},
        {"packets_in_flight_most", offsetof(sim_endpoint_spec, packets_in_flight_most), sim_value_u64},
        {"peers_most", offsetof(sim_endpoint_spec, peers_most), sim_value_u64},
        {"runs_most", offsetof(sim_endpoint_spec, runs_most), sim_value_u64},
        {"stream_buffer_bytes", offsetof(sim_endpoint_spec, stream_buffer_bytes), sim_value_bytes},
        {"unstored_records_most", offsetof(sim_endpoint_spec, unstored_records_most), sim_value_u64},
        {"receive_memory_bytes", offsetof(sim_endpoint_spec, receive_memory_bytes), sim_value_bytes},
        {"send_memory_bytes", offsetof(sim_endpoint_spec, send_memory_bytes), sim_value_bytes},
        {"idle", offsetof(sim_endpoint_spec, idle_ns), sim_value_duration_ns},
        {"epoch_time", offsetof(sim_endpoint_spec, epoch_ns), sim_value_duration_ns},
        {"epoch_packets", offsetof(sim_endpoint_spec, epoch_packets), sim_value_u64},
        {"congestion", offsetof(sim_endpoint_spec, congestion), parse_congestion},
        {"ack_delay_us", offsetof(sim_endpoint_spec, ack_delay_us), sim_value_u64},
        {"copies", offsetof(sim_endpoint_spec, copies), sim_value_u64},
        {"pmtu_raise", offsetof(sim_endpoint_spec, pmtu_raise_ns), sim_value_duration_ns},
    };
    for (size_t i = 0; i < sizeof endpoint_keys / sizeof endpoint_keys[0]; i++) {
        if (strcmp(key, endpoint_keys[i].name) != 0) continue;
        uint64_t *dst = (uint64_t *)((char *)&n->endpoint + endpoint_keys[i].offset);
        if (endpoint_keys[i].parse(value, dst) != 0) return fail(p, "bad value '%s' for %s", value, key);
        if (strcmp(key, "idle") != 0 && strcmp(key, "epoch_time") != 0 && strcmp(key, "epoch_packets") != 0 &&
            strcmp(key, "pmtu_raise") != 0 &&
            *dst > UINT32_MAX)
            return fail(p, "%s above 2^32-1", key);
        return 0;
    }
    uint64_t v;
    if (strcmp(key, "port") == 0) {
        if (sim_value_u64(value, &v) != 0 || v == 0 || v > 65535) return fail(p, "bad port");
        n->port = (uint16_t)v;
    } else if (strcmp(key, "store_latency") == 0) {
        if (sim_value_duration_ns(value, &n->store_latency_ns) != 0) return fail(p, "bad store_latency");
    } else if (strcmp(key, "memo") == 0) {
        if (sim_value_bool(value, &n->memo) != 0) return fail(p, "memo is yes or no");
    } else if (strcmp(key, "rx_batch") == 0) {
        if (sim_value_u64(value, &n->rx_batch) != 0 || n->rx_batch == 0 || n->rx_batch > 1024)
            return fail(p, "rx_batch is 1 to 1024 datagrams");
    } else if (strcmp(key, "memo_sync") == 0) {
        if (sim_value_duration_ns(value, &n->memo_sync_ns) != 0) return fail(p, "bad memo_sync");
    } else if (strcmp(key, "memo_crash") == 0) {
        if (strcmp(value, "drop") == 0) n->memo_crash = SIM_DISK_CRASH_DROP;
        else if (strcmp(value, "tear_last") == 0) n->memo_crash = SIM_DISK_CRASH_TEAR_LAST;
        else if (strcmp(value, "tear_first") == 0) n->memo_crash = SIM_DISK_CRASH_TEAR_FIRST;
        else return fail(p, "memo_crash is drop, tear_last or tear_first");
    } else if (strcmp(key, "input") == 0) {
        return parse_input(p, n, value);
    } else if (strcmp(key, "wire") == 0) {
        return parse_wire(p, n, value);
    } else if (strcmp(key, "crash") == 0) {
        return parse_crash(p, n, value);
    } else if (strcmp(key, "crash_at_memo") == 0) {
        /* crash_at_memo: K restart D -- the K-th memo write is durable, the endpoint not told */
        char *rest = value, *k = word(&rest), *kw = word(&rest), *d = word(&rest);
        if (k == NULL || sim_value_u64(k, &n->crash_at_memo) != 0 || n->crash_at_memo == 0 || kw == NULL ||
            strcmp(kw, "restart") != 0 || d == NULL || sim_value_duration_ns(d, &n->crash_at_memo_restart_ns) != 0 ||
            word(&rest) != NULL)
            return fail(p, "crash_at_memo is 'K restart DURATION' (K >= 1)");
    } else {
        const char *why = NULL;
        int r = sim_store_fault_parse(&n->store_fault, key, value, &why);
        if (r < 0) return fail(p, "%s", why);
        if (r == 0) return fail(p, "unknown node key '%s'", key);
    }
    return 0;
}

/* ---- link keys ---- */

static int parse_link_key(parser *p, const char *key, char *value) {
    sim_link_spec *l = &p->sc->links[p->sc->link_count - 1];
    if (strcmp(key, "source") == 0) return copy_name(p, l->source, sizeof l->source, value, "source");
    if (strcmp(key, "input") == 0) return copy_name(p, l->input, sizeof l->input, value, "input");
    if (strcmp(key, "shape") == 0) {
        if (sim_value_u64(value, &l->shape) != 0) return fail(p, "bad shape");
    } else if (strcmp(key, "mode") == 0) {
        if (strcmp(value, "bulk") == 0) l->mode = SIM_MODE_BULK;
        else if (strcmp(value, "paced") == 0) l->mode = SIM_MODE_PACED;
        else return fail(p, "mode is bulk or paced");
    } else if (strcmp(key, "record_bytes") == 0) {
        if (sim_value_bytes(value, &l->record_bytes) != 0 || l->record_bytes > UINT32_MAX)
            return fail(p, "bad record_bytes");
    } else if (strcmp(key, "rate") == 0) {
        if (sim_value_per_s(value, &l->rate_milli_per_s) != 0 || l->rate_milli_per_s == 0)
            return fail(p, "bad rate '%s' (records per second, e.g. 50/s)", value);
    } else if (strcmp(key, "count") == 0) {
        if (sim_value_u64(value, &l->count) != 0) return fail(p, "bad count");
    } else if (strcmp(key, "start") == 0) {
        if (sim_value_duration_ns(value, &l->start_ns) != 0) return fail(p, "bad start");
    } else if (strcmp(key, "until") == 0) {
        if (sim_value_duration_ns(value, &l->until_ns) != 0) return fail(p, "bad until");
    } else if (strcmp(key, "close") == 0) {
        if (sim_value_bool(value, &l->close_when_done) != 0) return fail(p, "close is yes or no");
    } else if (strcmp(key, "more") == 0) {
        /* more: COUNT at TIME */
        if (l->more_count == SIM_MORE_MOST) return fail(p, "more than %u 'more' lines on a link", SIM_MORE_MOST);
        sim_more_spec *m = &l->more[l->more_count];
        char *n = word(&value), *at = word(&value), *t = word(&value);
        if (n == NULL || at == NULL || t == NULL || word(&value) != NULL || strcmp(at, "at") != 0 ||
            sim_value_u64(n, &m->count) != 0 || m->count == 0 || sim_value_duration_ns(t, &m->at_ns) != 0)
            return fail(p, "more is 'COUNT at TIME'");
        if (l->more_count > 0 && m->at_ns < l->more[l->more_count - 1].at_ns)
            return fail(p, "'more' lines go in time order");
        l->more_count++;
    } else {
        return fail(p, "unknown link key '%s'", key);
    }
    return 0;
}

/* ---- TCP flow keys ---- */

static int parse_tcp_key(parser *p, const char *key, char *value) {
    sim_tcp_spec *t = &p->sc->tcps[p->sc->tcp_count - 1];
    uint64_t v;
    if (strcmp(key, "algo") == 0) {
        if (strcmp(value, "cubic") == 0) t->algo = SIM_TCP_CUBIC;
        else if (strcmp(value, "newreno") == 0) t->algo = SIM_TCP_NEWRENO;
        else return fail(p, "algo is cubic or newreno");
    } else if (strcmp(key, "start") == 0) {
        if (sim_value_duration_ns(value, &t->start_ns) != 0) return fail(p, "bad start");
    } else if (strcmp(key, "until") == 0) {
        if (sim_value_duration_ns(value, &t->until_ns) != 0) return fail(p, "bad until");
    } else if (strcmp(key, "bytes") == 0) {
        if (sim_value_bytes(value, &t->bytes) != 0) return fail(p, "bad bytes");
    } else if (strcmp(key, "pacing") == 0) {
        if (sim_value_bool(value, &t->pacing) != 0) return fail(p, "pacing is yes or no");
    } else if (strcmp(key, "hystart") == 0) {
        if (sim_value_bool(value, &t->hystart) != 0) return fail(p, "hystart is yes or no");
    } else if (strcmp(key, "initial_window") == 0) {
        if (sim_value_u64(value, &v) != 0 || v == 0 || v > 1000) return fail(p, "initial_window is 1..1000 segments");
        t->initial_window = (uint32_t)v;
    } else if (strcmp(key, "window_most") == 0) {
        if (sim_value_bytes(value, &t->window_most_bytes) != 0 || t->window_most_bytes < 2 * SIM_TCP_MSS_BYTES ||
            t->window_most_bytes > (1ull << 32))
            return fail(p, "window_most is 2 segments (2,896 B) .. 4 GiB");
    } else if (strcmp(key, "rto_min") == 0) {
        if (sim_value_duration_ns(value, &t->rto_min_ns) != 0 || t->rto_min_ns == 0) return fail(p, "bad rto_min");
    } else {
        return fail(p, "unknown tcp key '%s'", key);
    }
    return 0;
}

/* ---- lines and the whole file ---- */

static int parse_line(parser *p, char *line) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    line = trim(line);
    if (*line == 0) return 0;
    if (strncmp(line, "at ", 3) == 0 || strncmp(line, "at:", 3) == 0 || strncmp(line, "at\t", 3) == 0)
        return parse_at(p, line + 3);
    char *colon = strchr(line, ':');
    if (colon == NULL) return fail(p, "expected 'key: value'");
    *colon = 0;
    char *key = trim(line), *value = trim(colon + 1);
    if (*value == 0) return fail(p, "'%s' needs a value", key);
    int handled;
    if (parse_global(p, key, value, &handled) != 0) return -1;
    if (handled) return 0;
    if (p->in == SECTION_NODE) return parse_node_key(p, key, value);
    if (p->in == SECTION_LINK) return parse_link_key(p, key, value);
    if (p->in == SECTION_TCP) return parse_tcp_key(p, key, value);
    return fail(p, "unknown key '%s' (node, link and tcp keys follow a 'node:', 'link:' or 'tcp:' line)", key);
}

static int resolve_pair(parser *p, sim_path_setting *s) {
    if (s->all) return 0;
    int f = sim_scenario_node(p->sc, s->from_name), t = sim_scenario_node(p->sc, s->to_name);
    if (f < 0 || t < 0) return fail(p, "path.%s>%s names an unknown node", s->from_name, s->to_name);
    if (f == t) return fail(p, "a path joins two different nodes");
    s->from = (uint32_t)f;
    s->to = (uint32_t)t;
    return 0;
}

/* Resolves names once every node is declared, and checks what needs the whole file. */
static int finish(parser *p) {
    sim_scenario *sc = p->sc;
    p->line = 0;
    if (sc->node_count < 2) return fail(p, "a scenario needs at least two nodes");
    for (uint32_t i = 0; i < sc->link_count; i++) {
        sim_link_spec *l = &sc->links[i];
        int f = sim_scenario_node(sc, l->from_name), t = sim_scenario_node(sc, l->to_name);
        if (f < 0 || t < 0) return fail(p, "link %s > %s names an unknown node", l->from_name, l->to_name);
        l->from = (uint32_t)f;
        l->to = (uint32_t)t;
        if (l->mode == SIM_MODE_PACED && l->rate_milli_per_s == 0) return fail(p, "paced link %u needs a rate", i + 1);
        if (l->mode == SIM_MODE_PACED && l->record_bytes < 8)
            return fail(p, "paced records carry an 8 B timestamp: record_bytes >= 8");
        for (uint32_t j = 0; j < i; j++)
            if (sc->links[j].from == l->from && sc->links[j].to == l->to && strcmp(sc->links[j].source, l->source) == 0)
                return fail(p, "links %u and %u: same nodes and source '%s'", j + 1, i + 1, l->source);
    }
    for (uint32_t i = 0; i < sc->tcp_count; i++) {
        sim_tcp_spec *t = &sc->tcps[i];
        int f = sim_scenario_node(sc, t->from_name), to = sim_scenario_node(sc, t->to_name);
        if (f < 0 || to < 0) return fail(p, "tcp %s > %s names an unknown node", t->from_name, t->to_name);
        t->from = (uint32_t)f;
        t->to = (uint32_t)to;
    }
    for (uint32_t i = 0; i < sc->node_count; i++) {
        sim_node_spec *n = &sc->nodes[i];
        for (uint32_t j = 0; j < n->wire_count; j++) {
            int peer = sim_scenario_node(sc, n->wires[j].peer);
            if (peer < 0 || (uint32_t)peer == i) return fail(p, "node %s wires unknown peer '%s'", n->name, n->wires[j].peer);
            n->wires[j].peer_node = (uint32_t)peer;
        }
    }
    for (uint32_t i = 0; i < sc->link_count; i++) {
        const sim_link_spec *l = &sc->links[i];
        if (l->more_count && (l->mode != SIM_MODE_BULK || l->count == 0))
            return fail(p, "link %u: 'more' needs a bulk link with a count", i + 1);
    }
    for (uint32_t i = 0; i < sc->node_change_count; i++) {
        sim_node_change *c = &sc->node_changes[i];
        int nd = sim_scenario_node(sc, c->node_name);
        if (nd < 0) return fail(p, "at node.%s: unknown node", c->node_name);
        c->node = (uint32_t)nd;
    }
    for (uint32_t i = 0; i < sc->replay_count + sc->forward_count; i++) {
        sim_replay_spec *r = i < sc->replay_count ? &sc->replays[i] : &sc->forwards[i - sc->replay_count];
        int f = sim_scenario_node(sc, r->from_name), t = sim_scenario_node(sc, r->to_name);
        if (f < 0 || t < 0)
            return fail(p, "%s %s > %s names an unknown node", i < sc->replay_count ? "replay" : "forward", r->from_name, r->to_name);
        r->from = (uint32_t)f;
        r->to = (uint32_t)t;
    }
    for (uint32_t i = 0; i < sc->spoof_count; i++) {
        sim_spoof_spec *x = &sc->spoofs[i];
        int f = sim_scenario_node(sc, x->from_name), t = sim_scenario_node(sc, x->to_name);
        int v = sim_scenario_node(sc, x->as_name);
        if (f < 0 || t < 0 || v < 0)
            return fail(p, "spoof %s > %s as %s names an unknown node", x->from_name, x->to_name, x->as_name);
        if (v == f || v == t) return fail(p, "spoof: the victim %s is neither end of the pair", x->as_name);
        x->from = (uint32_t)f;
        x->to = (uint32_t)t;
        x->as = (uint32_t)v;
        /* A victim that sent of its own would answer what reaches it and blur the figure. */
        for (uint32_t j = 0; j < sc->link_count; j++)
            if (sc->links[j].from == x->as) return fail(p, "spoof: the victim %s must send nothing (it has a link)", x->as_name);
        for (uint32_t j = 0; j < sc->tcp_count; j++)
            if (sc->tcps[j].from == x->as || sc->tcps[j].to == x->as)
                return fail(p, "spoof: the victim %s must send nothing (it has a TCP flow)", x->as_name);
    }
    for (uint32_t i = 0; i < sc->forge_count; i++) {
        sim_forge_spec *x = &sc->forges[i];
        int f = sim_scenario_node(sc, x->from_name), t = sim_scenario_node(sc, x->to_name);
        int a = sim_scenario_node(sc, x->as_name);
        if (f < 0 || t < 0 || a < 0) return fail(p, "forge %s > %s as %s names an unknown node", x->from_name, x->to_name, x->as_name);
        if (a == t) return fail(p, "forge: the attacker %s is not the target", x->as_name);
        x->from = (uint32_t)f, x->to = (uint32_t)t, x->as = (uint32_t)a;
    }
    for (uint32_t i = 0; i < sc->setting_count; i++)
        if (resolve_pair(p, &sc->settings[i]) != 0) return -1;
    for (uint32_t i = 0; i < sc->change_count; i++)
        if (resolve_pair(p, &sc->changes[i]) != 0) return -1;
    return 0;
}

int sim_scenario_parse(sim_scenario *sc, const char *text, char *err, size_t err_len) {
    memset(sc, 0, sizeof *sc);
    sc->seed = 1;
    sc->duration_ns = SIM_DURATION_DEFAULT_NS;
    sc->stop_when_done = 1;
    sc->metrics_interval_ns = SIM_METRICS_DEFAULT_NS;
    sc->progress_interval_ns = SIM_PROGRESS_DEFAULT_NS;
    sc->share_from_ns = SIM_SHARE_FROM_DEFAULT_NS;
    sim_path_params_default(&sc->path_default);
    parser p = {sc, SECTION_NONE, 0, err, err_len};
    if (err_len) err[0] = 0;
    char line[SIM_LINE_MOST];
    const char *s = text;
    while (*s) {
        p.line++;
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (n >= sizeof line) return fail(&p, "line longer than %u bytes", SIM_LINE_MOST - 1);
        memcpy(line, s, n);
        line[n] = 0;
        if (parse_line(&p, line) != 0) return -1;
        s += n + (nl ? 1 : 0);
    }
    return finish(&p);
}

int sim_scenario_load(sim_scenario *sc, const char *path, char *err, size_t err_len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_len, "%s: cannot open", path);
        return -1;
    }
    char *text = malloc(SIM_SCENARIO_FILE_MOST + 1);
    size_t n = text ? fread(text, 1, SIM_SCENARIO_FILE_MOST + 1, f) : 0;
    fclose(f);
    if (text == NULL || n > SIM_SCENARIO_FILE_MOST) {
        free(text);
        snprintf(err, err_len, "%s: larger than %u bytes", path, SIM_SCENARIO_FILE_MOST);
        return -1;
    }
    text[n] = 0;
    char inner[256];
    int r = sim_scenario_parse(sc, text, inner, sizeof inner);
    free(text);
    if (r != 0) snprintf(err, err_len, "%s: %s", path, inner);
    return r;
}

void sim_scenario_path_params(const sim_scenario *sc, uint32_t from, uint32_t to, sim_path_params *out) {
    *out = sc->path_default;
    for (uint32_t i = 0; i < sc->setting_count; i++) {
        const sim_path_setting *s = &sc->settings[i];
        if ((s->from == from && s->to == to) || (s->both_ways && s->from == to && s->to == from))
            sim_path_params_apply(out, s->field, s->value);
    }
}
