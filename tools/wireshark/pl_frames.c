/* The frames of a decrypted payload (wire.md §6): each by name with its fields, and the
 * first rule a frame breaks (wire.md §9 reasons) as an expert item.  A malformed packet
 * is dropped whole by a receiver; the tree shows the frames up to the fault. */
#include "pl_dissect.h"

#define PL_FRAMES_MOST   16        /* wire.md §6 */
#define PL_NAME_MOST     64        /* §6.2 */
#define PL_TOKEN_BYTES   16        /* §6.6, §6.8 */
#define PL_ECHO_BYTES    4         /* §6.9 */
#define PL_FRAGMENT_MOST 1452      /* §6.3, §6.4 */
#define PL_ACK_RANGES_MOST 32      /* §6.10 */
#define PL_CREDIT_MOST   65536     /* §6.11 */
#define PL_TYPE_LAST     0x0c
#define PL_REASON_LAST   5         /* §6.13 */

static int hf_type = -1, hf_padding = -1, hf_base_record = -1, hf_base_offset = -1,
    hf_shape = -1, hf_source_len = -1, hf_source = -1, hf_input_len = -1, hf_input = -1,
    hf_offset32 = -1, hf_length = -1, hf_data = -1, hf_data_bytes = -1, hf_epoch = -1,
    hf_public = -1, hf_token = -1, hf_echo = -1, hf_largest = -1, hf_ack_delay = -1,
    hf_ack_flags = -1, hf_stream_unknown = -1, hf_range_count = -1, hf_first_range = -1,
    hf_gap = -1, hf_range = -1, hf_acked = -1, hf_stored = -1, hf_credit = -1,
    hf_lost_field = -1, hf_lost_pn = -1, hf_lost_pn_len = -1, hf_lost_tag = -1,
    hf_lost_answers = -1, hf_reason = -1, hf_frame_count = -1;
static int ett_frame = -1, ett_ack_flags = -1;
static expert_field ei_malformed = EI_INIT;

static const value_string type_names[] = {
    { 0x00, "PADDING" }, { 0x01, "STREAM" }, { 0x02, "RECORDS" }, { 0x03, "RECORD" },
    { 0x04, "OFFER" }, { 0x05, "RESPONSE" }, { 0x06, "PING" }, { 0x07, "CHALLENGE" },
    { 0x08, "ACCEPT" }, { 0x09, "ACK" }, { 0x0a, "STORED" }, { 0x0b, "LOST" },
    { 0x0c, "REFUSED" }, { 0, NULL } };

/* wire.md §6.13's words for each reason, up to its first ';' or '(' (check_vectors.py
 * reads them back from the spec's text). */
static const value_string reason_names[] = {
    { 1, "no input of that name" }, { 2, "the input exists but its shape differs" },
    { 3, "this sender key may not send as that source" },
    { 4, "the receiver's host cannot store this input now" },
    { 5, "a newer run of this sender key took the source over" }, { 0, NULL } };

/* A reading position in one frame.  `fault` is the wire.md §9 reason once one is met:
 * a field cut short or a range checked as it is read stops the frame at once; a value
 * checked on the whole frame (`late`) counts only once the frame has been read whole
 * (wire.md §9 "Which reason wins"). */
typedef struct cursor {
    tvbuff_t    *tvb;
    packet_info *pinfo;
    proto_tree  *tree;
    int          off;
    int          end;
    const char  *fault;
    proto_item  *fault_item;
    const char  *late;
    proto_item  *late_item;
    guint64      run;
} cursor;

static void fail(cursor *c, const char *reason, proto_item *item)
{
    if (c->fault)
        return;
    c->fault = reason;
    c->fault_item = item ? item : proto_tree_get_parent(c->tree);
}

static void fail_late(cursor *c, const char *reason, proto_item *item)
{
    if (c->late)
        return;
    c->late = reason;
    c->late_item = item ? item : proto_tree_get_parent(c->tree);
}

