/* pure-link v1 over UDP: the clear header (wire.md §3), the protocol's registration,
 * its preferences (the key log, the UDP ports) and the plugin's entry point.  With a
 * key log the payload is opened (pl_open.c) and its frames shown (pl_frames.c). */
#include "pl_dissect.h"

#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <ws_version.h>

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = "0.1.0";
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;
WS_DLL_PUBLIC void plugin_register(void);

#define PL_SENDER_FIXED_BYTES 14     /* wire.md §3.1: version, flags, key id, run */
#define PL_REPLY_FIXED_BYTES  18     /* wire.md §3.2: version, flags, run, reply run */
#define PL_UDP_PORTS          "4433" /* the simulator's and the examples' port */

static int proto_pl = -1;
static int hf_version = -1, hf_flags = -1, hf_flag_r = -1, hf_flag_reserved = -1,
    hf_flag_p = -1, hf_flag_e = -1, hf_key_id = -1, hf_run = -1, hf_reply_run = -1,
    hf_pn_truncated = -1, hf_pn = -1, hf_epoch = -1, hf_decrypted = -1, hf_by_rule = -1,
    hf_keylog_line = -1, hf_ciphertext = -1, hf_tag = -1;
static int ett_pl = -1, ett_flags = -1, ett_payload = -1;
static expert_field ei_header = EI_INIT, ei_not_opened = EI_INIT, ei_fallback = EI_INIT,
    ei_gso = EI_INIT;
static const char *pref_keylog = "";
static dissector_handle_t pl_handle;

/* The header's fields; FALSE with `why` when it is not a pure-link v1 header.  The checks
 * go in the order of wire.md §9 "Which reason wins". */
static gboolean header_parse(tvbuff_t *tvb, pl_header *h, const char **why)
{
    guint len = tvb_reported_length(tvb);
    *why = "truncated";
    if (len < 1)
        return FALSE;
    if (tvb_get_guint8(tvb, 0) != PL_VERSION) {
        *why = "bad_version";
        return FALSE;
    }
    if (len < 2)
        return FALSE;
    h->flags = tvb_get_guint8(tvb, 1);
    h->reply = (h->flags & PL_FLAG_R) != 0;
    h->pn_bytes = ((h->flags & PL_FLAG_P) >> 4) + 1;
    h->epoch_field = h->flags & PL_FLAG_E;
    h->header_bytes = (h->reply ? PL_REPLY_FIXED_BYTES : PL_SENDER_FIXED_BYTES) + h->pn_bytes;
    if (h->flags & PL_FLAG_RESERVED) {
        *why = "reserved_bit";
        return FALSE;
    }
    if (len < h->header_bytes + PL_FRAME_BYTES_LEAST + PL_TAG_BYTES)
        return FALSE;
    if (len > PL_DATAGRAM_MOST) {
        *why = "too_long";
        return FALSE;
    }
    h->key_id = h->reply ? 0 : tvb_get_ntohl(tvb, 2);
    h->run = tvb_get_ntoh64(tvb, h->reply ? 2 : 6);
    h->reply_run = h->reply ? tvb_get_ntoh64(tvb, 10) : 0;
    h->pn_truncated = 0;
    for (guint i = 0; i < h->pn_bytes; i++)
        h->pn_truncated = h->pn_truncated << 8 | tvb_get_guint8(tvb, h->header_bytes - h->pn_bytes + i);
    return TRUE;
}

