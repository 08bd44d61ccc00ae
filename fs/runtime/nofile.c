// SPDX-License-Identifier: BSD-3-Clause
/* nofile.c -- enough descriptors for every peer's connection (see nofile.h) */

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "nofile.h"

int nofile_raise(unsigned rdma_peers, struct nofile_plan *plan, char *why, size_t whylen)
{
	struct rlimit rl;

	memset(plan, 0, sizeof(*plan));
	if (whylen)
		why[0] = '\0';
	plan->need = NOFILE_BASE + (unsigned long long)NOFILE_PER_PEER * rdma_peers;
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(why, whylen, "cannot read RLIMIT_NOFILE: %m");
		return -1;
	}
	plan->before = rl.rlim_cur;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		/* a failure leaves the old limit, judged below */
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	plan->now = rl.rlim_cur;
	if (plan->now != RLIM_INFINITY && plan->now < plan->need) {
		snprintf(why, whylen,
			"RLIMIT_NOFILE (%llu descriptors, hard limit %llu) holds about %llu "
			"connections, fewer than the %u rdma peers (%u descriptors each, %llu in "
			"all): the others fail to connect with EMFILE until it is raised (ulimit -Hn, "
			"LimitNOFILE= in rpmafs@.service, nofile in /etc/security/limits.d/)",
			plan->now, (unsigned long long)rl.rlim_max,
			plan->now > NOFILE_BASE ? (plan->now - NOFILE_BASE) / NOFILE_PER_PEER : 0,
			rdma_peers, NOFILE_PER_PEER, plan->need);
		return 1;
	}
	if (plan->now != plan->before) {
		char now[48] = "no limit";

		if (plan->now != RLIM_INFINITY)
			snprintf(now, sizeof(now), "%llu descriptors", plan->now);
		snprintf(why, whylen,
			"RLIMIT_NOFILE raised from %llu to %s (%u rdma peers need about %llu)",
			plan->before, now, rdma_peers, plan->need);
	}
	return 0;
}
