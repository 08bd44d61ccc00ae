// SPDX-License-Identifier: BSD-3-Clause
/*
 * compile-check.c -- a messaging ping-pong written only against the public librpma.h
 *
 * The build compiles it with nothing but -I rpma/include and links it with librpma.a,
 * -libverbs and -lrdmacm, so any drift of the public header from librpma's messaging API
 * breaks the build. It also runs, on a real or Soft-RoCE link:
 *
 *	compile-check server ADDR PORT          answers pings until the client sends 0 bytes
 *	compile-check client ADDR PORT [ROUNDS] sends ROUNDS pings (default 10)
 *
 * Each round the client sends a 64-bit counter unsignaled (RPMA_F_COMPLETION_ON_ERROR),
 * fences it with a 0-byte rpma_write() (RPMA_F_COMPLETION_ALWAYS), and waits for the fence's
 * completion and for the server's reply, counter + 1. The server keeps its receives on a
 * separate receive CQ. Both sides exchange private data when connecting. A 0-byte message
 * (rpma_send(conn, NULL, 0, 0, ...)) ends the session; exit status 0 means every check held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#define CLIENT_HELLO "rpma ping-pong client"
#define SERVER_HELLO "rpma ping-pong server"
#define QUEUE_SIZE 16

/* what one side of the ping-pong holds */
struct side {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_mr_local *send_mr;
	struct rpma_mr_local *recv_mr;
	uint64_t send_buf;
	uint64_t recv_buf;
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "compile-check: %s: %s\n", what, rpma_err_2str(ret));
	return -1;
}

/*
 * reap -- take completions from cq (waiting on its channel when empty) until one with opcode
 * arrives; any failed completion ends the program's hope
 */
static int reap(struct rpma_cq *cq, enum ibv_wc_opcode opcode, struct ibv_wc *out)
{
	for (;;) {
		struct ibv_wc wc;
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION)
				return fail("rpma_cq_wait", ret);
			continue;
		}
		if (ret)
			return fail("rpma_cq_get_wc", ret);
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "compile-check: completion %" PRIu64 " failed: %s\n",
				wc.wr_id, ibv_wc_status_str(wc.status));
			return -1;
		}
		if (wc.opcode == opcode) {
			*out = wc;
			return 0;
		}
		fprintf(stderr, "compile-check: unexpected completion opcode %d\n", wc.opcode);
		return -1;
	}
}

static int wait_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);
	if (ret)
		return fail("rpma_conn_next_event", ret);
	if (event != expected) {
		fprintf(stderr, "compile-check: got \"%s\", wanted \"%s\"\n",
			rpma_utils_conn_event_2str(event), rpma_utils_conn_event_2str(expected));
		return -1;
	}
	return 0;
}

static int check_hello(const struct rpma_conn_private_data *pdata, const char *hello)
{
	/* the transport may pad: compare the prefix and nothing more */
	if (pdata->ptr == NULL || pdata->len < strlen(hello) + 1 ||
		memcmp(pdata->ptr, hello, strlen(hello) + 1) != 0) {
		fprintf(stderr, "compile-check: private data is not \"%s\"\n", hello);
		return -1;
	}
	return 0;
}

static int side_setup(struct side *s, const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx;
	int ret = rpma_utils_get_ibv_context(addr, type, &ctx);
	if (ret)
		return fail("rpma_utils_get_ibv_context", ret);
	ret = rpma_peer_new(ctx, &s->peer);
	if (ret)
		return fail("rpma_peer_new", ret);
	ret = rpma_mr_reg(
		s->peer, &s->send_buf, sizeof(s->send_buf), RPMA_MR_USAGE_SEND, &s->send_mr);
	if (ret)
		return fail("rpma_mr_reg(send)", ret);
	ret = rpma_mr_reg(
		s->peer, &s->recv_buf, sizeof(s->recv_buf), RPMA_MR_USAGE_RECV, &s->recv_mr);
	if (ret)
		return fail("rpma_mr_reg(recv)", ret);
	return 0;
}

static void side_teardown(struct side *s)
{
	(void)rpma_conn_delete(&s->conn);
	(void)rpma_mr_dereg(&s->recv_mr);
	(void)rpma_mr_dereg(&s->send_mr);
	(void)rpma_peer_delete(&s->peer);
}

