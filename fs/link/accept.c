// SPDX-License-Identifier: BSD-3-Clause
/* accept.c -- the private data of a connection attempt (see accept.h) */

#include <errno.h>
#include <stdio.h>

#include "accept.h"
#include "runtime/log.h"

size_t accept_offer(
	const struct rpmafs_peer_cfg *pc, uint64_t session, uint8_t hdr[ACCEPT_OFFER_MAX])
{
	struct rpmafs_pdata mine = {.max_message = pc->max_message,
		.flags = pc->confirm != RPMAFS_CONFIRM_TRANSPORT ? RPMAFS_PDATA_F_ACK : 0,
		/* a session only with numbered messages: never beside transport confirmation */
		.session = pc->confirm != RPMAFS_CONFIRM_TRANSPORT ? session : 0};

	if (pc->key)
		return rpmafs_auth_request_encode(
			pc->key, &mine, pc->protect == RPMAFS_PROTECT_ENCRYPT, hdr);
	return rpmafs_pdata_encode(&mine, hdr);
}

/*
 * with a key: the accept must prove it (docs/design.md §11.2); 0 or -1
 * (why). Its mode is taken: encrypt when asked for (an accept without it
 * is refused by rpmafs_auth_accept_check), and also when protect = mac
 * and the receiver says encrypt (rpma-recv --protect encrypt): it asked
 * for more protection than the sender, which can give it.
 */
static int judge_auth(const struct rpmafs_peer_cfg *pc, const uint8_t *req, const void *ptr,
	size_t len, struct accept_answer *ans, char *why, size_t whylen)
{
	bool want = pc->protect == RPMAFS_PROTECT_ENCRYPT;
	const char *what = "receiver proves no key";

	if (rpmafs_auth_accept_check(pc->key, req, ptr, len, want, &ans->auth, &what)) {
		snprintf(why, whylen, "%s", what);
		return -1;
	}
	if (!want && rpmafs_auth_encrypts(ans->auth))
		log_info("%s: %s:%u encrypts (protect = encrypt on the receiver): so does this "
			 "connection",
			pc->name, pc->address, pc->port);
	return 0;
}

int accept_judge(const struct rpmafs_peer_cfg *pc, const uint8_t req[ACCEPT_OFFER_MAX],
	const void *ptr, size_t len, struct accept_answer *ans, char *why, size_t whylen)
{
	struct rpmafs_pdata hdr;
	const char *what;

	*ans = (struct accept_answer){0};
	if (pc->key && judge_auth(pc, req, ptr, len, ans, why, whylen))
		return -1;
	switch (rpmafs_pdata_parse(ptr, len, &hdr, &what)) {
	case RPMAFS_PDATA_OK:
		ans->peer_max = hdr.max_message;
		ans->credits = hdr.credits;
		/* only in answer to our offer (a receiver must not offer unasked) */
		ans->acks =
			(hdr.flags & RPMAFS_PDATA_F_ACK) && pc->confirm != RPMAFS_CONFIRM_TRANSPORT;
		break;
	case RPMAFS_PDATA_NONE:
	case RPMAFS_PDATA_FOREIGN:
		/* a plain librpma or verbs receiver: the config's limit holds */
		break;
	case RPMAFS_PDATA_MALFORMED:
		snprintf(why, whylen, "receiver's private data refused: %s", what);
		rpmafs_auth_delete(&ans->auth);
		return -1;
	}
	/* confirm = receiver is a promise the user asked for: no silent downgrade */
	if (!ans->acks && pc->confirm == RPMAFS_CONFIRM_RECEIVER) {
		snprintf(why, whylen, "confirm = receiver, but the receiver does not acknowledge");
		rpmafs_auth_delete(&ans->auth);
		return -1;
	}
	return 0;
}

bool accept_session_refused(uint64_t session, int ret, enum rpma_conn_event ev, int status)
{
	return session != 0 && ret == 0 && ev == RPMA_CONN_REJECTED &&
	       status == ACCEPT_REJ_CONSUMER;
}

void accept_tell_fallback(const struct rpmafs_peer_cfg *pc, bool *told)
{
	if (*told)
		return;
	*told = true;
	log_warn("%s: %s:%u rejected the connect request with a session: an older receiver? "
		 "The next attempt offers none (version 1), the one after it the session again "
		 "(said once)",
		pc->name, pc->address, pc->port);
}

int accept_cause(int ret, enum rpma_conn_event ev)
{
	if (ret)
		return ETIMEDOUT;
	switch (ev) {
	case RPMA_CONN_REJECTED:
		return ECONNREFUSED;
	case RPMA_CONN_UNREACHABLE:
		return EHOSTUNREACH;
	default:
		return ENOTCONN;
	}
}
