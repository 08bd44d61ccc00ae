// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_auth.c -- the version 3 handshake and the tags of every SEND
 * (common/auth.c): known answers computed elsewhere (auth_vectors.py:
 * Python's hashlib.blake2b, OpenSSL's ChaCha20-Poly1305), RFC 8439's
 * AEAD vector through libsodium, round trips in both modes, and a flipped
 * bit anywhere caught
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "ack.h"
#include "auth.h"

/* /usr/bin/python3 tests/unit/common/auth/auth_vectors.py */
/* clang-format off */
static const uint8_t kat_key_id[8] = {
	0xc0, 0x2a, 0x28, 0xac, 0x10, 0xea, 0x0f, 0x1d,
};
static const uint8_t kat_req[56] = {
	0x52, 0x50, 0x4d, 0x46, 0x03, 0x38, 0x07, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	0xc0, 0x2a, 0x28, 0xac, 0x10, 0xea, 0x0f, 0x1d, 0xa0, 0xa1, 0xa2, 0xa3,
	0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
	0x66, 0x64, 0x1c, 0x65, 0x68, 0xb7, 0x42, 0x31,
};
static const uint8_t kat_acc[48] = {
	0x52, 0x50, 0x4d, 0x46, 0x03, 0x30, 0x05, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x40, 0x00, 0x00, 0x00, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
	0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf, 0x2b, 0x20, 0xc2, 0xbc,
	0x47, 0x57, 0x83, 0x08, 0x65, 0xb2, 0x5f, 0xcc, 0x6e, 0xb6, 0xd9, 0xb2,
};
static const uint8_t kat_s2r[32] = {
	0xd9, 0xe3, 0x59, 0x72, 0xbe, 0xfb, 0xb6, 0x83, 0xc3, 0x0c, 0x02, 0xb9,
	0x45, 0x00, 0x8a, 0x2f, 0x36, 0x45, 0xe0, 0xed, 0x40, 0xa4, 0x1b, 0x9e,
	0xfe, 0x62, 0x16, 0xec, 0x85, 0x01, 0xe1, 0xdd,
};
static const uint8_t kat_r2s[32] = {
	0x9c, 0x99, 0x2c, 0x52, 0x32, 0xff, 0x56, 0xe8, 0xa1, 0x78, 0x57, 0xa6,
	0x66, 0xd6, 0xf6, 0x63, 0xa2, 0x75, 0x64, 0x82, 0xb1, 0x50, 0x0b, 0x67,
	0x54, 0x46, 0xf7, 0x5d, 0xf3, 0xb0, 0x05, 0xdc,
};
static const uint8_t kat_proof[16] = {
	0x6d, 0x78, 0xf0, 0x95, 0x39, 0x4e, 0xdf, 0xa5, 0xab, 0x72, 0x3b, 0x7f,
	0xf5, 0x8a, 0xc1, 0x4c,
};
static const uint8_t kat_msg_tag[16] = {
	0xf6, 0x16, 0x02, 0x50, 0xaa, 0xeb, 0x3c, 0x03, 0xf0, 0x01, 0x4a, 0x1a,
	0xd8, 0xdb, 0x3f, 0xbb,
};
static const uint8_t kat_empty_tag[16] = {
	0xee, 0x79, 0xeb, 0xa1, 0xf3, 0x56, 0xe6, 0xc5, 0x53, 0x6e, 0x11, 0xf5,
	0xf3, 0xd0, 0x15, 0x1d,
};
static const uint8_t kat_ack[16] = {
	0x52, 0x50, 0x41, 0x4b, 0x01, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x40, 0x00, 0x00, 0x00,
};
static const uint8_t kat_ack_tag[16] = {
	0x6d, 0x0d, 0xd2, 0x17, 0x9c, 0xcc, 0x7f, 0xdb, 0x21, 0xc2, 0xd8, 0xed,
	0xd7, 0x4c, 0x39, 0xdb,
};
static const uint8_t kat_req_enc[56] = {
	0x52, 0x50, 0x4d, 0x46, 0x03, 0x38, 0x0f, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	0xc0, 0x2a, 0x28, 0xac, 0x10, 0xea, 0x0f, 0x1d, 0xa0, 0xa1, 0xa2, 0xa3,
	0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
	0xca, 0xf9, 0x58, 0xbc, 0xf1, 0x2e, 0x5e, 0x91,
};
static const uint8_t kat_acc_enc[48] = {
	0x52, 0x50, 0x4d, 0x46, 0x03, 0x30, 0x0d, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x40, 0x00, 0x00, 0x00, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
	0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf, 0x92, 0xca, 0x59, 0x38,
	0xbd, 0x6e, 0xc7, 0x97, 0xb9, 0x53, 0x0c, 0x59, 0x77, 0xb1, 0xf2, 0xe0,
};
static const uint8_t kat_sealed[31] = {
	0x5e, 0x5d, 0x33, 0x5c, 0xbc, 0x47, 0xad, 0x05, 0xf6, 0xf4, 0x83, 0x99,
	0xeb, 0x9c, 0x2e, 0xd2, 0x1f, 0xd5, 0x35, 0x8b, 0x1f, 0x08, 0x8e, 0xf9,
	0xdd, 0x25, 0x11, 0xd6, 0xf5, 0xe8, 0xd5,
};
static const uint8_t kat_ack_tag_enc[16] = {
	0xe9, 0x61, 0x89, 0xc8, 0xf0, 0xee, 0x25, 0x8f, 0x90, 0xbf, 0x1b, 0x50,
	0xd6, 0xb9, 0xf3, 0x00,
};
/* clang-format on */

