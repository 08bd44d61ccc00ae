// SPDX-License-Identifier: BSD-3-Clause
/*
 * auth.c -- the version 3 handshake and the tag of every SEND on an
 * authenticated connection (auth.h, docs/design.md §11); key files are
 * key.c's, the replay window nonces.c's
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth.h"
#include "key.h"
#include "le.h"

#define TX 0 /* offsets of the two keys in conn->keys */
#define RX RPMAFS_AUTH_KEY_BYTES

struct rpmafs_auth {
	uint8_t *keys;	 /* sending key, then receiving key: sodium_malloc'd, read-only */
	uint64_t tx_seq; /* the next SEND this end seals */
	uint64_t rx_seq; /* the next SEND this end opens */
	bool receiver;	 /* made by accept_encode: opens messages and the proof, seals acks */
	bool encrypt;	 /* messages' payloads encrypted */
	bool proven;	 /* the peer proved the key (a sender's receiver did by its accept) */
	bool failed;	 /* an open failed: every later one fails */
};

static const char label_request[] = "rpmafs request 1";
static const char label_accept[] = "rpmafs accept 1";
static const char label_s2r[] = "rpmafs s2r 1";
static const char label_r2s[] = "rpmafs r2s 1";
static const char label_proof[] = "rpmafs proof 1";

int rpmafs_auth_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

/*
 * mac -- BLAKE2b(outlen, key k, in label || a[0..alen] || b[0..blen]) into out
 * (labels without their NUL)
 */
static void mac(uint8_t *out, size_t outlen, const uint8_t *k, const char *label, const uint8_t *a,
	size_t alen, const uint8_t *b, size_t blen)
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, k, RPMAFS_AUTH_KEY_BYTES, outlen);
	crypto_generichash_update(&st, (const uint8_t *)label, strlen(label));
	crypto_generichash_update(&st, a, alen);
	if (blen)
		crypto_generichash_update(&st, b, blen);
	crypto_generichash_final(&st, out, outlen);
	sodium_memzero(&st, sizeof(st));
}

size_t rpmafs_auth_request_encode(const struct rpmafs_key *key, const struct rpmafs_pdata *pd,
	bool encrypt, uint8_t buf[RPMAFS_AUTH_REQUEST_LEN])
{
	uint16_t flags = (uint16_t)((pd->flags & RPMAFS_PDATA_F_ACK) | RPMAFS_PDATA_F_AUTH);
	uint8_t tag[16];

	if (encrypt)
		flags |= RPMAFS_PDATA_F_ENCRYPT;
	if (pd->session)
		flags |= RPMAFS_PDATA_F_SESSION;
	rpmafs_pdata_put_head(buf, RPMAFS_PDATA_VERSION_3, RPMAFS_AUTH_REQUEST_LEN, flags, pd);
	put_le64(buf + 16, pd->session);
	memcpy(buf + 24, rpmafs_key_id(key), RPMAFS_AUTH_ID_BYTES);
	randombytes_buf(buf + 32, RPMAFS_AUTH_NONCE_BYTES);
	mac(tag, sizeof(tag), rpmafs_key_bytes(key), label_request, buf, 48, NULL, 0);
	memcpy(buf + 48, tag, 8);
	return RPMAFS_AUTH_REQUEST_LEN;
}

const struct rpmafs_key *rpmafs_auth_request_check(
	const struct rpmafs_keyring *ring, const uint8_t *req, size_t len, const char **why)
{
	enum rpmafs_pdata_kind kind;
	struct rpmafs_pdata pd;
	const char *dummy;
	uint8_t tag[16];

	if (!why)
		why = &dummy;
	kind = rpmafs_pdata_parse(req, len, &pd, why);
	if (kind == RPMAFS_PDATA_MALFORMED && len >= 5 && req[4] == RPMAFS_PDATA_VERSION_3)
		return NULL; /* pdata.h's reason */
	if (kind != RPMAFS_PDATA_OK || !pd.auth.on || !pd.auth.request) {
		*why = "sender proves no key";
		return NULL;
	}
	for (unsigned i = 0; i < rpmafs_keyring_count(ring); i++) {
		const struct rpmafs_key *k = rpmafs_keyring_key(ring, i);

		/* ids are no secret; ids may collide: every key with the id is tried */
		if (memcmp(rpmafs_key_id(k), req + 24, RPMAFS_AUTH_ID_BYTES) != 0)
			continue;
		mac(tag, sizeof(tag), rpmafs_key_bytes(k), label_request, req, 48, NULL, 0);
		if (sodium_memcmp(tag, req + 48, 8) == 0) {
			*why = "ok";
			return k;
		}
	}
	*why = rpmafs_keyring_unknown(ring);
	return NULL;
}

/*
 * make_conn -- *conn for key, request req and accept acc (its first 48
 * bytes): k_s2r and k_r2s, sending and receiving as the role says
 */
