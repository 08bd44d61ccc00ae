/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * accept.h -- the private data of a connection attempt (docs/design.md
 * §11): what rpmafs offers in its request, how the receiver's answer is
 * judged, and which errno a failed attempt means to a write that waited
 *
 * Pure functions of the config and the bytes; link.c's attempt uses them.
 */
#ifndef RPMAFS_ACCEPT_H
#define RPMAFS_ACCEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

#include "auth.h"
#include "config.h"
#include "pdata.h"

/* the request's private data: a version 1/2 header, or version 3 with a key (§11.2) */
#define ACCEPT_OFFER_MAX RPMAFS_AUTH_REQUEST_LEN
_Static_assert(ACCEPT_OFFER_MAX >= RPMAFS_PDATA_MAX_LEN, "an offer holds any header");

/* what the receiver's accept said */
struct accept_answer {
	uint32_t peer_max;	  /* its limit, 0: none advertised */
	unsigned credits;	  /* its receives, 0: unknown */
	bool acks;		  /* receiver confirmation in force (both offered it) */
	struct rpmafs_auth *auth; /* with a key: the connection's state (the caller owns it) */
};

/*
 * accept_offer -- the request's header for peer pc (receiver confirmation
 * unless transport) with the spool's session (0: none, a version 1
 * header); with pc->key, the version 3 request (rpmafs_auth_request_encode,
 * a fresh nonce each call: keep hdr, the accept is checked against it);
 * returns its length
 */
size_t accept_offer(
	const struct rpmafs_peer_cfg *pc, uint64_t session, uint8_t hdr[ACCEPT_OFFER_MAX]);

/*
 * accept_judge -- len bytes of the accept's private data at ptr (NULL: none)
 * for peer pc, whose request was req (accept_offer's): 0 with *ans filled,
 * or -1 when the attempt fails for good (malformed header; confirm =
 * receiver and the receiver does not acknowledge; with a key, an accept
 * that proves no key or the wrong one, rpmafs_auth_accept_check's
 * reasons: protect = encrypt and an accept without it), why saying so. An
 * accept in encrypt mode is taken with protect = mac too. With a key,
 * ans->auth is the connection's state on success (NULL on failure), in
 * the accept's mode.
 */
int accept_judge(const struct rpmafs_peer_cfg *pc, const uint8_t req[ACCEPT_OFFER_MAX],
	const void *ptr, size_t len, struct accept_answer *ans, char *why, size_t whylen);

/*
 * IB_CM_REJ_CONSUMER_DEFINED: the status of a CM REJECTED (InfiniBand,
 * RoCE) when the listening side refused the request with rdma_reject();
 * nobody listening gives another (IB_CM_REJ_INVALID_SERVICE_ID, 8) and
 * iWARP a negative errno (rpma_conn_get_event_status, librpma_ext.h)
 */
#define ACCEPT_REJ_CONSUMER 28

/* IB_CM_REJ_INVALID_SERVICE_ID: the CM of the receiver's host found no listener on the port */
#define ACCEPT_REJ_NO_LISTENER 8

/*
 * accept_session_refused -- whether an attempt that offered session (0:
 * none) and ended with ret / ev, the event's CM status being status, was
 * refused by a listening receiver: the sign of an older receiver that
 * takes only a version 1 header (docs/design.md §11). Only a consumer
 * reject of a request with a session counts: a reject because nothing
 * listens (a receiver restarting) must not cost the session.
 */
bool accept_session_refused(uint64_t session, int ret, enum rpma_conn_event ev, int status);

/*
 * accept_tell_fallback -- log that peer pc's next attempt offers no session
 * after accept_session_refused; only the first time (*told, then set), as
 * against an older receiver it happens at every reconnection
 */
void accept_tell_fallback(const struct rpmafs_peer_cfg *pc, bool *told);

/*
 * accept_cause -- the errno a write that can wait no longer reports after
 * an attempt that ended with ret / ev (docs/design.md §4.2): its strerror
 * text says what became of the connection
 */
int accept_cause(int ret, enum rpma_conn_event ev);

#endif /* RPMAFS_ACCEPT_H */