static const char msg[] = "hello, receiver"; /* 15 bytes, as auth_vectors.py's MSG */

static char dir[] = "/tmp/test-auth.XXXXXX";

static char ringdir[64]; /* dir/ring: the receiver's keys of the round trips */

/* write_key -- a 0600 key file d/name.key of the 32 bytes k */
static void write_key_in(const char *d, const char *name, const uint8_t *k)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.key", d, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, k, 32), 32);
	close(fd);
}

/* the key of auth_vectors.py: 0, 1, .., 31 */
static struct rpmafs_key *kat_key(void)
{
	struct rpmafs_key *key = NULL;
	uint8_t k[32];
	char path[256], err[512];

	for (int i = 0; i < 32; i++)
		k[i] = (uint8_t)i;
	write_key_in(dir, "kat", k);
	snprintf(path, sizeof(path), "%s/kat.key", dir);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), 0);
	assert_string_equal(rpmafs_key_name(key), "kat");
	return key;
}

/* random_key -- a new random key file ringdir/name.key (when in_ring, else dir/name.key), loaded */
static struct rpmafs_key *random_key(const char *name, bool in_ring)
{
	struct rpmafs_key *key = NULL;
	const char *d = in_ring ? ringdir : dir;
	uint8_t k[32];
	char path[256], err[512];