static gboolean has(cursor *c, int n)
{
    if (c->fault)
        return FALSE;
    if (c->end - c->off >= n)
        return TRUE;
    fail(c, "truncated", NULL);
    return FALSE;
}

/* A fixed-width field; returns its value (0 when cut short). */
static guint64 fixed(cursor *c, int hf, int n)
{
    if (!has(c, n))
        return 0;
    guint64 v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | tvb_get_guint8(c->tvb, c->off + i);
    if (hf >= 0)
        proto_tree_add_item(c->tree, hf, c->tvb, c->off, n, ENC_BIG_ENDIAN);
    c->off += n;
    return v;
}

/* A fixed-width field that must lie in least..most (out_of_range otherwise), checked
 * as it is read or, when `late`, with the whole frame. */
static guint64 fixed_in(cursor *c, int hf, int n, guint64 least, guint64 most, gboolean late)
{
    guint64 v = fixed(c, hf, n);
    if (!c->fault && (v < least || v > most))
        (late ? fail_late : fail)(c, "out_of_range", NULL);
    return v;
}

/* A QUIC varint (wire.md §1): any length is accepted. */
static guint64 varint(cursor *c, int hf, proto_item **item)
{
    if (!has(c, 1))
        return 0;
    int n = 1 << (tvb_get_guint8(c->tvb, c->off) >> 6);
    if (!has(c, n))
        return 0;
    guint64 v = tvb_get_guint8(c->tvb, c->off) & 0x3f;
    for (int i = 1; i < n; i++)
        v = v << 8 | tvb_get_guint8(c->tvb, c->off + i);
    proto_item *it = proto_tree_add_uint64(c->tree, hf, c->tvb, c->off, n, v);
    if (item)
        *item = it;
    c->off += n;
    return v;
}

static void bytes(cursor *c, int hf, int n)
{
    if (has(c, n)) {
        proto_tree_add_item(c->tree, hf, c->tvb, c->off, n, ENC_NA);
        c->off += n;
    }
}

/* A name of STREAM: u8 length 1..64, checked as read, without 0x00 or 0x0a (§6.2). */
static void name(cursor *c, int hf_len, int hf_name)
{
    guint64 n = fixed_in(c, hf_len, 1, 1, PL_NAME_MOST, FALSE);
    if (!has(c, (int)n))
        return;
    proto_item *it = proto_tree_add_item(c->tree, hf_name, c->tvb, c->off, (int)n, ENC_ASCII);
    for (int i = 0; i < (int)n; i++) {
        guint8 b = tvb_get_guint8(c->tvb, c->off + i);
        if (b == 0x00 || b == 0x0a)
            fail_late(c, "out_of_range", it);
    }
    c->off += (int)n;
}

static void frame_stream(cursor *c)
{
    proto_item *rec_item = NULL, *off_item = NULL;
    guint64 base_record = varint(c, hf_base_record, &rec_item);
    guint64 base_offset = varint(c, hf_base_offset, &off_item);
    fixed(c, hf_shape, 8);
    name(c, hf_source_len, hf_source);
    name(c, hf_input_len, hf_input);
    if (!c->fault && base_record > base_offset)
        fail_late(c, "out_of_range", rec_item);
}

static void frame_records(cursor *c)
{
    fixed(c, hf_offset32, 4);
    if (c->fault)
        return;
    int n = c->end - c->off;
    proto_item *it = proto_tree_add_uint(c->tree, hf_data_bytes, c->tvb, c->off, n, n);
    proto_item_set_generated(it);
    if (n < 1 || n > PL_FRAGMENT_MOST)
        fail_late(c, "out_of_range", it);
    bytes(c, hf_data, n);
}

static void frame_record(cursor *c)
{
    fixed(c, hf_offset32, 4);
    guint64 n = fixed_in(c, hf_length, 2, 1, PL_FRAGMENT_MOST, FALSE);
    bytes(c, hf_data, (int)n);
}

