/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * auth.h -- authenticated peers (issue 25, docs/design.md §11): keys, the
 * version 3 handshake in the connect private data, and the MAC (or AEAD)
 * of every SEND on an authenticated connection
 *
 * Crypto is libsodium's, nothing home-made: keyed BLAKE2b
 * (crypto_generichash) for key ids, handshake tags and the connection keys;
 * ChaCha20-Poly1305 IETF (detached) for every message and acknowledgement;
 * constant-time comparisons; key material in sodium_malloc memory, wiped
 * when dropped.
 *
 * Keys. A key file holds exactly RPMAFS_AUTH_KEY_BYTES bytes and is read
 * or written by its owner only. A key dir holds *.key files, one key each,
 * named by the file name without ".key". A key's id is
 *	BLAKE2b(outlen 16, key K, in "rpmafs key id 1")[0..8]
 * Ids may collide: a receiver tries every key of its ring with the id.
 * (Labels are their bytes without a terminating NUL.)
 *
 * Handshake, no round trip added (pdata.h has the version 3 tables):
 *	sender		request: flags, session, key id, nonce_s,
 *			tag = BLAKE2b(16, K, "rpmafs request 1" || req[0..48])[0..8]
 *	receiver	rpmafs_auth_request_check (which key), rpmafs_nonces_seen
 *			(a replay), rpmafs_auth_accept_encode: accept with nonce_r,
 *			tag = BLAKE2b(16, K, "rpmafs accept 1" || req[0..56] || acc[0..32])
 *	sender		rpmafs_auth_accept_check; then its first SEND is the proof
 *			(rpmafs_auth_seal_proof), before any message
 *	receiver	rpmafs_auth_open_proof before it delivers or acknowledges anything
 * Connection keys, per direction:
 *	k_s2r = BLAKE2b(32, K, "rpmafs s2r 1" || req[0..56] || acc[0..48])
 *	k_r2s = BLAKE2b(32, K, "rpmafs r2s 1" || req[0..56] || acc[0..48])
 *
 * On the connection each direction counts its SENDs, seq 0, 1, 2, ...;
 * every SEND is its payload followed by a RPMAFS_AUTH_TAG_BYTES Poly1305
 * tag, the nonce being seq (8 bytes LE) || imm (4 bytes LE, 0 without
 * immediate data). mac: the payload is the AEAD's additional data;
 * encrypt: the payload is encrypted in place. Acknowledgements and the
 * proof are always mac. The sender's seq 0 is the proof (16 bytes, no
 * immediate data, the tag over "rpmafs proof 1").
 *
 * Threads: a keyring and a key are read-only after load and may be shared.
 * seal/open of one direction of a connection are called by one thread at a
 * time (the caller's lock); a nonces window by one thread at a time.
 */
#ifndef RPMAFS_AUTH_H
#define RPMAFS_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pdata.h"

#define RPMAFS_AUTH_KEY_BYTES 32
#define RPMAFS_AUTH_ID_BYTES 8
#define RPMAFS_AUTH_NONCE_BYTES 16
#define RPMAFS_AUTH_TAG_BYTES 16
#define RPMAFS_AUTH_REQUEST_LEN 56	  /* = RPMAFS_PDATA_LEN_3_REQUEST */
#define RPMAFS_AUTH_ACCEPT_LEN 48	  /* = RPMAFS_PDATA_LEN_3_ACCEPT */
#define RPMAFS_AUTH_NAME_MAX 64		  /* a key dir's key name, bytes */
#define RPMAFS_AUTH_MAX_KEYS 1024	  /* keys in a key dir */
#define RPMAFS_AUTH_NONCES_DEFAULT 4096	  /* the replay window of a receiver */
#define RPMAFS_AUTH_PROOF_TIMEOUT_MS 5000 /* no proof by then: the receiver drops */

struct rpmafs_key;     /* opaque: name, id, the 32 bytes (sodium_malloc, wiped on delete) */
struct rpmafs_keyring; /* opaque: the *.key files of a directory */
struct rpmafs_auth;    /* opaque: one connection's keys, sequence numbers and mode */
struct rpmafs_nonces;  /* opaque: the replay window of a receiver */

/*
 * rpmafs_auth_init -- initialise libsodium (sodium_init), once per process;
 * later calls are cheap. Call before anything else of this file (the
 * loaders call it too). 0, or -1 when libsodium cannot start.
 */
int rpmafs_auth_init(void);

/*
 * rpmafs_key_load -- read the key file at path into a new *key named name
 * (NULL: the file name without its directory and a trailing ".key"). The
 * file must be a regular file, neither readable nor writable by group or
 * others, of exactly RPMAFS_AUTH_KEY_BYTES bytes. 0, or -1 with err (errlen
 * bytes, may be 0) naming the path and the reason, e.g.
 *	"PATH: key file is readable or writable by group or others (mode 0644): chmod 600 PATH"
 *	"PATH: a key file holds 32 bytes, this one 33"
 *	"PATH: not a regular file"
 */
int rpmafs_key_load(
	const char *path, const char *name, struct rpmafs_key **key, char *err, size_t errlen);

/* rpmafs_key_delete -- wipe and free *key (NULL is fine); NULLs *key */
void rpmafs_key_delete(struct rpmafs_key **key);

/* rpmafs_key_name -- the key's name (in a ring: its file name without ".key") */
const char *rpmafs_key_name(const struct rpmafs_key *key);

/*
 * rpmafs_keyring_load -- every *.key file of dir, as rpmafs_key_load reads
 * one; a name (the file name without ".key") is 1 to RPMAFS_AUTH_NAME_MAX
 * bytes of [A-Za-z0-9._-]. Other files are ignored; a *.key entry that is
 * not a regular file, or has a bad name, is refused. At least one and at
 * most RPMAFS_AUTH_MAX_KEYS keys. Keys are in name order. 0, or -1 with err
 * naming the path and the reason ("DIR: no *.key file", a key's error).
 */
int rpmafs_keyring_load(const char *dir, struct rpmafs_keyring **ring, char *err, size_t errlen);

/* rpmafs_keyring_delete -- wipe and free *ring and its keys (NULL is fine); NULLs *ring */
void rpmafs_keyring_delete(struct rpmafs_keyring **ring);

/* rpmafs_keyring_count -- the number of keys in ring */
unsigned rpmafs_keyring_count(const struct rpmafs_keyring *ring);

/* rpmafs_keyring_key -- the i-th key of ring (name order), NULL past the end */
const struct rpmafs_key *rpmafs_keyring_key(const struct rpmafs_keyring *ring, unsigned i);

/*
 * rpmafs_auth_request_encode -- sender: write the version 3 connect request
 * into buf: pd's max_message and credits (clamped as rpmafs_pdata_encode
 * does), F_ACK from pd->flags, the session (F_SESSION exactly when
 * pd->session != 0), F_AUTH, F_ENCRYPT when encrypt; key's id; a fresh
 * random nonce_s; the request tag. Returns RPMAFS_AUTH_REQUEST_LEN: the
 * private data's length. Keep buf: the accept is checked against it.
 */
size_t rpmafs_auth_request_encode(const struct rpmafs_key *key, const struct rpmafs_pdata *pd,
	bool encrypt, uint8_t buf[RPMAFS_AUTH_REQUEST_LEN]);

/*
 * rpmafs_auth_request_check -- receiver: the key of ring that proves the
 * connect request req (len bytes of private data, zero padding allowed):
 * a version 3 request whose key id and tag match a key (every key with the
 * id is tried). NULL when none does, *why (when why is not NULL) saying:
 *	"sender proves no key"			no private data, foreign, version 1/2
 *	"sender's key is not one of DIR's"	unknown id, or no key with the id makes the tag (DIR: the ring's directory)
 *	other					the version 3 header is malformed (pdata.h's reason)
 * It does not look at replays: ask rpmafs_nonces_seen after it succeeded
 * (so that only proven nonces take room in the window).
 */
const struct rpmafs_key *rpmafs_auth_request_check(
	const struct rpmafs_keyring *ring, const uint8_t *req, size_t len, const char **why);

/*
 * rpmafs_auth_accept_encode -- receiver: write the 48-byte version 3 accept
 * for req (a request rpmafs_auth_request_check proved with key) into buf:
 * ours' max_message and credits (clamped), F_ACK from ours->flags, F_AUTH,
 * F_ENCRYPT when encrypt (the receiver's protect = encrypt) or the request
 * asked for it; a fresh nonce_r; the accept tag. Makes *conn, the
 * receiver's connection state (opens with k_s2r, seals with k_r2s; no
 * message opens before the proof). 0, -EINVAL (req is not a version 3
 * request), -ENOMEM.
 */
int rpmafs_auth_accept_encode(const struct rpmafs_key *key,
	const uint8_t req[RPMAFS_AUTH_REQUEST_LEN], const struct rpmafs_pdata *ours, bool encrypt,
	uint8_t buf[RPMAFS_AUTH_ACCEPT_LEN], struct rpmafs_auth **conn);

/*
 * rpmafs_auth_accept_check -- sender: check the accept acc (len bytes of
 * private data, zero padding allowed) against its request req, made with
 * key. On success makes *conn, the sender's connection state (seals with
 * k_s2r, opens with k_r2s), in the mode the accept says (F_ENCRYPT), and
 * returns 0. Else -1 (-ENOMEM: -1 too, why "out of memory"), *why saying:
 *	"receiver proves no key"		no private data, foreign, version 1/2, or a request
 *	"receiver's proof of key failed"	the accept tag is wrong (another key, tampered)
 *	"receiver did not agree to encrypt"	want_encrypt and the accept lacks F_ENCRYPT
 *	other					the version 3 header is malformed (pdata.h's reason)
 * The caller parses acc with rpmafs_pdata_parse for max_message, credits, F_ACK.
 */
int rpmafs_auth_accept_check(const struct rpmafs_key *key,
	const uint8_t req[RPMAFS_AUTH_REQUEST_LEN], const uint8_t *acc, size_t len,
	bool want_encrypt, struct rpmafs_auth **conn, const char **why);

/* rpmafs_auth_delete -- wipe and free *conn (NULL is fine); NULLs *conn */
void rpmafs_auth_delete(struct rpmafs_auth **conn);

/* rpmafs_auth_encrypts -- true when the connection's messages are encrypted (protect = encrypt) */
bool rpmafs_auth_encrypts(const struct rpmafs_auth *conn);

/*
 * rpmafs_auth_seal -- sender: seal the message SEND of len payload bytes
 * with immediate data imm (0 for a SEND without): write its tag (the 16
 * bytes that follow the payload in the SEND) and, when the connection
 * encrypts, encrypt payload in place. Advances the sending seq.
 */
void rpmafs_auth_seal(struct rpmafs_auth *conn, uint32_t imm, uint8_t *payload, size_t len,
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

/*
 * rpmafs_auth_next_seq -- the seq the next seal on conn takes (the sender:
 * note it before rpmafs_auth_seal to be able to unseal that SEND)
 */
uint64_t rpmafs_auth_next_seq(const struct rpmafs_auth *conn);

/*
 * rpmafs_auth_unseal -- sender: give payload its plaintext back after
 * rpmafs_auth_seal encrypted it in place as SEND seq with immediate data
 * imm (nothing to do when the connection does not encrypt). A message that
 * is sent again, on another connection (a re-send after the connection was
 * lost), must be unsealed first: sealing the ciphertext again would have
 * the receiver deliver the old ciphertext as the message. conn may be
 * unsealed after its connection is gone, until rpmafs_auth_delete.
 */
void rpmafs_auth_unseal(
	const struct rpmafs_auth *conn, uint64_t seq, uint32_t imm, uint8_t *payload, size_t len);

/*
 * rpmafs_auth_open -- receiver: check the message SEND of len payload bytes
 * (its byte_len minus RPMAFS_AUTH_TAG_BYTES) with immediate data imm and
 * tag; when the connection encrypts, decrypt payload in place. 0 (the
 * receiving seq advanced), or -1: a bad tag, no proof opened yet, or an
 * earlier failure on this connection (a connection that failed once fails
 * every later open: drop it). On -1 the payload is not to be used.
 */
int rpmafs_auth_open(struct rpmafs_auth *conn, uint32_t imm, uint8_t *payload, size_t len,
	const uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

enum rpmafs_auth_take {
	RPMAFS_AUTH_MESSAGE, /* a message, checked (with encrypt: decrypted in place) */
	RPMAFS_AUTH_PROOF,   /* the sender's proof of key, taken: nothing to deliver */
	RPMAFS_AUTH_BAD,     /* not the proof, a bad tag, too short: drop the connection */
};

/*
 * rpmafs_auth_take -- receiver: a SEND of an authenticated connection, as
 * it came (msg: its len bytes; imm: its immediate data when with_imm). The
 * first must be the proof (16 bytes without immediate data:
 * rpmafs_auth_open_proof, then *proven is set); every later one a payload
 * and its tag (rpmafs_auth_open), *len then the payload's length. On
 * RPMAFS_AUTH_BAD why (whylen bytes) says what was wrong, e.g.
 *	"its first SEND (20 bytes) is not the proof of key"
 *	"its proof of key is wrong"
 *	"a SEND of 3 bytes, shorter than its tag"
 *	"the tag of a SEND of 80 bytes is wrong (mac)"
 */
enum rpmafs_auth_take rpmafs_auth_take(struct rpmafs_auth *conn, bool *proven, bool with_imm,
	uint32_t imm, uint8_t *msg, uint32_t *len, char *why, size_t whylen);

/*
 * rpmafs_auth_seal_ack -- receiver: tag the acknowledgement ack (len bytes,
 * RPMAFS_ACK_LEN; sent without immediate data), always mac: ack is not
 * changed. Advances the sending seq.
 */
void rpmafs_auth_seal_ack(struct rpmafs_auth *conn, const uint8_t *ack, size_t len,
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

/*
 * rpmafs_auth_open_ack -- sender: check the acknowledgement ack (len bytes)
 * and its tag. 0 (the receiving seq advanced), or -1 (bad tag, or an
 * earlier failure): drop the connection.
 */
int rpmafs_auth_open_ack(struct rpmafs_auth *conn, const uint8_t *ack, size_t len,
	const uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

/*
 * rpmafs_auth_seal_proof -- sender: the tag that is the proof, its first
 * SEND (16 bytes, no immediate data), sealed right after the connection is
 * up and before any message. Advances the sending seq (to 1).
 */
void rpmafs_auth_seal_proof(struct rpmafs_auth *conn, uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

/*
 * rpmafs_auth_open_proof -- receiver: check the connection's first SEND as
 * the proof (the caller checks it is 16 bytes without immediate data). 0:
 * the sender holds the key, messages may now be opened. -1: a bad tag, a
 * proof that is not the first SEND, or an earlier failure: drop.
 */
int rpmafs_auth_open_proof(struct rpmafs_auth *conn, const uint8_t tag[RPMAFS_AUTH_TAG_BYTES]);

/*
 * rpmafs_nonces_new -- an empty replay window remembering the last capacity
 * (1 .. 1 << 20; RPMAFS_AUTH_NONCES_DEFAULT for a receiver) nonces. 0,
 * -EINVAL, -ENOMEM.
 */
int rpmafs_nonces_new(unsigned capacity, struct rpmafs_nonces **n);

/* rpmafs_nonces_delete -- free *n (NULL is fine); NULLs *n */
void rpmafs_nonces_delete(struct rpmafs_nonces **n);

/*
 * rpmafs_nonces_seen -- true when nonce is in the window (a replay); else
 * remembers it, forgetting the oldest when the window is full, and returns
 * false. Lookups take constant time on average whatever the nonces (the
 * table's hash is keyed at random).
 */
bool rpmafs_nonces_seen(struct rpmafs_nonces *n, const uint8_t nonce[RPMAFS_AUTH_NONCE_BYTES]);

#endif /* RPMAFS_AUTH_H */