	randombytes_buf(k, sizeof(k));
	write_key_in(d, name, k);
	snprintf(path, sizeof(path), "%s/%s.key", d, name);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), 0);
	return key;
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(rpmafs_auth_init(), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(ringdir, sizeof(ringdir), "%s/ring", dir);
	assert_int_equal(mkdir(ringdir, 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* RFC 8439 §2.8.2 through libsodium: the primitive is the standard one */
static void rfc8439_aead(void **state)
{
	static const char pt[] = "Ladies and Gentlemen of the class of '99: If I could offer you "
				 "only one tip for the future, sunscreen would be it.";
	static const uint8_t aad[12] = {
		0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7};
	static const uint8_t iv[12] = {
		0x07, 0x00, 0x00, 0x00, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47};
	static const uint8_t ct_head[16] = {0xd3, 0x1a, 0x8d, 0x34, 0x64, 0x8e, 0x60, 0xdb, 0x7b,
		0x86, 0xaf, 0xbc, 0x53, 0xef, 0x7e, 0xc2};
	static const uint8_t ct_tail[2] = {0x61, 0x16};
	static const uint8_t tag[16] = {0x1a, 0xe1, 0x0b, 0x59, 0x4f, 0x09, 0xe2, 0x6a, 0x7e, 0x90,
		0x2e, 0xcb, 0xd0, 0x60, 0x06, 0x91};
	uint8_t k[32], ct[sizeof(pt) - 1], t[16];

	(void)state;
	for (int i = 0; i < 32; i++)
		k[i] = (uint8_t)(0x80 + i);
	assert_int_equal(sizeof(ct), 114);
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(
		ct, t, NULL, (const uint8_t *)pt, sizeof(ct), aad, sizeof(aad), NULL, iv, k);
	assert_memory_equal(ct, ct_head, 16);
	assert_memory_equal(ct + 112, ct_tail, 2);
	assert_memory_equal(t, tag, 16);
}

/* the key id, the request tag, the accept tag and both connection keys, as Python makes them */
static void known_answers_mac(void **state)
{
	struct rpmafs_key *key = kat_key();
	struct rpmafs_keyring *ring = NULL;
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t tag[16], m[sizeof(msg) - 1], acc[48];
	const char *why;
	char err[512];

	(void)state;
	/* the request of auth_vectors.py proves the key: the C request tag is Python's */
	assert_int_equal(rpmafs_keyring_load(dir, &ring, err, sizeof(err)), 0);
	assert_ptr_equal(rpmafs_auth_request_check(ring, kat_req, sizeof(kat_req), &why),
		rpmafs_keyring_key(ring, 0));
	assert_string_equal(why, "ok");
	assert_memory_equal(kat_req + 24, kat_key_id, 8);

	/* the accept of auth_vectors.py: the C accept tag is Python's */
	assert_int_equal(
		rpmafs_auth_accept_check(key, kat_req, kat_acc, sizeof(kat_acc), false, &snd, &why),
		0);
	assert_string_equal(why, "ok");
	assert_false(rpmafs_auth_encrypts(snd));

	/* k_s2r: the proof and a message's tag are Python's; k_r2s: the ack's */
	rpmafs_auth_seal_proof(snd, tag);
	assert_memory_equal(tag, kat_proof, 16);
	memcpy(m, msg, sizeof(m));
	rpmafs_auth_seal(snd, RPMAFS_IMM_PROMPT | 1, m, sizeof(m), tag);
	assert_memory_equal(tag, kat_msg_tag, 16);
	assert_memory_equal(m, msg, sizeof(m)); /* mac: the payload is not changed */
	rpmafs_auth_seal(snd, 2, NULL, 0, tag);
	assert_memory_equal(tag, kat_empty_tag, 16);
	assert_int_equal(rpmafs_auth_open_ack(snd, kat_ack, sizeof(kat_ack), kat_ack_tag), 0);

	/* the receiver's keys, from an accept it wrote: they open the sender's SENDs */
	assert_int_equal(
		rpmafs_auth_accept_encode(key, kat_req,
			&(struct rpmafs_pdata){
				.max_message = 1 << 20, .credits = 64, .flags = RPMAFS_PDATA_F_ACK},
			false, acc, &rcv),
		0);
	assert_memory_equal(acc, kat_acc, 16); /* all but nonce_r and the tag */
	assert_memory_not_equal(acc + 16, kat_acc + 16, 16);
	rpmafs_auth_delete(&rcv);
	assert_null(rcv);

	/* and the k_s2r/k_r2s of auth_vectors.py are what libsodium uses with them */
	{
		uint8_t n[12] = {0}, t[16];

		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
			m, t, NULL, m, 0, (const uint8_t *)"rpmafs proof 1", 14, NULL, n, kat_s2r);
		assert_memory_equal(t, kat_proof, 16);
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
			m, t, NULL, m, 0, kat_ack, 16, NULL, n, kat_r2s);
		assert_memory_equal(t, kat_ack_tag, 16);
	}
	rpmafs_auth_delete(&snd);
	assert_null(snd);
	rpmafs_keyring_delete(&ring);
	assert_null(ring);
	rpmafs_key_delete(&key);
	assert_null(key);
}

/* encrypt: the ciphertext and tag are OpenSSL's; acks stay mac */
static void known_answers_encrypt(void **state)
{
	struct rpmafs_key *key = kat_key();
	struct rpmafs_auth *snd = NULL;
	uint8_t tag[16], m[sizeof(msg) - 1];
	const char *why;

	(void)state;
	assert_int_equal(rpmafs_auth_accept_check(key, kat_req_enc, kat_acc_enc,
				 sizeof(kat_acc_enc), true, &snd, &why),
		0);
	assert_true(rpmafs_auth_encrypts(snd));
	rpmafs_auth_seal_proof(snd, tag);
	memcpy(m, msg, sizeof(m));
	rpmafs_auth_seal(snd, 1, m, sizeof(m), tag);
	assert_memory_equal(m, kat_sealed, sizeof(m));
	assert_memory_equal(tag, kat_sealed + sizeof(m), 16);
	assert_int_equal(rpmafs_auth_open_ack(snd, kat_ack, sizeof(kat_ack), kat_ack_tag_enc), 0);
	rpmafs_auth_delete(&snd);
	rpmafs_key_delete(&key);
}

static struct rpmafs_keyring *ring;	    /* ringdir's keys: alpha, beta, gamma */
static struct rpmafs_key *alpha, *outsider; /* alpha is in ring, outsider not */

static void load_ring(void)
{
	char err[512];

	if (ring)
		return;
	alpha = random_key("alpha", true);
	rpmafs_key_delete(&(struct rpmafs_key *){random_key("beta", true)});
	rpmafs_key_delete(&(struct rpmafs_key *){random_key("gamma", true)});
	outsider = random_key("outsider", false);
	assert_int_equal(rpmafs_keyring_load(ringdir, &ring, err, sizeof(err)), 0);
	assert_int_equal(rpmafs_keyring_count(ring), 3);
}

/*
 * handshake -- a sender with key against ring: both ends' connection
 * states; want: the sender asks for encrypt; protect: the receiver's
 */
static void handshake(const struct rpmafs_key *key, bool want, bool protect,
	struct rpmafs_auth **snd, struct rpmafs_auth **rcv)
{
	struct rpmafs_pdata pd = {.max_message = 4096, .flags = RPMAFS_PDATA_F_ACK, .session = 9};
	struct rpmafs_pdata ours = {.max_message = 4096, .credits = 8, .flags = RPMAFS_PDATA_F_ACK};
	struct rpmafs_pdata got;
	uint8_t req[56], acc[48];
	const struct rpmafs_key *found;
	const char *why;

	assert_int_equal(rpmafs_auth_request_encode(key, &pd, want, req), 56);
	assert_int_equal(rpmafs_pdata_parse(req, sizeof(req), &got, NULL), RPMAFS_PDATA_OK);
	assert_true(got.auth.on && got.auth.request);
	assert_true(got.auth.encrypt == want);
	found = rpmafs_auth_request_check(ring, req, sizeof(req), &why);
	assert_non_null(found);
	assert_string_equal(rpmafs_key_name(found), rpmafs_key_name(key));
	assert_int_equal(rpmafs_auth_accept_encode(found, req, &ours, protect, acc, rcv), 0);
	assert_int_equal(rpmafs_pdata_parse(acc, sizeof(acc), &got, NULL), RPMAFS_PDATA_OK);
	assert_true(got.auth.on && !got.auth.request);
	assert_true(got.auth.encrypt == (want || protect));
	assert_int_equal(got.credits, 8);
	assert_int_equal(rpmafs_auth_accept_check(key, req, acc, sizeof(acc), want, snd, &why), 0);
	assert_true(rpmafs_auth_encrypts(*snd) == (want || protect));
	assert_true(rpmafs_auth_encrypts(*rcv) == (want || protect));
}

/* a proven pair: the proof sent and opened */
static void proven(bool encrypt, struct rpmafs_auth **snd, struct rpmafs_auth **rcv)
{
	uint8_t tag[16];

	load_ring();
	handshake(alpha, encrypt, false, snd, rcv);
	rpmafs_auth_seal_proof(*snd, tag);
	assert_int_equal(rpmafs_auth_open_proof(*rcv, tag), 0);
}

static void round_trip(bool want, bool protect)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t buf[256], tag[16], ack[16] = "RPAK\x01\x10";
	bool enc = want || protect;

	load_ring();
	handshake(alpha, want, protect, &snd, &rcv);
	/* nothing opens before the proof */
	rpmafs_auth_seal_proof(snd, tag);
	assert_int_equal(rpmafs_auth_open_proof(rcv, tag), 0);
	for (uint32_t i = 1; i <= 40; i++) {
		size_t len = (i * 37) % sizeof(buf); /* 0-byte messages among them */

		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(i + j);
		rpmafs_auth_seal(snd, i, buf, len, tag);
		if (enc && len >= 8) {
			size_t same = 0;

			for (size_t j = 0; j < len; j++)
				same += buf[j] == (uint8_t)(i + j);
			assert_true(same < len / 2); /* encrypt really changes the bytes */
		} else if (!enc) {
			for (size_t j = 0; j < len; j++)
				assert_int_equal(buf[j], (uint8_t)(i + j));
		}
		assert_int_equal(rpmafs_auth_open(rcv, i, buf, len, tag), 0);
		for (size_t j = 0; j < len; j++)
			assert_int_equal(buf[j], (uint8_t)(i + j)); /* open restores them */
		if (i % 4 == 0) {
			rpmafs_auth_seal_ack(rcv, ack, sizeof(ack), tag);
			assert_memory_equal(ack, "RPAK\x01\x10", 6); /* acks are mac */
			assert_int_equal(rpmafs_auth_open_ack(snd, ack, sizeof(ack), tag), 0);
		}
	}
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
	assert_null(snd);
	assert_null(rcv);
}