static int make_conn(const struct rpmafs_key *key, const uint8_t *req, const uint8_t *acc,
	bool receiver, bool encrypt, struct rpmafs_auth **conn)
{
	struct rpmafs_auth *c = calloc(1, sizeof(*c));
	const uint8_t *k = rpmafs_key_bytes(key);

	if (!c)
		return -ENOMEM;
	c->keys = sodium_malloc(2 * RPMAFS_AUTH_KEY_BYTES);
	if (!c->keys) {
		free(c);
		return -ENOMEM;
	}
	mac(c->keys + (receiver ? RX : TX), RPMAFS_AUTH_KEY_BYTES, k, label_s2r, req,
		RPMAFS_AUTH_REQUEST_LEN, acc, RPMAFS_AUTH_ACCEPT_LEN);
	mac(c->keys + (receiver ? TX : RX), RPMAFS_AUTH_KEY_BYTES, k, label_r2s, req,
		RPMAFS_AUTH_REQUEST_LEN, acc, RPMAFS_AUTH_ACCEPT_LEN);
	sodium_mprotect_readonly(c->keys);
	c->receiver = receiver;
	c->encrypt = encrypt;
	c->proven = !receiver;
	*conn = c;
	return 0;
}

int rpmafs_auth_accept_encode(const struct rpmafs_key *key,
	const uint8_t req[RPMAFS_AUTH_REQUEST_LEN], const struct rpmafs_pdata *ours, bool encrypt,
	uint8_t buf[RPMAFS_AUTH_ACCEPT_LEN], struct rpmafs_auth **conn)
{
	uint16_t flags = (uint16_t)((ours->flags & RPMAFS_PDATA_F_ACK) | RPMAFS_PDATA_F_AUTH);
	struct rpmafs_pdata pd;

	*conn = NULL;
	if (rpmafs_pdata_parse(req, RPMAFS_AUTH_REQUEST_LEN, &pd, NULL) != RPMAFS_PDATA_OK ||
		!pd.auth.request)
		return -EINVAL;
	encrypt = encrypt || pd.auth.encrypt;
	if (encrypt)
		flags |= RPMAFS_PDATA_F_ENCRYPT;
	rpmafs_pdata_put_head(buf, RPMAFS_PDATA_VERSION_3, RPMAFS_AUTH_ACCEPT_LEN, flags, ours);
	randombytes_buf(buf + 16, RPMAFS_AUTH_NONCE_BYTES);
	mac(buf + 32, RPMAFS_AUTH_TAG_BYTES, rpmafs_key_bytes(key), label_accept, req,
		RPMAFS_AUTH_REQUEST_LEN, buf, 32);
	return make_conn(key, req, buf, true, encrypt, conn);
}

int rpmafs_auth_accept_check(const struct rpmafs_key *key,
	const uint8_t req[RPMAFS_AUTH_REQUEST_LEN], const uint8_t *acc, size_t len,
	bool want_encrypt, struct rpmafs_auth **conn, const char **why)
{
	enum rpmafs_pdata_kind kind;
	struct rpmafs_pdata pd;
	const char *dummy;
	uint8_t tag[16];

	*conn = NULL;
	if (!why)
		why = &dummy;
	kind = rpmafs_pdata_parse(acc, len, &pd, why);
	if (kind == RPMAFS_PDATA_MALFORMED && len >= 5 && acc[4] == RPMAFS_PDATA_VERSION_3)
		return -1; /* pdata.h's reason */
	if (kind != RPMAFS_PDATA_OK || !pd.auth.on || pd.auth.request) {
		*why = "receiver proves no key";
		return -1;
	}
	mac(tag, sizeof(tag), rpmafs_key_bytes(key), label_accept, req, RPMAFS_AUTH_REQUEST_LEN,
		acc, 32);
	if (crypto_verify_16(tag, acc + 32) != 0) {
		*why = "receiver's proof of key failed";
		return -1;
	}
	if (want_encrypt && !pd.auth.encrypt) {
		*why = "receiver did not agree to encrypt";
		return -1;
	}
	if (make_conn(key, req, acc, false, pd.auth.encrypt, conn) != 0) {
		*why = "out of memory";
		return -1;
	}
	*why = "ok";
	return 0;
}

void rpmafs_auth_delete(struct rpmafs_auth **conn)
{
	struct rpmafs_auth *c = *conn;

	if (!c)
		return;
	sodium_free(c->keys); /* wipes */
	free(c);
	*conn = NULL;
}

bool rpmafs_auth_encrypts(const struct rpmafs_auth *conn)
{
	return conn->encrypt;
}

/* nonce -- seq (8 bytes LE) || imm (4 bytes LE) */
static void nonce(
	uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES], uint64_t seq, uint32_t imm)
{
	put_le64(n, seq);
	put_le32(n + 8, imm);
}

/*
 * libsodium declares the ciphertext pointers nonnull even for 0 bytes:
 * none stands in for an empty ciphertext (mac) or a 0-byte payload
 */
static uint8_t none[1];

