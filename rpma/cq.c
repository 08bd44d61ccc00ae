// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq.c -- completion queues and waiting for their completions
 */
#include <errno.h>
#include <stdlib.h>

#include "cq.h"
#include "log.h"

struct rpma_cq {
	struct ibv_comp_channel *channel; /* own, or the connection's shared one */
	struct ibv_cq *cq;
	bool shared_channel;
};

/* internal API */

int rpma_cq_new(struct ibv_context *ibv_ctx, int cqe, struct ibv_comp_channel *shared_channel,
	struct rpma_cq **cq_ptr)
{
	struct rpma_cq *cq = malloc(sizeof(*cq));
	if (cq == NULL)
		return RPMA_E_NOMEM;

	int ret;
	struct ibv_comp_channel *channel = shared_channel;
	if (channel == NULL) {
		channel = ibv_create_comp_channel(ibv_ctx);
		if (channel == NULL) {
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "ibv_create_comp_channel()");
			ret = RPMA_E_PROVIDER;
			goto err_free;
		}
	}

	struct ibv_cq *ibv_cq = ibv_create_cq(ibv_ctx, cqe, NULL, channel, 0);
	if (ibv_cq == NULL) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "ibv_create_cq(cqe=%d)", cqe);
		ret = RPMA_E_PROVIDER;
		goto err_destroy_channel;
	}

	/* armed from the start: a completion before the first wait still raises an event */
	int err = ibv_req_notify_cq(ibv_cq, 0);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_req_notify_cq()");
		ret = RPMA_E_PROVIDER;
		goto err_destroy_cq;
	}

	cq->channel = channel;
	cq->cq = ibv_cq;
	cq->shared_channel = shared_channel != NULL;
	*cq_ptr = cq;
	return 0;

err_destroy_cq:
	(void)ibv_destroy_cq(ibv_cq);
err_destroy_channel:
	if (shared_channel == NULL)
		(void)ibv_destroy_comp_channel(channel);
err_free:
	free(cq);
	return ret;
}

int rpma_cq_delete(struct rpma_cq **cq_ptr)
{
	struct rpma_cq *cq = *cq_ptr;
	if (cq == NULL)
		return 0;

	int ret = 0;
	int err = ibv_destroy_cq(cq->cq);
	if (err) {
		/* the channel stays in use by the CQ: destroying it would fail with EBUSY */
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_destroy_cq()");
		ret = RPMA_E_PROVIDER;
	} else if (!cq->shared_channel) {
		err = ibv_destroy_comp_channel(cq->channel);
		if (err) {
			RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_destroy_comp_channel()");
			ret = RPMA_E_PROVIDER;
		}
	}

	free(cq);
	*cq_ptr = NULL;
	return ret;
}

struct ibv_cq *rpma_cq_get_ibv_cq(const struct rpma_cq *cq)
{
	return cq->cq;
}

/* public API */

int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	if (cq == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = cq->channel->fd;
	return 0;
}

int rpma_cq_take_event(struct rpma_cq *cq)
{
	if (cq == NULL)
		return RPMA_E_INVAL;

	/* on a shared channel the event may belong to the other CQ: rpma_conn_wait() sorts it */
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;

	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(cq->channel, &ev_cq, &ev_ctx)) {
		/* EAGAIN on a non-blocking fd, EINTR on a signal: nothing to report, not a fault */
		RPMA_LOG_DEBUG_WITH_ERRNO(errno, "ibv_get_cq_event()");
		return RPMA_E_NO_COMPLETION;
	}

	/* every event must be acknowledged or ibv_destroy_cq() waits for ever */
	ibv_ack_cq_events(ev_cq, 1);
	return 0;
}

int rpma_cq_arm(struct rpma_cq *cq)
{
	if (cq == NULL)
		return RPMA_E_INVAL;

	int err = ibv_req_notify_cq(cq->cq, 0);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_req_notify_cq()");
		return RPMA_E_PROVIDER;
	}

	return 0;
}

int rpma_cq_wait(struct rpma_cq *cq)
{
	int ret = rpma_cq_take_event(cq);
	if (ret)
		return ret;

	return rpma_cq_arm(cq);
}

int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got)
{
	if (cq == NULL || wc == NULL || num_entries < 1)
		return RPMA_E_INVAL;

	if (num_entries > 1 && num_entries_got == NULL)
		return RPMA_E_INVAL;

	int result = ibv_poll_cq(cq->cq, num_entries, wc);
	if (result == 0)
		return RPMA_E_NO_COMPLETION;

	if (result < 0) {
		/* providers return a negative value without errno */
		RPMA_LOG_ERROR("ibv_poll_cq(num_entries=%d) failed with %d", num_entries, result);
		return RPMA_E_PROVIDER;
	}

	if (result > num_entries) {
		RPMA_LOG_ERROR(
			"ibv_poll_cq(num_entries=%d) returned %d completions", num_entries, result);
		return RPMA_E_UNKNOWN;
	}

	if (num_entries_got != NULL)
		*num_entries_got = result;

	return 0;
}