static void header_tree(tvbuff_t *tvb, proto_tree *t, const pl_header *h)
{
    static int * const flag_bits[] = { &hf_flag_r, &hf_flag_reserved, &hf_flag_p, &hf_flag_e, NULL };
    proto_tree_add_item(t, hf_version, tvb, 0, 1, ENC_NA);
    proto_tree_add_bitmask(t, tvb, 1, hf_flags, ett_flags, flag_bits, ENC_NA);
    if (!h->reply)
        proto_tree_add_item(t, hf_key_id, tvb, 2, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(t, hf_run, tvb, h->reply ? 2 : 6, 8, ENC_BIG_ENDIAN);
    if (h->reply)
        proto_tree_add_item(t, hf_reply_run, tvb, 10, 8, ENC_BIG_ENDIAN);
    proto_tree_add_item(t, hf_pn_truncated, tvb, h->header_bytes - h->pn_bytes, h->pn_bytes,
                        ENC_BIG_ENDIAN);
}

/* The result of the open: the full epoch and number, and which key-log line opened it. */
static void opened_tree(tvbuff_t *tvb, packet_info *pinfo, proto_tree *t, const pl_header *h,
                        const pl_opened *o)
{
    proto_item *it = proto_tree_add_boolean(t, hf_decrypted, tvb, 0, 0, o->opened);
    proto_item_set_generated(it);
    if (!o->opened) {
        expert_add_info(pinfo, it, &ei_not_opened);
        return;
    }
    proto_item_set_generated(proto_tree_add_uint(t, hf_epoch, tvb, 1, 1, o->epoch));
    proto_item_set_generated(proto_tree_add_uint64(t, hf_pn, tvb, h->header_bytes - h->pn_bytes,
                                                   h->pn_bytes, o->pn));
    proto_item_set_generated(proto_tree_add_uint(t, hf_keylog_line, tvb, 0, 0, o->line));
    it = proto_tree_add_boolean(t, hf_by_rule, tvb, 0, 0, o->by_rule);
    proto_item_set_generated(it);
    if (!o->by_rule)
        expert_add_info(pinfo, it, &ei_fallback);
}

static void payload_tree(tvbuff_t *tvb, packet_info *pinfo, proto_tree *t, const pl_header *h,
                         const pl_opened *o)
{
    guint len = tvb_reported_length(tvb);
    guint body = len - h->header_bytes - PL_TAG_BYTES;
    proto_tree_add_item(t, hf_ciphertext, tvb, h->header_bytes, body, ENC_NA);
    proto_tree_add_item(t, hf_tag, tvb, len - PL_TAG_BYTES, PL_TAG_BYTES, ENC_NA);
    if (!o->opened)
        return;
    tvbuff_t *plain = tvb_new_child_real_data(tvb, o->plain, o->plain_bytes, o->plain_bytes);
    add_new_data_source(pinfo, plain, "Decrypted pure-link frames");
    proto_item *pi = proto_tree_add_item(t, proto_pl, plain, 0, -1, ENC_NA);
    proto_item_set_text(pi, "Frames (%u B decrypted)", o->plain_bytes);
    pl_frames_dissect(plain, pinfo, proto_item_add_subtree(pi, ett_payload), h);
}

/* `index`: the datagram's place in its frame (several in a UDP GSO buffer). */
static const pl_opened *opened_of(tvbuff_t *tvb, packet_info *pinfo, const pl_header *h,
                                  guint32 index)
{
    pl_opened *o = p_get_proto_data(wmem_file_scope(), pinfo, proto_pl, index);
    if (!o && !PINFO_FD_VISITED(pinfo)) {
        if (!h->reply)                   /* a LOST may name it, opened or not */
            pl_sent_note(h->run, tvb_get_ptr(tvb, tvb_reported_length(tvb) - PL_TAG_BYTES,
                                             PL_LOST_TAG_BYTES), pinfo->num);
        o = pl_open_packet(tvb, h, pref_keylog);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_pl, index, o);
    }
    if (!o)
        o = wmem_new0(pinfo->pool, pl_opened);
    return o;
}

static void info_column(packet_info *pinfo, const pl_header *h, const pl_opened *o,
                        guint32 index)
{
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "pure-link");
    if (index == 0)
        col_clear(pinfo->cinfo, COL_INFO);
    else
        col_append_str(pinfo->cinfo, COL_INFO, " | ");
    col_append_fstr(pinfo->cinfo, COL_INFO, "%s run %016" G_GINT64_MODIFIER "x ",
                    h->reply ? "Reply" : "Sender", h->run);
    if (o->opened)
        col_append_fstr(pinfo->cinfo, COL_INFO, "epoch %u pn %" G_GUINT64_FORMAT ":",
                        o->epoch, o->pn);
    else
        col_append_fstr(pinfo->cinfo, COL_INFO, "E %u pn low %u (not decrypted)",
                        h->epoch_field, h->pn_truncated);
    col_set_fence(pinfo->cinfo, COL_INFO);
}