static int run_client(struct side *s, const char *addr, const char *port, uint64_t rounds)
{
	struct rpma_conn_cfg *cfg;
	int ret = rpma_conn_cfg_new(&cfg);
	if (ret)
		return fail("rpma_conn_cfg_new", ret);
	(void)rpma_conn_cfg_set_sq_size(cfg, QUEUE_SIZE);
	(void)rpma_conn_cfg_set_rq_size(cfg, QUEUE_SIZE);
	(void)rpma_conn_cfg_set_cq_size(cfg, 2 * QUEUE_SIZE);

	struct rpma_conn_req *req;
	ret = rpma_conn_req_new(s->peer, addr, port, cfg, &req);
	(void)rpma_conn_cfg_delete(&cfg);
	if (ret)
		return fail("rpma_conn_req_new", ret);

	/* the first reply may come before the connection is seen as established */
	ret = rpma_conn_req_recv(req, s->recv_mr, 0, sizeof(s->recv_buf), NULL);
	if (ret) {
		(void)rpma_conn_req_delete(&req);
		return fail("rpma_conn_req_recv", ret);
	}

	struct rpma_conn_private_data hello = {CLIENT_HELLO, sizeof(CLIENT_HELLO)};
	ret = rpma_conn_req_connect(&req, &hello, &s->conn);
	if (ret)
		return fail("rpma_conn_req_connect", ret);
	if (wait_event(s->conn, RPMA_CONN_ESTABLISHED))
		return -1;

	struct rpma_conn_private_data pdata;
	(void)rpma_conn_get_private_data(s->conn, &pdata);
	if (check_hello(&pdata, SERVER_HELLO))
		return -1;

	struct rpma_cq *cq;
	(void)rpma_conn_get_cq(s->conn, &cq);

	for (uint64_t i = 0; i < rounds; i++) {
		s->send_buf = i;
		ret = rpma_send(s->conn, s->send_mr, 0, sizeof(s->send_buf),
			RPMA_F_COMPLETION_ON_ERROR, (void *)(uintptr_t)i);
		if (ret)
			return fail("rpma_send", ret);
		ret = rpma_write(s->conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)i);
		if (ret)
			return fail("rpma_write (0-byte fence)", ret);

		/* one CQ: the fence and the reply may complete in either order */
		bool fenced = false, replied = false;
		while (!fenced || !replied) {
			struct ibv_wc wc;
			int got = 0;
			ret = rpma_cq_get_wc(cq, 1, &wc, &got);
			if (ret == RPMA_E_NO_COMPLETION) {
				ret = rpma_cq_wait(cq);
				if (ret && ret != RPMA_E_NO_COMPLETION)
					return fail("rpma_cq_wait", ret);
				continue;
			}
			if (ret)
				return fail("rpma_cq_get_wc", ret);
			if (wc.status != IBV_WC_SUCCESS) {
				fprintf(stderr, "compile-check: completion failed: %s\n",
					ibv_wc_status_str(wc.status));
				return -1;
			}
			if (wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == i) {
				fenced = true;
			} else if (wc.opcode == IBV_WC_RECV) {
				if (wc.byte_len != sizeof(s->recv_buf) || s->recv_buf != i + 1) {
					fprintf(stderr,
						"compile-check: round %" PRIu64 " got %" PRIu64
						" (%u bytes)\n",
						i, s->recv_buf, wc.byte_len);
					return -1;
				}
				replied = true;
				ret = rpma_recv(s->conn, s->recv_mr, 0, sizeof(s->recv_buf), NULL);
				if (ret)
					return fail("rpma_recv", ret);
			} else {
				fprintf(stderr, "compile-check: unexpected opcode %d\n", wc.opcode);
				return -1;
			}
		}
	}

	/* the 0-byte message: no buffer at all */
	ret = rpma_send(s->conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret)
		return fail("rpma_send (0 bytes)", ret);
	struct ibv_wc wc;
	if (reap(cq, IBV_WC_SEND, &wc))
		return -1;

	ret = rpma_conn_disconnect(s->conn);
	if (ret)
		return fail("rpma_conn_disconnect", ret);
	if (wait_event(s->conn, RPMA_CONN_CLOSED))
		return -1;

	printf("compile-check client: %" PRIu64 " rounds done\n", rounds);
	return 0;
}

