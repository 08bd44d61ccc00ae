/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * key.h -- inside common/: what auth.c and nonces.c need of a key (key.c),
 * not for the users of auth.h
 */
#ifndef RPMAFS_KEY_H
#define RPMAFS_KEY_H

#include <stdint.h>

#include "auth.h"

/* rpmafs_key_bytes -- the key's RPMAFS_AUTH_KEY_BYTES bytes (read-only memory) */
const uint8_t *rpmafs_key_bytes(const struct rpmafs_key *key);

/* rpmafs_key_id -- the key's RPMAFS_AUTH_ID_BYTES id */
const uint8_t *rpmafs_key_id(const struct rpmafs_key *key);

/* rpmafs_keyring_unknown -- the reason a request's key is none of ring's: "sender's key is not one of DIR's" */
const char *rpmafs_keyring_unknown(const struct rpmafs_keyring *ring);

/*
 * rpmafs_key_make_id -- id = BLAKE2b(outlen 16, key k, in "rpmafs key id 1")[0..8]
 */
void rpmafs_key_make_id(const uint8_t k[RPMAFS_AUTH_KEY_BYTES], uint8_t id[RPMAFS_AUTH_ID_BYTES]);

#endif /* RPMAFS_KEY_H */