/* An epoch field of OFFER or ACCEPT: at least 1 (§6.5, §6.9). */
static void epoch_least_1(cursor *c)
{
    fixed_in(c, hf_epoch, 4, 1, G_MAXUINT32, TRUE);
}

static void frame_offer(cursor *c)
{
    epoch_least_1(c);
    bytes(c, hf_public, PL_KEY_BYTES);
}

static void frame_token(cursor *c)
{
    bytes(c, hf_token, PL_TOKEN_BYTES);
}

static void frame_accept(cursor *c)
{
    epoch_least_1(c);
    bytes(c, hf_echo, PL_ECHO_BYTES);
    bytes(c, hf_public, PL_KEY_BYTES);
}

static void acked_range(cursor *c, int at, guint64 smallest, guint64 largest)
{
    char *text = wmem_strdup_printf(c->pinfo->pool, "%" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT,
                                    smallest, largest);
    proto_item *it = proto_tree_add_string(c->tree, hf_acked, c->tvb, at, c->off - at, text);
    proto_item_set_generated(it);
}

/* The ranges after the first, newest first (§6.10): none may reach below 0. */
static void ack_ranges(cursor *c, guint64 count, guint64 smallest)
{
    for (guint64 i = 0; i < count && !c->fault; i++) {
        int at = c->off;
        proto_item *gi = NULL, *ri = NULL;
        guint64 gap = varint(c, hf_gap, &gi);
        guint64 range = varint(c, hf_range, &ri);
        if (c->fault)
            return;
        if (smallest < gap + 2) {
            fail(c, "out_of_range", gi);
            return;
        }
        guint64 largest = smallest - gap - 2;
        if (largest < range) {
            fail(c, "out_of_range", ri);
            return;
        }
        smallest = largest - range;
        acked_range(c, at, smallest, largest);
    }
}

static void ack_flags(cursor *c)
{
    static int * const bits[] = { &hf_stream_unknown, NULL };
    if (!has(c, 1))
        return;
    guint8 flags = tvb_get_guint8(c->tvb, c->off);
    proto_item *it = proto_tree_add_bitmask(c->tree, c->tvb, c->off, hf_ack_flags,
                                            ett_ack_flags, bits, ENC_NA);
    c->off++;
    if (flags & 0xfe)
        fail_late(c, "reserved_bit", it);
}

static void frame_ack(cursor *c)
{
    proto_item *ci = NULL, *fi = NULL;
    guint64 largest = varint(c, hf_largest, NULL);
    varint(c, hf_ack_delay, NULL);
    ack_flags(c);
    guint64 count = varint(c, hf_range_count, &ci);
    if (!c->fault && count > PL_ACK_RANGES_MOST) {
        fail(c, "out_of_range", ci);
        return;
    }
    int at = c->off;
    guint64 first = varint(c, hf_first_range, &fi);
    if (c->fault)
        return;
    if (first > largest) {
        fail(c, "out_of_range", fi);
        return;
    }
    acked_range(c, at, largest - first, largest);
    ack_ranges(c, count, largest - first);
}

static void frame_stored(cursor *c)
{
    proto_item *ci = NULL;
    varint(c, hf_stored, NULL);
    guint64 credit = varint(c, hf_credit, &ci);
    if (!c->fault && (credit < 1 || credit > PL_CREDIT_MOST))
        fail_late(c, "out_of_range", ci);
}

/* wire.md §6.12: the epoch field, packet number as carried, its length and 8 tag bytes of
 * the packet that could not be opened. */