static int run_server(struct side *s, const char *addr, const char *port)
{
	struct rpma_ep *ep;
	int ret = rpma_ep_listen(s->peer, addr, port, &ep);
	if (ret)
		return fail("rpma_ep_listen", ret);

	struct rpma_conn_cfg *cfg;
	ret = rpma_conn_cfg_new(&cfg);
	if (ret) {
		(void)rpma_ep_shutdown(&ep);
		return fail("rpma_conn_cfg_new", ret);
	}
	(void)rpma_conn_cfg_set_sq_size(cfg, QUEUE_SIZE);
	(void)rpma_conn_cfg_set_rq_size(cfg, QUEUE_SIZE);
	(void)rpma_conn_cfg_set_cq_size(cfg, QUEUE_SIZE);
	(void)rpma_conn_cfg_set_rcq_size(cfg, QUEUE_SIZE);

	struct rpma_conn_req *req;
	ret = rpma_ep_next_conn_req(ep, cfg, &req);
	(void)rpma_conn_cfg_delete(&cfg);
	(void)rpma_ep_shutdown(&ep);
	if (ret)
		return fail("rpma_ep_next_conn_req", ret);

	struct rpma_conn_private_data pdata;
	(void)rpma_conn_req_get_private_data(req, &pdata);
	if (check_hello(&pdata, CLIENT_HELLO)) {
		(void)rpma_conn_req_delete(&req);
		return -1;
	}

	ret = rpma_conn_req_recv(req, s->recv_mr, 0, sizeof(s->recv_buf), NULL);
	if (ret) {
		(void)rpma_conn_req_delete(&req);
		return fail("rpma_conn_req_recv", ret);
	}

	struct rpma_conn_private_data hello = {SERVER_HELLO, sizeof(SERVER_HELLO)};
	ret = rpma_conn_req_connect(&req, &hello, &s->conn);
	if (ret)
		return fail("rpma_conn_req_connect", ret);
	if (wait_event(s->conn, RPMA_CONN_ESTABLISHED))
		return -1;

	struct rpma_cq *cq, *rcq;
	(void)rpma_conn_get_cq(s->conn, &cq);
	(void)rpma_conn_get_rcq(s->conn, &rcq);
	if (rcq == NULL) {
		fprintf(stderr, "compile-check: no receive CQ\n");
		return -1;
	}

	uint64_t pings = 0;
	for (;;) {
		struct ibv_wc wc;
		if (reap(rcq, IBV_WC_RECV, &wc))
			return -1;
		if (wc.byte_len == 0)
			break;

		s->send_buf = s->recv_buf + 1;
		ret = rpma_recv(s->conn, s->recv_mr, 0, sizeof(s->recv_buf), NULL);
		if (ret)
			return fail("rpma_recv", ret);
		ret = rpma_send(s->conn, s->send_mr, 0, sizeof(s->send_buf),
			RPMA_F_COMPLETION_ALWAYS, NULL);
		if (ret)
			return fail("rpma_send", ret);
		if (reap(cq, IBV_WC_SEND, &wc))
			return -1;
		pings++;
	}

	if (wait_event(s->conn, RPMA_CONN_CLOSED))
		return -1;
	ret = rpma_conn_disconnect(s->conn);
	if (ret)
		return fail("rpma_conn_disconnect", ret);

	printf("compile-check server: %" PRIu64 " pings answered, 0-byte message received\n",
		pings);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: %s server|client ADDR PORT [ROUNDS]\n", argv[0]);
		return 2;
	}

	/* library messages to stderr as well as syslog */
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);

	bool server = strcmp(argv[1], "server") == 0;
	uint64_t rounds = argc > 4 ? strtoull(argv[4], NULL, 10) : 10;
	struct side s = {0};

	int ret = side_setup(
		&s, argv[2], server ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE);
	if (ret == 0)
		ret = server ? run_server(&s, argv[2], argv[3])
			     : run_client(&s, argv[2], argv[3], rounds);

	side_teardown(&s);
	return ret ? 1 : 0;
}
