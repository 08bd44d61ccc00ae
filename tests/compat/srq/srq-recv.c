// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq-recv.c -- the receiver of the SRQ lab tests: one shared RQ of <rq_size> receives for
 * <conns> connections, all receive completions on the SRQ's receive CQ; every message is
 * checked byte for byte and in order per connection (matched by wc.qp_num), every connection
 * must end with its 0-byte message after exactly <msgs> messages.
 *
 * With a counter path (rxe's hw_counters/send_rnr_err of the receiving device) it exhausts the
 * SRQ on purpose: once every posted receive is consumed it re-posts nothing until the device
 * has sent another "receiver not ready" NAK -- a sender really is waiting -- then re-posts all
 * of them; so senders stall again and again and nothing may be lost.
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <poll.h>
#include <time.h>

#include "common-conn.h"
#include "srq-msg.h"

#define CONNS_MAX 16
#define WC_BATCH 16
#define RNR_DEADLINE_S 30
#define IDLE_DEADLINE_MS 60000

struct conn_state {
	struct rpma_conn *conn;
	uint32_t qp_num;
	uint32_t next_seq; /* the message expected next */
	bool done;	   /* its 0-byte message came */
};

static struct conn_state Conns[CONNS_MAX];
static int N_conns;

static struct conn_state *find_conn(uint32_t qp_num)
{
	for (int i = 0; i < N_conns; i++)
		if (Conns[i].qp_num == qp_num)
			return &Conns[i];
	fprintf(stderr, "a completion of qp %" PRIu32 ", which is none of ours\n", qp_num);
	return NULL;
}

static long long read_counter(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;
	if (f == NULL || fscanf(f, "%lld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* wait until the counter at path goes above since; 0, or -1 after RNR_DEADLINE_S */
static int wait_counter_above(const char *path, long long since)
{
	struct timespec start, now, pause = {0, 1000000};
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		long long v = read_counter(path);
		if (v < 0) {
			fprintf(stderr, "cannot read %s\n", path);
			return -1;
		}
		if (v > since)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > RNR_DEADLINE_S) {
			fprintf(stderr,
				"no RNR NAK within %d s although senders have messages left\n",
				RNR_DEADLINE_S);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
}

/* check one completion; the receive slot it used is free again */
static int take(const struct ibv_wc *wc, const uint8_t *buf, uint32_t msgs, uint64_t *received)
{
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV) {
		fprintf(stderr, "receive %" PRIu64 ": %s (opcode %d)\n", wc->wr_id,
			ibv_wc_status_str(wc->status), (int)wc->opcode);
		return -1;
	}
	struct conn_state *c = find_conn(wc->qp_num);
	if (c == NULL)
		return -1;
	if (c->done) {
		fprintf(stderr, "qp %" PRIu32 ": a message after its last one\n", c->qp_num);
		return -1;
	}

	const uint8_t *msg = buf + wc->wr_id * SRQ_MSG_MAX;
	if (wc->byte_len == 0) {
		if (c->next_seq != msgs) {
			fprintf(stderr,
				"qp %" PRIu32 ": the 0-byte message after %" PRIu32
				" messages of %" PRIu32 "\n",
				c->qp_num, c->next_seq, msgs);
			return -1;
		}
		c->done = true;
	} else {
		uint32_t bad = srq_msg_check(msg, wc->byte_len, c->next_seq);
		if (bad) {
			fprintf(stderr,
				"qp %" PRIu32 ": message %" PRIu32 " (%u bytes) wrong at byte %u\n",
				c->qp_num, c->next_seq, wc->byte_len, bad - 1);
			return -1;
		}
		c->next_seq++;
	}
	(*received)++;
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 6) {
		fprintf(stderr,
			"usage: %s <addr> <port> <conns> <msgs> <rq_size> [<rnr counter>]\n",
			argv[0]);
		return 2;
	}
	char *addr = argv[1];
	char *port = argv[2];
	int conns = (int)strtoul_noerror(argv[3]);
	uint32_t msgs = (uint32_t)strtoul_noerror(argv[4]);
	uint32_t rq_size = (uint32_t)strtoul_noerror(argv[5]);
	const char *rnr_path = argc >= 7 ? argv[6] : NULL;
	if (conns < 1 || conns > CONNS_MAX || rq_size < 1 || rq_size > 1024) {
		fprintf(stderr, "conns: 1 to %d, rq_size: 1 to 1024\n", CONNS_MAX);
		return 2;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *rcq = NULL;
	uint8_t *buf = malloc_aligned((size_t)rq_size * SRQ_MSG_MAX);
	uint64_t received = 0, expected = (uint64_t)conns * (msgs + 1);
	unsigned int stalls = 0;
	int ret;
	if (buf == NULL)
		return 1;

	if ((ret = server_peer_via_address(addr, &peer)))
		goto out_free;
	if ((ret = rpma_srq_cfg_new(&srq_cfg)) ||
		(ret = rpma_srq_cfg_set_rq_size(srq_cfg, rq_size)))
		goto out_peer;
	if ((ret = rpma_srq_new(peer, srq_cfg, &srq)))
		goto out_srq_cfg;
	if ((ret = rpma_srq_get_rcq(srq, &rcq)) || rcq == NULL) {
		ret = -1;
		goto out_srq;
	}
	if ((ret = rpma_conn_cfg_new(&cfg)) || (ret = rpma_conn_cfg_set_srq(cfg, srq)))
		goto out_cfg;
	if ((ret = rpma_mr_reg(peer, buf, (size_t)rq_size * SRQ_MSG_MAX, RPMA_MR_USAGE_RECV, &mr)))
		goto out_cfg;

	/* the whole pool before the first connection: slot i has wr_id i */
	for (uint32_t i = 0; i < rq_size && ret == 0; i++)
		ret = rpma_srq_recv(
			srq, mr, (size_t)i * SRQ_MSG_MAX, SRQ_MSG_MAX, (void *)(uintptr_t)i);
	if (ret)
		goto out_mr;
	uint32_t posted = rq_size;

	if ((ret = common_listen(peer, addr, port, &ep)))
		goto out_mr;

	/* senders start sending as soon as they are connected: their receives are already there */
	for (N_conns = 0; N_conns < conns; N_conns++) {
		struct conn_state *c = &Conns[N_conns];
		if ((ret = server_accept_connection(ep, cfg, NULL, &c->conn)))
			goto out_conns;
		if ((ret = rpma_conn_get_qp_num(c->conn, &c->qp_num)))
			goto out_conns;
		struct rpma_cq *own_rcq = (struct rpma_cq *)1;
		if ((ret = rpma_conn_get_rcq(c->conn, &own_rcq)) || own_rcq != NULL) {
			fprintf(stderr,
				"a connection on an SRQ with a receive CQ has a receive CQ\n");
			ret = -1;
			goto out_conns;
		}
	}
	printf("%d connections on one SRQ of %" PRIu32 " receives\n", conns, rq_size);
	fflush(stdout);

	uint32_t free_slots[1024];
	uint32_t n_free = 0;
	struct pollfd pfd = {.events = POLLIN};
	if ((ret = rpma_cq_get_fd(rcq, &pfd.fd)))
		goto out_conns;
	while (received < expected) {
		/* a deadline, so that a stuck exchange fails saying where it stood */
		if (poll(&pfd, 1, IDLE_DEADLINE_MS) != 1) {
			fprintf(stderr,
				"no completion within %d ms: %" PRIu64 " of %" PRIu64 " received\n",
				IDLE_DEADLINE_MS, received, expected);
			ret = -1;
			goto out_conns;
		}
		if ((ret = rpma_cq_wait(rcq)))
			goto out_conns;
		for (;;) {
			struct ibv_wc wc[WC_BATCH];
			int num_got = 0;
			ret = rpma_cq_get_wc(rcq, WC_BATCH, wc, &num_got);
			if (ret == RPMA_E_NO_COMPLETION)
				break;
			if (ret)
				goto out_conns;
			for (int i = 0; i < num_got; i++) {
				if (wc[i].wr_id >= rq_size || take(&wc[i], buf, msgs, &received)) {
					ret = -1;
					goto out_conns;
				}
				free_slots[n_free++] = (uint32_t)wc[i].wr_id;
				posted--;
			}
		}
		ret = 0;
		if (received == expected)
			break;

		/* exhausting: only an empty pool is refilled, once a sender has been turned away */
		if (rnr_path != NULL) {
			if (posted > 0)
				continue;
			long long before = read_counter(rnr_path);
			if (before < 0 || wait_counter_above(rnr_path, before)) {
				ret = -1;
				goto out_conns;
			}
			stalls++;
		}
		while (n_free > 0) {
			uint32_t slot = free_slots[--n_free];
			if ((ret = rpma_srq_recv(srq, mr, (size_t)slot * SRQ_MSG_MAX, SRQ_MSG_MAX,
				     (void *)(uintptr_t)slot)))
				goto out_conns;
			posted++;
		}
	}

	printf("received %" PRIu64 " messages (%d of 0 bytes) from %d connections, every byte as "
	       "sent",
		received, conns, conns);
	if (rnr_path != NULL)
		printf("; the SRQ ran dry %u times, each time a sender got RNR and waited", stalls);
	printf("\n");
	if (rnr_path != NULL && stalls == 0) {
		fprintf(stderr, "the SRQ never ran dry: the test did not test exhaustion\n");
		ret = -1;
	}

out_conns:
	for (int i = 0; i < N_conns + (N_conns < conns ? 1 : 0) && i < CONNS_MAX; i++)
		if (Conns[i].conn != NULL)
			ret |= common_disconnect_and_wait_for_conn_close(&Conns[i].conn);
	ret |= rpma_ep_shutdown(&ep);
out_mr:
	ret |= rpma_mr_dereg(&mr);
out_cfg:
	ret |= rpma_conn_cfg_delete(&cfg);
out_srq:
	ret |= rpma_srq_delete(&srq);
out_srq_cfg:
	ret |= rpma_srq_cfg_delete(&srq_cfg);
out_peer:
	ret |= rpma_peer_delete(&peer);
out_free:
	free(buf);
	return ret ? 1 : 0;
}