static void frame_lost(cursor *c)
{
    fixed_in(c, hf_lost_field, 4, 1, PL_EPOCH_CYCLE, TRUE);
    guint64 pn = fixed(c, hf_lost_pn, 4);
    guint64 len = fixed_in(c, hf_lost_pn_len, 1, 1, 4, TRUE);
    if (!c->fault && len >= 1 && len < 4 && (pn >> (8 * len)) != 0)
        fail_late(c, "out_of_range", NULL);
    if (!has(c, PL_LOST_TAG_BYTES))
        return;
    guint8 tag[PL_LOST_TAG_BYTES];
    tvb_memcpy(c->tvb, tag, c->off, PL_LOST_TAG_BYTES);
    bytes(c, hf_lost_tag, PL_LOST_TAG_BYTES);
    guint32 frame = pl_sent_find(c->run, tag);
    if (frame)
        proto_item_set_generated(proto_tree_add_uint(c->tree, hf_lost_answers, c->tvb,
                                                     c->off - PL_LOST_TAG_BYTES,
                                                     PL_LOST_TAG_BYTES, frame));
}

static void frame_refused(cursor *c)
{
    fixed_in(c, hf_reason, 1, 1, PL_REASON_LAST, TRUE);
}

static void frame_none(cursor *c)
{
    (void)c;
}

/* Per type: its reader and whether it goes sender -> receiver (§6 table). */
static const struct {
    void (*read)(cursor *c);
    gboolean from_sender;
} frame_kinds[PL_TYPE_LAST + 1] = {
    { frame_none, TRUE }, { frame_stream, TRUE }, { frame_records, TRUE },
    { frame_record, TRUE }, { frame_offer, TRUE }, { frame_token, TRUE },
    { frame_none, TRUE }, { frame_token, FALSE }, { frame_accept, FALSE },
    { frame_ack, FALSE }, { frame_stored, FALSE }, { frame_lost, FALSE },
    { frame_refused, FALSE } };

/* A run of PADDING bytes, one step (§6.1). */
static int padding_run(tvbuff_t *tvb, int off, int end)
{
    int n = 0;
    while (off + n < end && tvb_get_guint8(tvb, off + n) == 0x00)
        n++;
    return n;
}

/* One frame at c->off: its subtree, its fields, its fault. */
static void one_frame(cursor *c, proto_tree *payload, gboolean reply, gboolean first)
{
    guint8 type = tvb_get_guint8(c->tvb, c->off);
    int at = c->off;
    proto_item *fi = proto_tree_add_item(payload, hf_type, c->tvb, at, 1, ENC_NA);
    c->tree = proto_item_add_subtree(fi, ett_frame);
    col_append_str(c->pinfo->cinfo, COL_INFO, first ? " " : ", ");
    col_append_str(c->pinfo->cinfo, COL_INFO, val_to_str_const(type, type_names, "unknown"));
    if (type > PL_TYPE_LAST) {
        fail(c, "unknown_frame", fi);
    } else if (type == 0x00) {
        int n = padding_run(c->tvb, at, c->end);
        proto_tree_add_uint(c->tree, hf_padding, c->tvb, at, n, n);
        c->off += n;
    } else if (frame_kinds[type].from_sender == reply) {
        fail(c, "wrong_direction", fi);
    } else {
        c->off++;
        frame_kinds[type].read(c);
        if (!c->fault && c->late)
            fail(c, c->late, c->late_item);
    }
    proto_item_set_len(fi, (c->fault ? c->end : c->off) - at);
}

void pl_frames_dissect(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const pl_header *h)
{
    gboolean reply = h->reply;
    cursor c = { tvb, pinfo, tree, 0, (int)tvb_reported_length(tvb), NULL, NULL, NULL, NULL,
                 h->run };
    int frames = 0;
    if (c.end == 0)
        fail(&c, "no_frames", proto_tree_get_parent(tree));
    while (!c.fault && c.off < c.end) {
        if (++frames > PL_FRAMES_MOST) {
            c.tree = tree;
            fail(&c, "too_many_frames", proto_tree_get_parent(tree));
            break;
        }
        one_frame(&c, tree, reply, frames == 1);
    }
    proto_item *it = proto_tree_add_uint(tree, hf_frame_count, tvb, 0, 0, (guint)frames);
    proto_item_set_generated(it);
    if (c.fault)
        expert_add_info_format(pinfo, c.fault_item, &ei_malformed,
                               "Malformed (%s): a receiver drops the whole packet", c.fault);
}

