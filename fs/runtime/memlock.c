// SPDX-License-Identifier: BSD-3-Clause
/* memlock.c -- fitting the registered request pool into RLIMIT_MEMLOCK */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "memlock.h"

/* CAP_IPC_LOCK (root has it) lifts RLIMIT_MEMLOCK for registrations */
static bool can_lock_any(void)
{
	char line[256];
	bool cap = false;
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cap = (eff >> 14) & 1; /* CAP_IPC_LOCK */
			break;
		}
	}
	fclose(f);
	return cap;
}

/* the limit that applies to this process, 0 when none does */
static unsigned long long limit_in_force(struct rlimit *rl)
{
	if (getrlimit(RLIMIT_MEMLOCK, rl) != 0 || rl->rlim_cur == RLIM_INFINITY || can_lock_any())
		return 0;
	return rl->rlim_cur;
}

/* the remedies, for a pool of need bytes (and reserve more) */
static void remedies(
	unsigned long long need, const struct rlimit *rl, bool slots_set, char *buf, size_t len)
{
	unsigned long long kib = (need + 1023) / 1024;
	const char *user = getenv("USER");
	int n = 0;

	if (slots_set)
		n = snprintf(buf, len,
			"fewer 'slots' in [rpmafs], or leave it unset to size the "
			"pool to the limit; or");
	if (rl->rlim_max == RLIM_INFINITY || rl->rlim_max >= need)
		n += snprintf(buf + n, len - (size_t)n,
			" raise the soft limit (ulimit -l %llu), or", kib);
	snprintf(buf + n, len - (size_t)n,
		" let the user lock %llu KiB: add the line \"%s - memlock %llu\" to "
		"/etc/security/limits.d/rpmafs.conf and log in again; or run the mount as a "
		"service with LimitMEMLOCK=%lluK (rpmafs@.service)",
		kib, user && *user ? user : "USER", kib, kib);
}

/* what is left of limit after keep and the workers' buffers (0: nothing) */
static unsigned long long room_after(
	unsigned long long limit, unsigned long long keep, unsigned nworkers, size_t buf_size)
{
	unsigned long long workers = (unsigned long long)nworkers * buf_size;

	return limit > keep + workers ? limit - keep - workers : 0;
}

int memlock_fit(unsigned long long limit, unsigned long long keep, unsigned slots, bool slots_set,
	unsigned default_slots, unsigned min_slots, unsigned nworkers, size_t buf_size,
	unsigned small_default, size_t small_size, struct memlock_plan *plan,
	unsigned long long *fit_ptr)
{
	unsigned long long room, fit, smalls, big_room;

	plan->slots = slots_set ? slots : default_slots;
	plan->small = small_default;
	plan->sized = false;
	*fit_ptr = 0;
	if (!limit)
		return 0;
	room = room_after(limit, keep, nworkers, buf_size);
	fit = room / buf_size;
	*fit_ptr = fit;
	if (slots_set) {
		/* the big buffers as asked; the small slots get what they leave */
		if (fit < slots)
			return -1;
	} else {
		if (fit < min_slots)
			return -1;
		/* the small slots first, then as many big buffers as fit (at least min_slots) */
		smalls = (unsigned long long)small_default * small_size;
		big_room = room > smalls ? (room - smalls) / buf_size : 0;
		if (big_room < min_slots)
			big_room = min_slots;
		if (big_room < default_slots) {
			plan->slots = (unsigned)big_room;
			plan->sized = true;
		}
	}
	smalls = small_size ? (room - (unsigned long long)plan->slots * buf_size) / small_size : 0;
	if (smalls < plan->small)
		plan->small = (unsigned)smalls;
	return 0;
}

int memlock_plan(unsigned slots, bool slots_set, unsigned default_slots, unsigned min_slots,
	unsigned nworkers, size_t buf_size, unsigned small_default, size_t small_size,
	unsigned rdma_peers, unsigned long long inbox_bytes, struct memlock_plan *plan, char *why,
	size_t whylen)
{
	unsigned long long limit, reserve, need, fit;
	struct rlimit rl;
	char fix[512], most[64];

	memset(plan, 0, sizeof(*plan));
	limit = limit_in_force(&rl);
	reserve = rdma_peers || inbox_bytes
			  ? MEMLOCK_RESERVE_BASE +
				    (unsigned long long)MEMLOCK_RESERVE_PER_PEER * rdma_peers
			  : 0;
	plan->limit = limit;
	plan->reserve = reserve;
	plan->inbox = inbox_bytes;
	/* the inbox is registered whole; only the send pool adapts to what is left */
	reserve += inbox_bytes;
	if (!memlock_fit(limit, reserve, slots, slots_set, default_slots, min_slots, nworkers,
		    buf_size, small_default, small_size, plan, &fit))
		return 0;

	if (!slots_set)
		plan->slots = min_slots;
	plan->small = 0;
	need = (unsigned long long)(plan->slots + nworkers) * buf_size + reserve;
	remedies(need, &rl, slots_set, fix, sizeof(fix));
	if (fit >= min_slots)
		snprintf(most, sizeof(most), "; at most %llu slots fit", fit);
	else
		snprintf(most, sizeof(most), "; not even %u slots fit", min_slots);
	snprintf(why, whylen,
		"the registered pool does not fit in RLIMIT_MEMLOCK: (%u slots + %u workers) x "
		"%zu bytes + %llu bytes of inbox receive buffers + %llu bytes kept for the RDMA "
		"provider = %llu bytes (%llu KiB), and RLIMIT_MEMLOCK allows %llu bytes (%llu "
		"KiB)%s. Remedies: %s%s",
		plan->slots, nworkers, buf_size, inbox_bytes, reserve - inbox_bytes, need,
		(need + 1023) / 1024, limit, limit / 1024, most,
		inbox_bytes ? "fewer inbox_slots or a smaller inbox_max_message; or " : "", fix);
	return -1;
}

void memlock_explain(size_t bytes, char *why, size_t whylen)
{
	unsigned long long limit;
	struct rlimit rl;
	char fix[512];

	limit = limit_in_force(&rl);
	if (!limit) {
		snprintf(why, whylen, "cannot register %zu bytes of request buffers", bytes);
		return;
	}
	remedies(bytes + MEMLOCK_RESERVE_BASE, &rl, true, fix, sizeof(fix));
	snprintf(why, whylen,
		"cannot register %zu bytes (%zu KiB) of request buffers: RLIMIT_MEMLOCK allows "
		"%llu bytes (%llu KiB). %s",
		bytes, (bytes + 1023) / 1024, limit, limit / 1024, fix);
}
