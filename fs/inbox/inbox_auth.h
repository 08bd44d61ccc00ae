/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox_auth.h -- [rpmafs] listen_keys on the inbox's side (common/auth.h,
 * docs/design.md §11.2, §13.5): only senders that prove one of DIR's keys
 * are accepted, and every SEND of theirs is checked before the inbox looks
 * at it
 *
 * At connect time a request must prove a key of the ring with a nonce the
 * replay window has not seen (inbox_auth_judge); the accept proves the
 * key back and makes the connection's keys (inbox_auth_accept). On the
 * connection every SEND is taken by rpmafs_auth_take (auth.h) in its
 * receive buffer before the inbox looks at it; acknowledgements are sealed
 * with the same connection state (inbox_ack_send).
 *
 * Everything here runs on the loop thread.
 */
#ifndef RPMAFS_INBOX_AUTH_H
#define RPMAFS_INBOX_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"

struct inbox_auth; /* opaque: the ring, the replay window, protect */

/*
 * inbox_auth_new -- listen_keys: the keys of ring (the config's, which
 * outlives *ia), loaded from dir (for log lines); encrypt: listen_protect =
 * encrypt (every connection encrypts, whatever the sender asked). 0, or
 * -ENOMEM.
 */
int inbox_auth_new(
	const struct rpmafs_keyring *ring, const char *dir, bool encrypt, struct inbox_auth **ia);

/* inbox_auth_delete -- free *ia (NULL is fine); NULLs *ia */
void inbox_auth_delete(struct inbox_auth **ia);

/*
 * inbox_auth_judge -- the key of the ring that the connect request (len
 * bytes of private data, a version 3 request peer_check_keys let through)
 * proves, with a nonce not seen before; NULL with why (whylen bytes) for a
 * request to reject: "sender's key is not one of DIR's", "replayed connect
 * request (key NAME)", or the parser's word on a malformed request
 */
const struct rpmafs_key *inbox_auth_judge(
	struct inbox_auth *ia, const void *pdata, size_t len, char *why, size_t whylen);

/*
 * inbox_auth_accept -- the 48-byte version 3 accept for the request req
 * that proved key (ours: max_message, credits, flags), in encrypt mode when
 * the sender asked for it or listen_protect says so; *conn: the
 * connection's state. 0, or a negative errno.
 */
int inbox_auth_accept(struct inbox_auth *ia, const struct rpmafs_key *key, const void *req,
	const struct rpmafs_pdata *ours, uint8_t buf[RPMAFS_AUTH_ACCEPT_LEN],
	struct rpmafs_auth **conn);

/* inbox_auth_encrypt -- whether an accept for a request that asked asked_encrypt encrypts */
bool inbox_auth_encrypt(const struct inbox_auth *ia, bool asked_encrypt);

#endif /* RPMAFS_INBOX_AUTH_H */