static void round_trip_mac(void **state)
{
	(void)state;
	round_trip(false, false);
}

static void round_trip_encrypt(void **state)
{
	(void)state;
	round_trip(true, false);
	round_trip(false, true); /* the receiver's protect = encrypt decides */
	round_trip(true, true);
}

/* a message sealed (encrypted) on a connection that was lost is unsealed and sent again */
static void unseal_resend(void **state)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL, *snd2 = NULL, *rcv2 = NULL;
	uint8_t m[64], tag[16];
	uint64_t seq;

	(void)state;
	for (int enc = 0; enc < 2; enc++) {
		proven(enc, &snd, &rcv);
		for (size_t i = 0; i < sizeof(m); i++)
			m[i] = (uint8_t)i;
		seq = rpmafs_auth_next_seq(snd);
		assert_true(seq == 1); /* after the proof */
		rpmafs_auth_seal(snd, 7, m, sizeof(m), tag);
		assert_true(rpmafs_auth_next_seq(snd) == 2);
		assert_true(enc ? m[5] != 5 || m[6] != 6 : m[5] == 5);
		/* lost before it was opened: unsealed, then sent again elsewhere */
		rpmafs_auth_unseal(snd, seq, 7, m, sizeof(m));
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
		for (size_t i = 0; i < sizeof(m); i++)
			assert_int_equal(m[i], (uint8_t)i);
		proven(enc, &snd2, &rcv2);
		rpmafs_auth_seal(snd2, 7, m, sizeof(m), tag);
		assert_int_equal(rpmafs_auth_open(rcv2, 7, m, sizeof(m), tag), 0);
		for (size_t i = 0; i < sizeof(m); i++)
			assert_int_equal(m[i], (uint8_t)i);
		rpmafs_auth_delete(&snd2);
		rpmafs_auth_delete(&rcv2);
	}
}

