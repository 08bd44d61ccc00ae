// SPDX-License-Identifier: BSD-3-Clause
/* peer_check.c -- judge a connecting peer (see peer_check.h) */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>

#include "peer_check.h"

enum peer_verdict peer_check(
	const struct recv_allow *allow, const struct peer_request *req, struct peer_facts *facts)
{
	return peer_check_keys(allow, req, false, facts);
}

enum peer_verdict peer_check_keys(const struct recv_allow *allow, const struct peer_request *req,
	bool keys, struct peer_facts *facts)
{
	*facts = (struct peer_facts){.kind = RPMAFS_PDATA_NONE, .why = "not looked at"};

	/* an unknown address is in no network: a list that names any refuses it */
	if (allow && recv_allow_count(allow) > 0 &&
		(!req->addr || !recv_allow_match(allow, (const struct sockaddr *)req->addr)))
		return PEER_NOT_ALLOWED;

	facts->kind = rpmafs_pdata_parse(req->pdata, req->pdata_len, &facts->pd, &facts->why);
	if (facts->kind == RPMAFS_PDATA_FOREIGN)
		return PEER_FOREIGN;
	if (facts->kind == RPMAFS_PDATA_MALFORMED)
		return PEER_MALFORMED;
	/* issue 25: a key offered only to a receiver with keys, and there required */
	if (facts->pd.auth.on && !facts->pd.auth.request) {
		facts->why = "a version 3 accept in a connect request";
		return PEER_MALFORMED;
	}
	if (!keys && facts->pd.auth.on) {
		facts->why = "sender offers a key, this receiver has none";
		return PEER_MALFORMED;
	}
	if (keys && !facts->pd.auth.on) {
		facts->why = "sender proves no key";
		return PEER_MALFORMED;
	}
	facts->acked = facts->kind == RPMAFS_PDATA_OK && (facts->pd.flags & RPMAFS_PDATA_F_ACK);
	if (facts->acked)
		facts->session = facts->pd.session;

	if (req->open >= req->max_conns)
		return PEER_TOO_MANY;
	return PEER_ACCEPT;
}

bool peer_describe(const struct sockaddr_storage *ss, char *text, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(text, size, "%s:%u", a, ntohs(in->sin_port));
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(text, size, "[%s]:%u", a, ntohs(in6->sin6_port));
		return true;
	}
	return false;
}

void peer_hex_prefix(const void *data, size_t len, char *text, size_t size)
{
	const uint8_t *p = data;
	size_t used = 0;

	if (size == 0)
		return;
	text[0] = '\0';
	for (size_t i = 0; i < len && i < 16 && used + 4 < size; i++)
		used += (size_t)snprintf(text + used, size - used, "%s%02x", i ? " " : "", p[i]);
}
