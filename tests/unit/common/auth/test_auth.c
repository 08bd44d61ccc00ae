// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_auth.c -- the version 3 handshake and the tags of every SEND
 * (common/auth.c): round trips in both modes, a flipped bit anywhere
 * caught, SENDs replayed or skipped, the proof's rules, the refusals of
 * both ends (the known answers are test_auth_kat.c's)
 */

#include "auth_test.h"

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
