// SPDX-License-Identifier: BSD-3-Clause
/* srq.c -- the shared receive queue and its buffers */

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fd.h"
#ifdef RPMA_HAVE_EXT
#include <librpma_ext.h>
#endif

#include "srq.h"

static void memlock_hint(size_t size, int ret)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		size > rl.rlim_cur)
		fprintf(stderr,
			"rpma-recv: cannot register %zu bytes of receive buffers: RLIMIT_MEMLOCK "
			"is %llu bytes; raise it (ulimit -l, LimitMEMLOCK= in a systemd unit) or "
			"lower --slots or --max-message\n",
			size, (unsigned long long)rl.rlim_cur);
	else
		fprintf(stderr, "rpma-recv: cannot register %zu bytes of receive buffers: %s\n",
			size, rpma_err_2str(ret));
}

int recv_srq_new(
	struct rpma_peer *peer, uint32_t slots, uint32_t slot_size, struct recv_srq **srq_ptr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rpma_srq_cfg *cfg = NULL;
	struct recv_srq *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->rcq_fd = -1;
	s->slots = slots;
	s->slot_size = slot_size;
	s->buf_size = (size_t)slots * slot_size;
	if (posix_memalign((void **)&s->buf, page > 0 ? (size_t)page : 4096, s->buf_size)) {
		s->buf = NULL;
		goto nomem;
	}
	ret = rpma_mr_reg(peer, s->buf, s->buf_size, RPMA_MR_USAGE_RECV, &s->mr);
	if (ret) {
		memlock_hint(s->buf_size, ret);
		goto err;
	}

	/* one CQ entry per slot: nothing else completes there */
	ret = rpma_srq_cfg_new(&cfg);
	if (!ret)
		ret = rpma_srq_cfg_set_rq_size(cfg, slots);
	if (!ret)
		ret = rpma_srq_cfg_set_rcq_size(cfg, slots);
	if (!ret)
		ret = rpma_srq_new(peer, cfg, &s->srq);
	(void)rpma_srq_cfg_delete(&cfg);
	if (!ret)
		ret = rpma_srq_get_rcq(s->srq, &s->rcq);
	if (!ret && !s->rcq)
		ret = RPMA_E_UNKNOWN;
	if (!ret)
		ret = rpma_cq_get_fd(s->rcq, &s->rcq_fd);
	if (ret) {
		fprintf(stderr,
			"rpma-recv: cannot make a shared receive queue of %u receives: %s\n", slots,
			rpma_err_2str(ret));
		goto err;
	}
	if (fd_set_nonblock(s->rcq_fd)) {
		perror("rpma-recv: fcntl on the shared receive CQ");
		goto err;
	}
	for (uint32_t i = 0; i < slots; i++) {
		ret = recv_srq_post(s, i);
		if (ret) {
			fprintf(stderr,
				"rpma-recv: posting receive %u of %u on the shared receive queue: "
				"%s\n",
				i + 1, slots, rpma_err_2str(ret));
			goto err;
		}
	}
	*srq_ptr = s;
	return 0;

nomem:
	fprintf(stderr, "rpma-recv: cannot allocate %zu bytes of receive buffers\n",
		(size_t)slots * slot_size);
err:
	recv_srq_delete(&s);
	return -1;
}

void recv_srq_delete(struct recv_srq **srq_ptr)
{
	struct recv_srq *s = *srq_ptr;
	int ret;

	if (!s)
		return;
	if (s->srq) {
		ret = rpma_srq_delete(&s->srq);
		if (ret)
			fprintf(stderr, "rpma-recv: deleting the shared receive queue: %s\n",
				rpma_err_2str(ret));
	}
	if (s->mr) {
		ret = rpma_mr_dereg(&s->mr);
		if (ret)
			fprintf(stderr, "rpma-recv: deregistering the receive buffers: %s\n",
				rpma_err_2str(ret));
	}
	free(s->buf);
	free(s);
	*srq_ptr = NULL;
}

int recv_srq_post(struct recv_srq *s, uint32_t slot)
{
	int ret = rpma_srq_recv(s->srq, s->mr, (size_t)slot * s->slot_size, s->slot_size,
		(const void *)(uintptr_t)slot);

	if (!ret)
		s->posted++;
	return ret;
}

int recv_srq_post_slots(struct recv_srq *s, const uint32_t *slots, unsigned n, uint32_t *failed)
{
#ifdef RPMA_HAVE_EXT
	struct rpma_recv_desc d[RPMA_RECV_BATCH_MAX];
	unsigned posted = 0;
	int ret;

	for (unsigned done = 0; done < n; done += posted) {
		unsigned k = n - done < RPMA_RECV_BATCH_MAX ? n - done : RPMA_RECV_BATCH_MAX;

		for (unsigned i = 0; i < k; i++)
			d[i] = (struct rpma_recv_desc){s->mr,
				(size_t)slots[done + i] * s->slot_size, s->slot_size,
				(const void *)(uintptr_t)slots[done + i]};
		ret = rpma_srq_recv_batch(s->srq, d, k, &posted);
		s->posted += posted;
		if (ret) {
			*failed = slots[done + posted];
			return ret;
		}
	}
	return 0;
#else
	for (unsigned i = 0; i < n; i++) {
		int ret = recv_srq_post(s, slots[i]);

		if (ret) {
			*failed = slots[i];
			return ret;
		}
	}
	return 0;
#endif
}