/* seal -- the tag of the next sending SEND; payload encrypted in place when enc */
static void seal(struct rpmafs_auth *c, uint32_t imm, uint8_t *payload, size_t len, bool enc,
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];

	nonce(n, c->tx_seq++, imm);
	if (!payload)
		payload = none; /* len is 0 */
	if (enc)
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
			payload, tag, NULL, payload, len, NULL, 0, NULL, n, c->keys + TX);
	else
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
			none, tag, NULL, none, 0, payload, len, NULL, n, c->keys + TX);
}

/* open -- check the next receiving SEND; decrypted in place when enc. 0 or -1 */
static int open_(struct rpmafs_auth *c, uint32_t imm, uint8_t *payload, size_t len, bool enc,
	const uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
	int r;

	if (c->failed)
		return -1;
	nonce(n, c->rx_seq, imm);
	if (!payload)
		payload = none; /* len is 0 */
	if (enc)
		r = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
			payload, NULL, payload, len, tag, NULL, 0, n, c->keys + RX);
	else
		r = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
			NULL, NULL, none, 0, tag, payload, len, n, c->keys + RX);
	if (r != 0) {
		c->failed = true;
		return -1;
	}
	c->rx_seq++;
	return 0;
}

void rpmafs_auth_seal(struct rpmafs_auth *conn, uint32_t imm, uint8_t *payload, size_t len,
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	seal(conn, imm, payload, len, conn->encrypt, tag);
}

uint64_t rpmafs_auth_next_seq(const struct rpmafs_auth *conn)
{
	return conn->tx_seq;
}

void rpmafs_auth_unseal(
	const struct rpmafs_auth *conn, uint64_t seq, uint32_t imm, uint8_t *payload, size_t len)
{
	uint8_t n[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];

	if (!conn->encrypt || len == 0)
		return;
	/* the AEAD's encryption is ChaCha20 from block counter 1 (RFC 8439 §2.8): its own inverse */
	nonce(n, seq, imm);
	crypto_stream_chacha20_ietf_xor_ic(payload, payload, len, n, 1, conn->keys + TX);
}

int rpmafs_auth_open(struct rpmafs_auth *conn, uint32_t imm, uint8_t *payload, size_t len,
	const uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	/* messages travel to a receiver only, and only after the proof */
	if (!conn->receiver || !conn->proven)
		conn->failed = true;
	return open_(conn, imm, payload, len, conn->encrypt, tag);
}

void rpmafs_auth_seal_ack(struct rpmafs_auth *conn, const uint8_t *ack, size_t len,
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	/* mac: ack is only read */
	seal(conn, 0, (uint8_t *)ack, len, false, tag);
}

int rpmafs_auth_open_ack(struct rpmafs_auth *conn, const uint8_t *ack, size_t len,
	const uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	/* acknowledgements travel to a sender only */
	if (conn->receiver)
		conn->failed = true;
	return open_(conn, 0, (uint8_t *)ack, len, false, tag);
}

void rpmafs_auth_seal_proof(struct rpmafs_auth *conn, uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	seal(conn, 0, (uint8_t *)label_proof, strlen(label_proof), false, tag);
}

int rpmafs_auth_open_proof(struct rpmafs_auth *conn, const uint8_t tag[RPMAFS_AUTH_TAG_BYTES])
{
	/* the proof is a receiver's first SEND, once */
	if (!conn->receiver || conn->proven || conn->rx_seq != 0)
		conn->failed = true;
	if (open_(conn, 0, (uint8_t *)label_proof, strlen(label_proof), false, tag) != 0)
		return -1;
	conn->proven = true;
	return 0;
}

enum rpmafs_auth_take rpmafs_auth_take(struct rpmafs_auth *conn, bool *proven, bool with_imm,
	uint32_t imm, uint8_t *msg, uint32_t *len, char *why, size_t whylen)
{
	if (!*proven) {
		if (with_imm || *len != RPMAFS_AUTH_TAG_BYTES) {
			snprintf(why, whylen,
				"its first SEND (%" PRIu32 " bytes%s) is not the proof of key",
				*len, with_imm ? ", with immediate data" : "");
			return RPMAFS_AUTH_BAD;
		}
		if (rpmafs_auth_open_proof(conn, msg)) {
			snprintf(why, whylen, "its proof of key is wrong");
			return RPMAFS_AUTH_BAD;
		}
		*proven = true;
		return RPMAFS_AUTH_PROOF;
	}
	if (*len < RPMAFS_AUTH_TAG_BYTES) {
		snprintf(why, whylen, "a SEND of %" PRIu32 " bytes, shorter than its tag", *len);
		return RPMAFS_AUTH_BAD;
	}
	*len -= RPMAFS_AUTH_TAG_BYTES;
	if (rpmafs_auth_open(conn, imm, msg, *len, msg + *len)) {
		snprintf(why, whylen, "the tag of a SEND of %" PRIu32 " bytes is wrong (%s)",
			*len + RPMAFS_AUTH_TAG_BYTES,
			rpmafs_auth_encrypts(conn) ? "encrypt" : "mac");
		return RPMAFS_AUTH_BAD;
	}
	return RPMAFS_AUTH_MESSAGE;
}