/* a flipped bit anywhere in a message's payload, tag or imm fails the open, and every later one */
static void flipped_message(void **state)
{
	uint8_t buf[24], tag[16];
	unsigned caught = 0;

	(void)state;
	for (int enc = 0; enc < 2; enc++) {
		for (unsigned bit = 0; bit < (24 + 16 + 4) * 8; bit++) {
			struct rpmafs_auth *snd = NULL, *rcv = NULL;
			uint32_t imm = 0x40000005;

			proven(enc, &snd, &rcv);
			memset(buf, 0x5a, sizeof(buf));
			rpmafs_auth_seal(snd, imm, buf, sizeof(buf), tag);
			if (bit < 24 * 8)
				buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			else if (bit < 40 * 8)
				tag[bit / 8 - 24] ^= (uint8_t)(1u << (bit % 8));
			else
				imm ^= 1u << (bit - 40 * 8);
			assert_int_equal(rpmafs_auth_open(rcv, imm, buf, sizeof(buf), tag), -1);
			/* the connection is done with: the next, good SEND fails too */
			memset(buf, 0x5a, sizeof(buf));
			rpmafs_auth_seal(snd, 6, buf, sizeof(buf), tag);
			assert_int_equal(rpmafs_auth_open(rcv, 6, buf, sizeof(buf), tag), -1);
			caught++;
			rpmafs_auth_delete(&snd);
			rpmafs_auth_delete(&rcv);
		}
	}
	assert_int_equal(caught, 2 * 44 * 8);
}

