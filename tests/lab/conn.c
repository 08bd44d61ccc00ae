// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- connect and disconnect over the lab's link
 *
 * The receiver listens on LAB_B (device LAB_DEV_B); the sender connects to
 * it from LAB_DEV_A. Both see RPMA_CONN_ESTABLISHED, the sender
 * disconnects, both see RPMA_CONN_CLOSED. The packet counters of both
 * devices move: the connection really crossed the veth.
 *
 * The sender disconnects once the receiver says it saw ESTABLISHED: on a
 * loaded machine a DREQ sent at once can overtake the CM's RTU (a
 * retransmitted MAD), and the receiver's CM then reports only the
 * disconnect, which is right of it.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"

#define PORT "7471"

static struct lab_env env;

/* the receiver writes one byte into [1] when it has seen ESTABLISHED */
static int established[2];

static unsigned long long counter(const char *dev, const char *name)
{
	char path[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(path, "r");
	CHECK(f != NULL, "cannot open %s", path);
	CHECK(fscanf(f, "%llu", &v) == 1, "cannot read %s", path);
	fclose(f);
	return v;
}

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	conn = lab_accept(&req);
	printf("receiver: ESTABLISHED\n");
	CHECK(write(established[1], "e", 1) == 1, "cannot tell the sender: %s", strerror(errno));
	lab_closed(&conn, LAB_SAFETY_MS);
	printf("receiver: CLOSED\n");
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_peer_delete(&peer));
}

int main(void)
{
	unsigned long long sent_a, rcvd_b;
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	uint32_t qp_num;
	pid_t pid;

	lab_env_get(&env);
	sent_a = counter(env.dev_a, "sent_pkts");
	rcvd_b = counter(env.dev_b, "rcvd_pkts");
	CHECK(pipe(established) == 0, "pipe: %s", strerror(errno));
	pid = lab_fork(receiver, NULL);
	close(established[1]);

	/* the device that reaches LAB_B must be the other end of the link */
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	conn = lab_connect(peer, env.b, PORT, NULL);
	CHECK_RPMA(rpma_conn_get_qp_num(conn, &qp_num));
	printf("sender: ESTABLISHED, qp %u\n", qp_num);
	{
		struct pollfd p = {established[0], POLLIN, 0};
		char c;

		CHECK(poll(&p, 1, LAB_SAFETY_MS) == 1, "the receiver did not see ESTABLISHED");
		CHECK(read(established[0], &c, 1) == 1, "the receiver died before ESTABLISHED");
	}
	lab_close(&conn);
	printf("sender: CLOSED\n");
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_peer_delete(&peer));

	CHECK(counter(env.dev_a, "sent_pkts") > sent_a, "%s sent no packet", env.dev_a);
	CHECK(counter(env.dev_b, "rcvd_pkts") > rcvd_b, "%s received no packet", env.dev_b);
	printf("%s sent %llu packets, %s received %llu\n", env.dev_a,
		counter(env.dev_a, "sent_pkts") - sent_a, env.dev_b,
		counter(env.dev_b, "rcvd_pkts") - rcvd_b);
	return 0;
}
