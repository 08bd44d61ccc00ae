/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * post.h -- how a spool's pending messages become one chain of sends
 *
 * The batching policy, apart from the accounting (send.c): which pending
 * messages go in the next chain and which of them are signaled
 * (docs/design.md §8.4). send.c calls it with sp->lock held and posts the
 * chain with link_post_batch().
 */
#ifndef RPMAFS_POST_H
#define RPMAFS_POST_H

#include <stdbool.h>
#include <stdint.h>

#include "link/link.h"

struct confirm;
struct msg;

/* what the signalling rule looks at: a spool's settings and state now */
struct post_policy {
	unsigned window;      /* sends allowed in flight */
	bool always;	      /* completion = always */
	uint32_t max_message; /* the limit in force */
	/*
	 * Short of slots of a message's class (pool.h): fewer free than the
	 * FUSE workers -- big buffers (held by messages), or small slots.
	 * Its sends are then signaled, so that slots come back.
	 */
	bool big_short, small_short;
	bool prompt;	   /* someone waits (fsync, close, buffers short): ask for acks now */
	bool small_prompt; /* the small slots are at their reserve: ask for acks on those */
	const struct confirm *cf; /* message numbers and the receiver's credits */
	unsigned *unsignaled;	  /* unsignaled sends since the last signaled one, kept current */
};

/*
 * post_build -- fill sends[0..max) from head (a spool's pending queue),
 * oldest first, stopping before a message larger than max_message or
 * one the receiver's credits do not cover (confirm_imm); decides each
 * one's signalling (msg->signaled) and immediate data (its number, prompt
 * when msg is sync or pp->prompt) and counts *unsignaled along the chain. Returns how many (0: the head is too large, or nothing
 * is pending). The caller holds the spool's lock; the messages stay pending.
 */
unsigned post_build(
	struct msg *head, const struct post_policy *pp, struct link_send *sends, unsigned max);

#endif /* RPMAFS_POST_H */
