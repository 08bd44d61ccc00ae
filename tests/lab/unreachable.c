// SPDX-License-Identifier: BSD-3-Clause
/*
 * unreachable.c -- a peer nobody answers for gives RPMA_CONN_UNREACHABLE
 *
 * LAB_UNREACHABLE resolves (the lab gives it a static neighbour on a second
 * link with an rxe device at the near end), so rpma_conn_req_new succeeds
 * and the connection request goes out, but nothing answers it.
 *
 *   unreachable CMD   run CMD (which cuts the near end of that link) half a
 *                     second into the connection attempt: the next resend
 *                     of the request fails locally and the event comes
 *                     within ~7 s (requests are resent every ~6.4 s)
 *   unreachable       let the connection manager give up by itself: 16
 *                     requests, ~100 s
 *
 * unreachable.sh runs the first form and restores the link afterwards.
 */

#include <stdio.h>
#include <stdlib.h>

#include "lab.h"

#define PORT "7479"

int main(int argc, char **argv)
{
	struct lab_env env;
	const char *addr = getenv("LAB_UNREACHABLE");
	struct rpma_peer *peer;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event event;
	double t0;

	lab_env_get(&env);
	CHECK(addr != NULL, "LAB_UNREACHABLE is not set: the lab is too old");
	peer = lab_peer_new(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, NULL);
	CHECK_RPMA(rpma_conn_req_new(peer, addr, PORT, NULL, &req));
	t0 = lab_now();
	CHECK_RPMA(rpma_conn_req_connect(&req, NULL, &conn));
	if (argc > 1) {
		CHECK(lab_next_event(conn, &event, 500) == RPMA_E_NO_EVENT,
			"event %s before the link was cut", rpma_utils_conn_event_2str(event));
		CHECK(system(argv[1]) == 0, "'%s' failed", argv[1]);
		printf("sender: ran '%s' at %.3f s\n", argv[1], lab_now() - t0);
	}
	/*
	 * Not a safety net: with the link cut the event comes within seconds,
	 * without it only by the CM's own timeout, ~100 s later. 60 s tells
	 * the two apart on any plausible load; the CM's own case gets 180 s.
	 */
	lab_expect_event(conn, RPMA_CONN_UNREACHABLE, argc > 1 ? 60000 : 180000);
	printf("sender: RPMA_CONN_UNREACHABLE after %.3f s\n", lab_now() - t0);
	CHECK_RPMA(rpma_conn_delete(&conn));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
