/* Numbers the header carries only in part: the epoch from its 4-bit field (wire.md §4)
 * and the packet number from its low 1..4 bytes (wire.md §5). */
#include "pl_dissect.h"

#define PL_VARINT_MOST   ((G_GUINT64_CONSTANT(1) << 62) - 1)   /* wire.md §1 */
#define PL_EPOCH_NEAR    7                                     /* wire.md §4: half the cycle */

guint64 pl_varint_most(void)
{
    return PL_VARINT_MOST;
}

/* E = 0 for epoch 0, else 1 + ((epoch - 1) mod 15). */
guint32 pl_epoch_field(guint32 epoch)
{
    return epoch == 0 ? 0 : 1 + (epoch - 1) % PL_EPOCH_CYCLE;
}

/* The candidate E + 15k nearest to `expected`, as wire.md §4 words it. */
guint32 pl_epoch_recover(guint field, guint32 expected)
{
    if (field == 0)
        return 0;
    if (expected <= field)
        return field;
    guint32 below = field + (expected - field) / PL_EPOCH_CYCLE * PL_EPOCH_CYCLE;
    if (expected - below <= PL_EPOCH_NEAR)
        return below;
    if (below > G_MAXUINT32 - PL_EPOCH_CYCLE)   /* B + 15 would pass 2^32 - 1 */
        return below;
    return below + PL_EPOCH_CYCLE;
}

/* The value nearest `expected` whose low 8L bits are `truncated` (wire.md §5). */
guint64 pl_pn_recover(guint32 truncated, guint pn_bytes, guint64 expected)
{
    guint64 win = G_GUINT64_CONSTANT(1) << (8 * pn_bytes);
    guint64 half = win / 2;
    guint64 c = (expected & ~(win - 1)) | truncated;
    if (c + half <= expected && c < (PL_VARINT_MOST + 1) - win)
        return c + win;
    if (c > expected + half && c >= win)
        return c - win;
    if (c > PL_VARINT_MOST)
        return c - win;
    return c;
}