/* a wrong length: a SEND cut short or longer fails */
static void wrong_length(void **state)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t buf[32] = {0}, tag[16];

	(void)state;
	proven(false, &snd, &rcv);
	rpmafs_auth_seal(snd, 1, buf, 31, tag);
	assert_int_equal(rpmafs_auth_open(rcv, 1, buf, 30, tag), -1);
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
	proven(false, &snd, &rcv);
	rpmafs_auth_seal(snd, 1, buf, 0, tag);
	assert_int_equal(rpmafs_auth_open(rcv, 1, buf, 1, tag), -1);
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
}

/* seq order: a SEND replayed, or one skipped, fails */
static void replay_and_skip(void **state)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t a[8] = "aaaaaaa", b[8] = "bbbbbbb", ta[16], tb[16], keep[8];

	(void)state;
	for (int enc = 0; enc < 2; enc++) {
		proven(enc, &snd, &rcv);
		rpmafs_auth_seal(snd, 1, a, sizeof(a), ta);
		memcpy(keep, a, sizeof(a));
		assert_int_equal(rpmafs_auth_open(rcv, 1, a, sizeof(a), ta), 0);
		/* the same SEND again */
		assert_int_equal(rpmafs_auth_open(rcv, 1, keep, sizeof(keep), ta), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);

		proven(enc, &snd, &rcv);
		rpmafs_auth_seal(snd, 1, a, sizeof(a), ta);
		rpmafs_auth_seal(snd, 2, b, sizeof(b), tb);
		/* a lost: b comes first */
		assert_int_equal(rpmafs_auth_open(rcv, 2, b, sizeof(b), tb), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
	}
}