/* One datagram: its header, the open, its frames. */
static void dissect_one(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, guint32 index)
{
    pl_header h;
    const char *why;
    proto_item *ti = proto_tree_add_item(tree, proto_pl, tvb, 0, -1, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ti, ett_pl);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "pure-link");
    if (!header_parse(tvb, &h, &why)) {
        col_add_fstr(pinfo->cinfo, COL_INFO, "Malformed header (%s)", why);
        expert_add_info_format(pinfo, ti, &ei_header, "Malformed header (%s)", why);
        return;
    }
    const pl_opened *o = opened_of(tvb, pinfo, &h, index);
    info_column(pinfo, &h, o, index);
    header_tree(tvb, t, &h);
    opened_tree(tvb, pinfo, t, &h, o);
    payload_tree(tvb, pinfo, t, &h, o);
}

/* Whether a packet of the same direction and run as the one at 0 starts at `at`. */
static gboolean same_run_at(tvbuff_t *tvb, guint at, guint len)
{
    guint8 flags = tvb_get_guint8(tvb, 1);
    guint run_at = (flags & PL_FLAG_R) ? 2 : 6;
    if (len - at < run_at + 8 || tvb_get_guint8(tvb, at) != PL_VERSION)
        return FALSE;
    guint8 f = tvb_get_guint8(tvb, at + 1);
    return ((f ^ flags) & (PL_FLAG_R | PL_FLAG_RESERVED)) == 0 &&
           tvb_get_ntoh64(tvb, at + run_at) == tvb_get_ntoh64(tvb, run_at);
}

/* A UDP GSO buffer, as a capture on loopback shows a sender that hands the kernel several
 * datagrams in one call: segments of s bytes each (the last one up to s), every one a
 * packet of the same run.  Returns the smallest such s, or 0 for one datagram. */
static guint gso_segment_bytes(tvbuff_t *tvb)
{
    guint len = tvb_captured_length(tvb);
    if (len <= PL_DATAGRAM_MOST || len != tvb_reported_length(tvb) ||
        tvb_get_guint8(tvb, 0) != PL_VERSION)
        return 0;
    for (guint s = PL_SENDER_FIXED_BYTES + 1 + PL_FRAME_BYTES_LEAST + PL_TAG_BYTES;
         s <= PL_DATAGRAM_MOST; s++) {
        gboolean all = TRUE;
        for (guint at = s; at < len && all; at += s)
            all = same_run_at(tvb, at, len);
        if (all)
            return s;
    }
    return 0;
}

static int dissect_pl(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    (void)data;
    guint len = tvb_captured_length(tvb);
    guint s = gso_segment_bytes(tvb);
    if (s == 0) {
        dissect_one(tvb, pinfo, tree, 0);
        return len;
    }
    proto_tree_add_expert_format(tree, pinfo, &ei_gso, tvb, 0, -1,
                                 "UDP GSO buffer: %u datagrams of %u B", (len + s - 1) / s, s);
    for (guint at = 0, i = 0; at < len; at += s, i++)
        dissect_one(tvb_new_subset_length(tvb, at, MIN(s, len - at)), pinfo, tree, i);
    return len;
}

/* On any UDP port: a well-formed header (or GSO buffer) whose run the key log names. */
static gboolean dissect_pl_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    pl_header h;
    const char *why;
    guint s = gso_segment_bytes(tvb);
    tvbuff_t *first = s ? tvb_new_subset_length(tvb, 0, s) : tvb;
    if (!header_parse(first, &h, &why) || !pl_keylog_has_run(h.run))
        return FALSE;
    dissect_pl(tvb, pinfo, tree, data);
    return TRUE;
}

static void pl_init(void)
{
    pl_keylog_load(pref_keylog);
    pl_open_init();
}

static void pl_cleanup(void)
{
    pl_keylog_free();
}

#define FIELD(hf, name, abbrev, type, base, strings, mask) \
    { &hf, { name, "pure_link." abbrev, type, base, strings, mask, NULL, HFILL } }

static const true_false_string tfs_reply = { "Reply (receiver -> sender)",
                                             "Sender packet (sender -> receiver)" };

