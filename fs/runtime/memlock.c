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

int memlock_plan(unsigned slots, bool slots_set, unsigned default_slots, unsigned min_slots,
	unsigned nworkers, size_t buf_size, unsigned rdma_peers, unsigned long long inbox_bytes,
	struct memlock_plan *plan, char *why, size_t whylen)
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
	plan->slots = slots_set ? slots : default_slots;
	if (!limit)
		return 0;

	fit = limit > reserve ? (limit - reserve) / buf_size : 0;
	fit = fit > nworkers ? fit - nworkers : 0;
	if (!slots_set && fit >= min_slots) {
		if (fit < default_slots) {
			plan->slots = (unsigned)fit;
			plan->sized = true;
		}
		return 0;
	}
	need = (unsigned long long)(plan->slots + nworkers) * buf_size + reserve;
	if (slots_set && need <= limit)
		return 0;

	if (!slots_set)
		plan->slots = min_slots;
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
