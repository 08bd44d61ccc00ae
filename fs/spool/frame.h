/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frame.h -- a file-framed message being assembled (framing = file)
 *
 * With framing = file, everything written through one open file up to
 * close(2) is one message (docs/design.md §4.6). The bytes are copied once,
 * as they are written, into a slot of the registered request pool (pool.h):
 * a slot holds FUSE_READ_SIZE bytes, more than the largest message (1 MiB),
 * so the message is sent from where it was assembled, with no second copy
 * and no registration of its own. A frame takes its slot at its first byte
 * and gives it to the message at close (frame_take), or back to the pool.
 *
 * Slots are shared with write framing and with the FUSE workers, so the
 * frames assembling at once are bounded by a frame_budget: all message
 * slots but one (at least one), so that write-framed messages always have
 * a slot to cycle through. A write that would need one more gets ENOBUFS,
 * never a wait (the worker holding the FUSE turn must not sleep on a slot
 * that only a later request -- a close -- can give back). Frames take no
 * memory beyond the pool, which memlock.c fits in RLIMIT_MEMLOCK: an
 * ordinary user's default mount (3 slots + 4 workers in 8 MiB) assembles
 * 2 file messages at once.
 *
 * Offsets are file offsets. A frame's message starts at its origin: 0 for
 * the first message of an open file (so a seek before the first write
 * leaves zeros), and after each send the offset of the next message's
 * first write (O_APPEND: where the last one ended). The shell's `cmd > f`
 * closes a duplicate of the descriptor before cmd writes; each close with
 * new bytes sends them.
 */
#ifndef RPMAFS_FRAME_H
#define RPMAFS_FRAME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool;
struct frame;

/* how many frames of a mount may hold a pool slot at once */
struct frame_budget {
	atomic_uint held;
	unsigned max;
};

/* frame_budget_init -- slots - 1 of the pool's message slots, at least 1 */
void frame_budget_init(struct frame_budget *b, unsigned slots);

/* frame_new -- an empty frame whose slots come from pool within budget; 0 or -ENOMEM */
int frame_new(struct pool *pool, struct frame_budget *budget, struct frame **frame_ptr);

/* frame_delete -- give its slot back (unsent bytes are dropped) and free it */
void frame_delete(struct frame **frame_ptr);

/*
 * frame_write -- place size bytes of buf at file offset off (append: at the
 * end of what the frame holds, whatever off says); the gap before them, if
 * any, reads as zeros. limit is the message limit in force (capped at the
 * slot size). Returns 0, or:
 *	-EFBIG    the message would go over limit;
 *	-EINVAL   off is before the message's origin (the message began
 *	          further on, after an earlier close sent what came before);
 *	-ENOBUFS  no pool slot free within the budget.
 * A failed write abandons the message (nothing partial is ever sent):
 * every later write fails the same way until frame_take reports it.
 */
int frame_write(
	struct frame *fr, uint64_t off, bool append, const void *buf, size_t size, uint32_t limit);

/*
 * frame_resize -- ftruncate(fd, size) through the open file: the message
 * becomes size - origin bytes (zeros added at the end). 0, -EINVAL (size
 * before the origin), -EFBIG (over limit), -ENOBUFS; failures abandon it.
 */
int frame_resize(struct frame *fr, uint64_t size, uint32_t limit);

/*
 * frame_take -- at close: 1 with *slot and *len set (the caller owns the
 * slot, which holds the message at pool_slot_ptr(pool, *slot)); 0 when
 * nothing was written since the last take; when the message was abandoned
 * (nothing of it is sent), the negative errno close returns: -EMSGSIZE
 * (over the limit), -ENOBUFS, -EINVAL, or the err of frame_abandon. The
 * next message starts at its first write.
 */
int frame_take(struct frame *fr, unsigned *slot, uint32_t *len);

/* frame_abandon -- a write failed outside the frame (err, e.g. EIO): send nothing of it */
void frame_abandon(struct frame *fr, int err);

/* frame_pending -- bytes written and not taken yet (0 also when abandoned) */
uint32_t frame_pending(struct frame *fr);

#endif /* RPMAFS_FRAME_H */