#define FIELD(hf, name, abbrev, type, base, strings, mask) \
    { &hf, { name, "pure_link." abbrev, type, base, strings, mask, NULL, HFILL } }

void pl_frames_register(int proto)
{
    static hf_register_info hf[] = {
        FIELD(hf_type, "Frame", "frame_type", FT_UINT8, BASE_HEX, VALS(type_names), 0),
        FIELD(hf_frame_count, "Frames (a PADDING run counts once)", "frames", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_padding, "Padding bytes", "padding", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_base_record, "Base record", "stream.base_record", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_base_offset, "Base offset", "stream.base_offset", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_shape, "Shape", "stream.shape", FT_UINT64, BASE_HEX, NULL, 0),
        FIELD(hf_source_len, "Source length", "stream.source_len", FT_UINT8, BASE_DEC, NULL, 0),
        FIELD(hf_source, "Source", "stream.source", FT_STRING, BASE_NONE, NULL, 0),
        FIELD(hf_input_len, "Input length", "stream.input_len", FT_UINT8, BASE_DEC, NULL, 0),
        FIELD(hf_input, "Input", "stream.input", FT_STRING, BASE_NONE, NULL, 0),
        FIELD(hf_offset32, "Offset (low 32 bits)", "offset32", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_length, "Length", "record.length", FT_UINT16, BASE_DEC, NULL, 0),
        FIELD(hf_data_bytes, "Data bytes", "records.bytes", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_data, "Record-stream data", "data", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_epoch, "Epoch", "epoch_number", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_public, "Ephemeral public key", "public_key", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_token, "Token", "token", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_echo, "Echo (first 4 B of the offered key)", "accept.echo", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_largest, "Largest acknowledged", "ack.largest", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_ack_delay, "ACK delay (us)", "ack.delay_us", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_ack_flags, "Flags", "ack.flags", FT_UINT8, BASE_HEX, NULL, 0),
        FIELD(hf_stream_unknown, "Stream unknown", "ack.stream_unknown", FT_BOOLEAN, 8, NULL, 0x01),
        FIELD(hf_range_count, "Range count", "ack.range_count", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_first_range, "First range", "ack.first_range", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_gap, "Gap", "ack.gap", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_range, "Range", "ack.range", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_acked, "Acknowledged", "ack.acked", FT_STRING, BASE_NONE, NULL, 0),
        FIELD(hf_stored, "Stored", "stored.stored", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_credit, "Credit", "stored.credit", FT_UINT64, BASE_DEC, NULL, 0),
        FIELD(hf_lost_field, "Epoch field not opened", "lost.epoch_field", FT_UINT32, BASE_DEC, NULL, 0),
        FIELD(hf_lost_pn, "Packet number as carried", "lost.pn", FT_UINT32, BASE_HEX, NULL, 0),
        FIELD(hf_lost_pn_len, "Packet number length", "lost.pn_len", FT_UINT8, BASE_DEC, NULL, 0),
        FIELD(hf_lost_tag, "Tag, first 8 B", "lost.tag", FT_BYTES, BASE_NONE, NULL, 0),
        FIELD(hf_lost_answers, "Answers the packet in frame", "lost.answers", FT_FRAMENUM, BASE_NONE, NULL, 0),
        FIELD(hf_reason, "Reason", "refused.reason", FT_UINT8, BASE_DEC, VALS(reason_names), 0),
    };
    static int *ett[] = { &ett_frame, &ett_ack_flags };
    static ei_register_info ei[] = {
        { &ei_malformed, { "pure_link.malformed", PI_MALFORMED, PI_ERROR,
                           "Malformed frames", EXPFILL } },
    };
    proto_register_field_array(proto, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto), ei, array_length(ei));
}