/* acknowledgements: a flipped bit in the ack or its tag, a replayed ack */
static void flipped_ack(void **state)
{
	uint8_t ack[16], tag[16];

	(void)state;
	for (unsigned bit = 0; bit < 32 * 8; bit++) {
		struct rpmafs_auth *snd = NULL, *rcv = NULL;

		proven(bit & 1, &snd, &rcv);
		memcpy(ack, "RPAK\x01\x10\x00\x00\x05\x00\x00\x00\x08\x00\x00\x00", 16);
		rpmafs_auth_seal_ack(rcv, ack, sizeof(ack), tag);
		if (bit < 128)
			ack[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		else
			tag[bit / 8 - 16] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(rpmafs_auth_open_ack(snd, ack, sizeof(ack), tag), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
	}
	{
		struct rpmafs_auth *snd = NULL, *rcv = NULL;

		proven(false, &snd, &rcv);
		rpmafs_auth_seal_ack(rcv, ack, sizeof(ack), tag);
		assert_int_equal(rpmafs_auth_open_ack(snd, ack, sizeof(ack), tag), 0);
		assert_int_equal(rpmafs_auth_open_ack(snd, ack, sizeof(ack), tag), -1);
		/* an ack is no message: a receiver opens none, a sender opens no message */
		rpmafs_auth_seal_ack(rcv, ack, sizeof(ack), tag);
		assert_int_equal(rpmafs_auth_open(snd, 0, ack, sizeof(ack), tag), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
	}
}

/* the proof: a flipped bit, a message before it, a proof twice or not first */
static void proof_rules(void **state)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t tag[16], buf[4] = "abc";

	(void)state;
	load_ring();
	for (unsigned bit = 0; bit < 128; bit++) {
		handshake(alpha, false, false, &snd, &rcv);
		rpmafs_auth_seal_proof(snd, tag);
		tag[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(rpmafs_auth_open_proof(rcv, tag), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
	}
	/* a message first (a good tag, its seq 0): not delivered */
	handshake(alpha, false, false, &snd, &rcv);
	rpmafs_auth_seal(snd, 0, buf, sizeof(buf), tag);
	assert_int_equal(rpmafs_auth_open(rcv, 0, buf, sizeof(buf), tag), -1);
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
	/* a proof twice */
	handshake(alpha, false, false, &snd, &rcv);
	rpmafs_auth_seal_proof(snd, tag);
	assert_int_equal(rpmafs_auth_open_proof(rcv, tag), 0);
	rpmafs_auth_seal_proof(snd, tag);
	assert_int_equal(rpmafs_auth_open_proof(rcv, tag), -1);
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
	/* a proof of another connection (same key, other nonces) */
	{
		struct rpmafs_auth *snd2 = NULL, *rcv2 = NULL;

		handshake(alpha, false, false, &snd, &rcv);
		handshake(alpha, false, false, &snd2, &rcv2);
		rpmafs_auth_seal_proof(snd2, tag);
		assert_int_equal(rpmafs_auth_open_proof(rcv, tag), -1);
		rpmafs_auth_delete(&snd);
		rpmafs_auth_delete(&rcv);
		rpmafs_auth_delete(&snd2);
		rpmafs_auth_delete(&rcv2);
	}
}

/* the sender's side: a wrong key, a tampered accept, no encrypt when wanted, no version 3 */
static void accept_refusals(void **state)
{
	struct rpmafs_pdata pd = {.max_message = 4096, .flags = RPMAFS_PDATA_F_ACK};
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t req[56], acc[48], bad[64] = {0}, v1[24];
	const char *why;

	(void)state;
	load_ring();
	rpmafs_auth_request_encode(alpha, &pd, false, req);
	assert_int_equal(rpmafs_auth_accept_encode(alpha, req, &pd, false, acc, &rcv), 0);
	rpmafs_auth_delete(&rcv);
	/* a receiver with another key */
	assert_int_equal(
		rpmafs_auth_accept_check(outsider, req, acc, sizeof(acc), false, &snd, &why), -1);
	assert_string_equal(why, "receiver's proof of key failed");
	assert_null(snd);
	/* every bit of the accept */
	for (unsigned bit = 0; bit < 48 * 8; bit++) {
		memcpy(bad, acc, sizeof(acc));
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(
			rpmafs_auth_accept_check(alpha, req, bad, sizeof(acc), false, &snd, &why),
			-1);
		assert_null(snd);
	}
	/* padded with zeros (as IB pads a reply) is fine; junk after it is not */
	memset(bad, 0, sizeof(bad));
	memcpy(bad, acc, sizeof(acc));
	assert_int_equal(
		rpmafs_auth_accept_check(alpha, req, bad, sizeof(bad), false, &snd, &why), 0);
	rpmafs_auth_delete(&snd);
	bad[60] = 1;
	assert_int_equal(
		rpmafs_auth_accept_check(alpha, req, bad, sizeof(bad), false, &snd, &why), -1);
	/* the accept of another request */
	{
		uint8_t req2[56];

		rpmafs_auth_request_encode(alpha, &pd, false, req2);
		assert_int_equal(
			rpmafs_auth_accept_check(alpha, req2, acc, sizeof(acc), false, &snd, &why),
			-1);
		assert_string_equal(why, "receiver's proof of key failed");
	}
	/* encrypt wanted, a (genuine) accept without F_ENCRYPT */
	assert_int_equal(
		rpmafs_auth_accept_check(alpha, req, acc, sizeof(acc), true, &snd, &why), -1);
	assert_string_equal(why, "receiver did not agree to encrypt");
	assert_null(snd);
	/* no version 3: a plain rpmafs receiver, a plain librpma one, a request */
	assert_int_equal(rpmafs_auth_accept_check(
				 alpha, req, v1, rpmafs_pdata_encode(&pd, v1), false, &snd, &why),
		-1);
	assert_string_equal(why, "receiver proves no key");
	assert_int_equal(rpmafs_auth_accept_check(alpha, req, NULL, 0, false, &snd, &why), -1);
	assert_string_equal(why, "receiver proves no key");
	assert_int_equal(
		rpmafs_auth_accept_check(alpha, req, req, sizeof(req), false, &snd, &why), -1);
	assert_string_equal(why, "receiver proves no key");
	/* accept_encode takes only a version 3 request */
	memset(bad, 0, sizeof(bad));
	memcpy(bad, acc, sizeof(acc));
	assert_int_equal(rpmafs_auth_accept_encode(alpha, bad, &pd, false, acc, &rcv), -EINVAL);
	assert_null(rcv);
}

/* the receiver's side: which key, unknown ids, bad tags, no key */
static void request_check(void **state)
{
	struct rpmafs_pdata pd = {.max_message = 4096};
	uint8_t req[56], bad[56], v1[24];
	char unknown[300], err[512];
	const char *why;

	(void)state;
	load_ring();
	snprintf(unknown, sizeof(unknown), "sender's key is not one of %s's", ringdir);
	for (unsigned i = 0; i < rpmafs_keyring_count(ring); i++) {
		const struct rpmafs_key *k = rpmafs_keyring_key(ring, i);

		rpmafs_auth_request_encode(k, &pd, false, req);
		assert_ptr_equal(rpmafs_auth_request_check(ring, req, sizeof(req), &why), k);
	}
	assert_null(rpmafs_keyring_key(ring, 3));
	assert_string_equal(rpmafs_key_name(rpmafs_keyring_key(ring, 0)), "alpha");
	assert_string_equal(rpmafs_key_name(rpmafs_keyring_key(ring, 2)), "gamma");
	/* a key not in the ring */
	rpmafs_auth_request_encode(outsider, &pd, false, req);
	assert_null(rpmafs_auth_request_check(ring, req, sizeof(req), &why));
	assert_string_equal(why, unknown);
	/* every bit of alpha's request: refused (malformed, unknown, or a bad tag) */
	rpmafs_auth_request_encode(alpha, &pd, false, req);
	for (unsigned bit = 0; bit < 56 * 8; bit++) {
		memcpy(bad, req, sizeof(req));
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_null(rpmafs_auth_request_check(ring, bad, sizeof(bad), &why));
		if (bit >= 24 * 8) /* id, nonce, tag */
			assert_string_equal(why, unknown);
	}
	/* no key: nothing, version 1, foreign */
	assert_null(rpmafs_auth_request_check(ring, NULL, 0, &why));
	assert_string_equal(why, "sender proves no key");
	assert_null(rpmafs_auth_request_check(ring, v1, rpmafs_pdata_encode(&pd, v1), &why));
	assert_string_equal(why, "sender proves no key");
	assert_null(rpmafs_auth_request_check(ring, (const uint8_t *)"hello", 5, &why));
	assert_string_equal(why, "sender proves no key");

	/*
	 * ids that collide: a 64-bit BLAKE2b collision cannot be made here, so
	 * the same 32 bytes under two names (one id); and a request with
	 * alpha's id but beta's tag, which must not pass as alpha nor beta
	 */
	{
		struct rpmafs_keyring *twins = NULL;
		char tdir[80];
		uint8_t k[32];

		snprintf(tdir, sizeof(tdir), "%s/twins", dir);
		assert_int_equal(mkdir(tdir, 0700), 0);
		randombytes_buf(k, sizeof(k));
		write_key_in(tdir, "one", k);
		write_key_in(tdir, "two", k);
		assert_int_equal(rpmafs_keyring_load(tdir, &twins, err, sizeof(err)), 0);
		rpmafs_auth_request_encode(rpmafs_keyring_key(twins, 1), &pd, false, req);
		assert_ptr_equal(rpmafs_auth_request_check(twins, req, sizeof(req), &why),
			rpmafs_keyring_key(twins, 0)); /* the first with the id and the tag */
		rpmafs_keyring_delete(&twins);
	}
	{
		uint8_t rb[56];

		rpmafs_auth_request_encode(alpha, &pd, false, req);
		rpmafs_auth_request_encode(rpmafs_keyring_key(ring, 1), &pd, false, rb);
		memcpy(rb + 24, req + 24, 8); /* beta's request under alpha's id */
		assert_null(rpmafs_auth_request_check(ring, rb, sizeof(rb), &why));
		assert_string_equal(why, unknown);
	}
}

static int teardown_all(void **state)
{
	rpmafs_keyring_delete(&ring);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&outsider);
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc8439_aead),
		cmocka_unit_test(known_answers_mac),
		cmocka_unit_test(known_answers_encrypt),
		cmocka_unit_test(round_trip_mac),
		cmocka_unit_test(round_trip_encrypt),
		cmocka_unit_test(unseal_resend),
		cmocka_unit_test(flipped_message),
		cmocka_unit_test(wrong_length),
		cmocka_unit_test(replay_and_skip),
		cmocka_unit_test(flipped_ack),
		cmocka_unit_test(proof_rules),
		cmocka_unit_test(accept_refusals),
		cmocka_unit_test(request_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown_all);
}
