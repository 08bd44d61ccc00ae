/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memlock.h -- fitting the registered request pool into RLIMIT_MEMLOCK
 *
 * Registered memory is pinned and counts against RLIMIT_MEMLOCK, which
 * Debian sets to 8 MiB (soft and hard) for an ordinary user. The pool is
 * (slots + workers) buffers of 1 MiB + 4 KiB and the small slots (256 of
 * 4 KiB by default: a small write is copied into one, pool.h), plus the
 * inbox's receive buffers when the mount listens. When the config leaves
 * `slots` unset the big buffers are sized to what the limit allows once
 * the small slots have their room; when it sets it, the small slots get
 * what the big buffers leave (up to the default count), and when the big
 * buffers alone do not fit, the error gives exact figures and the
 * remedies an ordinary user can apply (docs/design.md §4.5).
 */
#ifndef RPMAFS_MEMLOCK_H
#define RPMAFS_MEMLOCK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What is kept free of the limit for the RDMA provider: hardware providers
 * (mlx5, for one) pin each queue pair's and completion queue's buffers
 * against the same limit. An estimate; Soft-RoCE pins none of it.
 */
#define MEMLOCK_RESERVE_BASE (256u << 10)
#define MEMLOCK_RESERVE_PER_PEER (32u << 10)

struct memlock_plan {
	unsigned slots;		    /* the slots to use */
	unsigned small;		    /* the small slots to use */
	bool sized;		    /* slots was chosen to fit the limit */
	unsigned long long limit;   /* RLIMIT_MEMLOCK in bytes, 0: no limit applies */
	unsigned long long reserve; /* kept free for the provider */
	unsigned long long inbox;   /* the inbox's receive buffers */
};

/*
 * memlock_fit -- the sizing rule alone, for a limit of limit bytes (0: none
 * applies) of which keep bytes are kept for the provider and the inbox:
 * fills plan->slots and plan->small (and sized). small_default small slots
 * of small_size bytes are wanted. Returns 0, or -1 when not even min_slots
 * (slots_set: slots) big buffers fit; *fit is then how many do.
 */
int memlock_fit(unsigned long long limit, unsigned long long keep, unsigned slots, bool slots_set,
	unsigned default_slots, unsigned min_slots, unsigned nworkers, size_t buf_size,
	unsigned small_default, size_t small_size, struct memlock_plan *plan,
	unsigned long long *fit);

/*
 * memlock_plan -- decide the pool for nworkers workers and buffers of
 * buf_size bytes, and small_default small slots of small_size bytes. slots is the configured count; slots_set says whether the
 * config set it; default_slots is the count when nothing limits it;
 * rdma_peers is the number of peers that will make connections; inbox_bytes
 * is the inbox's registered receive memory (inbox_slots x inbox_max_message,
 * 0 without an inbox), which comes off the limit before the pool is sized.
 * Returns 0 with plan filled, or -1 with the reason, figures and remedies in
 * why.
 */
int memlock_plan(unsigned slots, bool slots_set, unsigned default_slots, unsigned min_slots,
	unsigned nworkers, size_t buf_size, unsigned small_default, size_t small_size,
	unsigned rdma_peers, unsigned long long inbox_bytes, struct memlock_plan *plan, char *why,
	size_t whylen);

/*
 * memlock_explain -- after a failed registration of bytes: what
 * RLIMIT_MEMLOCK allows and how to raise it.
 */
void memlock_explain(size_t bytes, char *why, size_t whylen);

#endif /* RPMAFS_MEMLOCK_H */
