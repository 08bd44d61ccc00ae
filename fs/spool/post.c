// SPDX-License-Identifier: BSD-3-Clause
/*
 * post.c -- how a spool's pending messages become one chain of sends (post.h)
 *
 * Whatever is pending when a post happens goes as one chain, up to the
 * window: under Soft-RoCE one ibv_post_send runs the emulated NIC once for
 * the whole chain, on hardware it rings the doorbell once. Signalling is
 * decided along the chain exactly as it would be send by send, so a chain
 * of n unsignaled-eligible sends still carries a signaled one every
 * quarter window.
 */

#include "confirm.h"
#include "msg.h"
#include "post.h"

static bool wants_signal(const struct post_policy *pp, const struct msg *msg)
{
	unsigned every;

	if (msg->sync || pp->always)
		return true;
	/*
	 * RPMA_F_COMPLETION_ON_ERROR: most sends make no completion. One in
	 * every quarter window is signaled so that buffers come back under
	 * load; the rest are confirmed by it (RC completes in order), or by a
	 * fence once the spool goes quiet.
	 */
	every = pp->window / 4 ? pp->window / 4 : 1;
	if (*pp->unsignaled + 1 >= every)
		return true;
	return msg->small ? pp->small_short : pp->big_short;
}

unsigned post_build(
	struct msg *head, const struct post_policy *pp, struct link_send *sends, unsigned max)
{
	static const enum link_op ops[] = {[MSG_DATA] = LINK_SEND, [MSG_EMPTY] = LINK_SEND_EMPTY};
	uint32_t next = pp->cf->next, imm;
	struct msg *msg;
	unsigned n = 0;

	for (msg = head; msg && n < max; msg = msg->next) {
		if (msg->kind == MSG_DATA && msg->len > pp->max_message)
			break;
		/* credits bound the chain: the receiver has room for this many */
		if (!confirm_imm(pp->cf, msg,
			    msg->sync || pp->prompt || (msg->small && pp->small_prompt), &next,
			    &imm))
			break;
		msg->signaled = wants_signal(pp, msg);
		*pp->unsignaled = msg->signaled ? 0 : *pp->unsignaled + 1;
		sends[n++] = (struct link_send){.op = ops[msg->kind],
			.offset = msg->offset,
			.len = msg->len,
			.wr_id = msg->seq,
			.signaled = msg->signaled,
			.imm = imm,
			.sealed = msg->kind == MSG_DATA ? &msg->sealed : NULL};
	}
	return n;
}
