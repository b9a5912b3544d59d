/* pure-link v1 Wireshark dissector: what its parts share.  Written from spec/ alone
 * (wire.md, crypto.md, keylog.md); every constant names the section that fixes it. */
#ifndef PL_DISSECT_H
#define PL_DISSECT_H

#include <epan/packet.h>
#include <epan/expert.h>

#define PL_VERSION           1     /* wire.md §3 */
#define PL_DATAGRAM_MOST     1452  /* wire.md §1 */
#define PL_TAG_BYTES         16    /* wire.md §2 */
#define PL_FRAME_BYTES_LEAST 1     /* wire.md §2: a packet has at least one frame byte */
#define PL_KEY_BYTES         32    /* crypto.md §2: X25519 publics, epoch secrets */
#define PL_FLAG_R            0x80  /* wire.md §3.3 */
#define PL_FLAG_RESERVED     0x40
#define PL_FLAG_P            0x30
#define PL_FLAG_E            0x0f
#define PL_EPOCH_CYCLE       15    /* wire.md §4 */

/* The clear header of one packet (wire.md §3). */
typedef struct pl_header {
    guint8   flags;
    gboolean reply;          /* R: reply packet (receiver -> sender) */
    guint    pn_bytes;       /* P + 1 */
    guint    epoch_field;    /* E */
    guint32  key_id;         /* sender packets only */
    guint64  run;
    guint64  reply_run;      /* reply packets only */
    guint32  pn_truncated;
    guint    header_bytes;
} pl_header;

/* One PURE_LINK_EPOCH line of the key log (keylog.md). */
typedef struct pl_secret {
    guint8  sender_public[PL_KEY_BYTES];
    guint8  receiver_public[PL_KEY_BYTES];
    guint64 run;
    guint32 epoch;
    guint8  secret[PL_KEY_BYTES];
    guint32 key_id;          /* FNV-1a-32 of sender_public (crypto.md §4) */
    guint   line;            /* line number in the file, shown in the tree */
} pl_secret;

/* pl_keylog.c: the key log named by the preference, read again when it changes. */
void             pl_keylog_load(const char *path);
void             pl_keylog_free(void);
guint            pl_keylog_count(void);
const pl_secret *pl_keylog_get(guint i);
gboolean         pl_keylog_has_run(guint64 run);

/* pl_numbers.c: numbers the header carries only in part (wire.md §4, §5). */
guint32 pl_epoch_field(guint32 epoch);
guint32 pl_epoch_recover(guint field, guint32 expected);
guint64 pl_pn_recover(guint32 truncated, guint pn_bytes, guint64 expected);
guint64 pl_varint_most(void);

/* pl_open.c: keys (crypto.md §7), nonces (§8) and the reader's state (keylog.md). */
typedef struct pl_opened {
    gboolean opened;
    gboolean by_rule;        /* opened with the epoch and number keylog.md's rule gives */
    guint32  epoch;
    guint64  pn;
    guint    line;           /* key-log line of the secret that opened it */
    guint8  *plain;
    guint    plain_bytes;
} pl_opened;

void       pl_open_init(void);
pl_opened *pl_open_packet(tvbuff_t *tvb, const pl_header *h, const char *keylog_path);

/* Sender packets by (run, first 8 B of the tag), which a LOST names (wire.md §6.12). */
#define PL_LOST_TAG_BYTES 8
void    pl_sent_note(guint64 run, const guint8 *tag, guint32 frame);
guint32 pl_sent_find(guint64 run, const guint8 *tag);   /* 0: not in the capture */

/* pl_frames.c: the frames of a decrypted payload (wire.md §6). */
void pl_frames_register(int proto);
void pl_frames_dissect(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const pl_header *h);

#endif
