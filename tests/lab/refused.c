// SPDX-License-Identifier: BSD-3-Clause
/*
 * refused.c -- connecting to a port nobody listens on gives RPMA_CONN_REJECTED
 *
 * The receiver's device answers the connection request with a reject
 * (IB_CM_REJ_INVALID_SERVICE_ID): the sender's next event is
 * RPMA_CONN_REJECTED, within a second or so.
 */

#include <stdio.h>

#include "lab.h"

#define PORT "7478" /* nobody listens here */

int main(void)
{
	struct lab_env env;
	struct rpma_peer *peer;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	double t0;

	lab_env_get(&env);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	CHECK_RPMA(rpma_conn_req_new(peer, env.b, PORT, NULL, &req));
	t0 = lab_now();
	CHECK_RPMA(rpma_conn_req_connect(&req, NULL, &conn));
	lab_expect_event(conn, RPMA_CONN_REJECTED, LAB_SAFETY_MS);
	printf("sender: RPMA_CONN_REJECTED after %.3f s\n", lab_now() - t0);
	CHECK_RPMA(rpma_conn_delete(&conn));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