static void register_fields(void)
{
    static hf_register_info hf[] = {
        FIELD(hf_version, "Version", "version", FT_UINT8, BASE_DEC, NULL, 0),
        FIELD(hf_flags, "Flags", "flags", FT_UINT8, BASE_HEX, NULL, 0),
        FIELD(hf_flag_r, "R", "flags.r", FT_BOOLEAN, 8, TFS(&tfs_reply), PL_FLAG_R),
        FIELD(hf_flag_reserved, "Reserved", "flags.reserved", FT_BOOLEAN, 8, NULL, PL_FLAG_RESERVED),
        FIELD(hf_flag_p, "P (packet-number bytes - 1)", "flags.p", FT_UINT8, BASE_DEC, NULL, PL_FLAG_P),
        FIELD(hf_flag_e, "E (epoch field)", "flags.e", FT_UINT8, BASE_DEC, NULL, PL_FLAG_E),
        FIELD(hf_key_id, "Key id", "key_id", FT_UINT32, BASE_HEX, NULL, 0),
        FIELD(hf_run, "Run", "run", FT_UINT64, BASE_HEX, NULL, 0),
        FIELD(hf_reply_run, "Reply run", "reply_run", FT_UINT64, BASE_HEX, NULL, 0),
        FIELD(hf_pn_truncated, "Packet number (truncated)", "pn_truncated", FT_UINT32, BASE_HEX_DEC, NULL, 0),
        FIELD(hf_pn, "Packet number", "pn", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_epoch, "Epoch", "epoch", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_decrypted, "Decrypted", "decrypted", FT_BOOLEAN, BASE_NONE, NULL, 0),
        FIELD(hf_by_rule, "Placed by the key-log rule", "by_rule", FT_BOOLEAN, BASE_NONE, NULL, 0),
        FIELD(hf_keylog_line, "Key-log line", "keylog_line", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_ciphertext, "Ciphertext", "ciphertext", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_tag, "Tag", "tag", FT_BYTES, BASE_NONE, NULL, 0),
    };
    static int *ett[] = { &ett_pl, &ett_flags, &ett_payload };
    static ei_register_info ei[] = {
        { &ei_header, { "pure_link.malformed_header", PI_MALFORMED, PI_ERROR,
                        "Malformed header", EXPFILL } },
        { &ei_not_opened, { "pure_link.not_decrypted", PI_DECRYPTION, PI_WARN,
                            "No key-log secret opens this packet", EXPFILL } },
        { &ei_fallback, { "pure_link.fallback", PI_DECRYPTION, PI_NOTE,
                          "Opened with another epoch or packet number than the rule's", EXPFILL } },
        { &ei_gso, { "pure_link.gso", PI_PROTOCOL, PI_NOTE,
                     "A UDP GSO buffer: several datagrams in one capture frame", EXPFILL } },
    };
    proto_register_field_array(proto_pl, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto_pl), ei, array_length(ei));
}

static void proto_register_pl(void)
{
    proto_pl = proto_register_protocol("pure-link", "pure-link", "pure_link");
    register_fields();
    pl_frames_register(proto_pl);
    module_t *m = prefs_register_protocol(proto_pl, NULL);
    prefs_register_filename_preference(m, "keylog", "Key log file",
        "PURE_LINK_EPOCH lines (spec/keylog.md), e.g. from pure-link-sim --keylog", &pref_keylog,
        FALSE);
    pl_handle = register_dissector("pure_link", dissect_pl, proto_pl);
    register_init_routine(pl_init);
    register_cleanup_routine(pl_cleanup);
}

static void proto_reg_handoff_pl(void)
{
    dissector_add_uint_range_with_preference("udp.port", PL_UDP_PORTS, pl_handle);
    heur_dissector_add("udp", dissect_pl_heur, "pure-link over UDP (runs in the key log)",
                       "pure_link_udp", proto_pl, HEURISTIC_ENABLE);
}

void plugin_register(void)
{
    static proto_plugin plugin;
    plugin.register_protoinfo = proto_register_pl;
    plugin.register_handoff = proto_reg_handoff_pl;
    proto_register_plugin(&plugin);
}
