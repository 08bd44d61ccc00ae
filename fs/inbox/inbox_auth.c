// SPDX-License-Identifier: BSD-3-Clause
/* inbox_auth.c -- the inbox's keys, its replay window, its checks (see inbox_auth.h) */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "inbox_auth.h"

struct inbox_auth {
	const struct rpmafs_keyring *ring;
	const char *dir;
	bool encrypt;
	struct rpmafs_nonces *nonces;
};

int inbox_auth_new(
	const struct rpmafs_keyring *ring, const char *dir, bool encrypt, struct inbox_auth **ia)
{
	struct inbox_auth *a = calloc(1, sizeof(*a));

	if (!a || rpmafs_nonces_new(RPMAFS_AUTH_NONCES_DEFAULT, &a->nonces)) {
		free(a);
		return -ENOMEM;
	}
	a->ring = ring;
	a->dir = dir;
	a->encrypt = encrypt;
	*ia = a;
	return 0;
}

void inbox_auth_delete(struct inbox_auth **ia)
{
	if (!*ia)
		return;
	rpmafs_nonces_delete(&(*ia)->nonces);
	free(*ia);
	*ia = NULL;
}

const struct rpmafs_key *inbox_auth_judge(
	struct inbox_auth *ia, const void *pdata, size_t len, char *why, size_t whylen)
{
	const struct rpmafs_key *key;
	struct rpmafs_pdata pd;
	const char *what = NULL;

	key = rpmafs_auth_request_check(ia->ring, pdata, len, &what);
	if (!key) {
		snprintf(why, whylen, "%s", what ? what : "sender proves no key");
		return NULL;
	}
	/* only a request that proved a key takes a place in the window */
	(void)rpmafs_pdata_parse(pdata, len, &pd, &what);
	if (rpmafs_nonces_seen(ia->nonces, pd.auth.nonce)) {
		snprintf(why, whylen, "replayed connect request (key %s)", rpmafs_key_name(key));
		return NULL;
	}
	return key;
}

bool inbox_auth_encrypt(const struct inbox_auth *ia, bool asked_encrypt)
{
	return asked_encrypt || ia->encrypt;
}

int inbox_auth_accept(struct inbox_auth *ia, const struct rpmafs_key *key, const void *req,
	const struct rpmafs_pdata *ours, uint8_t buf[RPMAFS_AUTH_ACCEPT_LEN],
	struct rpmafs_auth **conn)
{
	struct rpmafs_pdata pd;
	const char *what;

	if (rpmafs_pdata_parse(req, RPMAFS_AUTH_REQUEST_LEN, &pd, &what) != RPMAFS_PDATA_OK)
		return -EINVAL;
	return rpmafs_auth_accept_encode(
		key, req, ours, inbox_auth_encrypt(ia, pd.auth.encrypt), buf, conn);
}
