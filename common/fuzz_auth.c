// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_auth.c -- libFuzzer target for what auth.h reads from the network:
 * a connect request (rpmafs_auth_request_check), an accept
 * (rpmafs_auth_accept_check), a SEND's payload, immediate data and tag
 * (rpmafs_auth_open, _open_ack, _open_proof, in mac and encrypt), and the
 * replay window (rpmafs_nonces_seen, against a plain model of it).
 *
 * Besides what ASan and UBSan catch, the target aborts when a promise
 * breaks: nothing but the bytes a key holder made passes a check (random
 * input never proves a key, never opens: a forgery is 2^-64 at best);
 * a refusal says why; a connection that refused once refuses the real
 * thing after it; the window says "seen" exactly for the last capacity
 * distinct nonces it was shown.
 *
 *	ninja -C build-fuzz common/fuzz_auth
 *	build-fuzz/common/fuzz_auth -dict=common/fuzz_auth.dict CORPUS_DIR
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz_auth: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                              \
		}                                                                             \
	} while (0)

#define WINDOW 8

static struct rpmafs_keyring *ring;
static const struct rpmafs_key *key;
static uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
static struct rpmafs_nonces *window;
static uint8_t model[WINDOW][16]; /* the window, oldest first */
static unsigned model_n;

/* setup -- a ring of two keys (in a directory removed again), a request of the first */
static void setup(void)
{
	char dir[] = "/tmp/fuzz-auth.XXXXXX", path[64], err[256];
	struct rpmafs_pdata pd = {.max_message = 4096, .flags = RPMAFS_PDATA_F_ACK, .session = 7};
	uint8_t k[32];

	CHECK(rpmafs_auth_init() == 0);
	CHECK(mkdtemp(dir));
	for (int i = 0; i < 2; i++) {
		int fd;

		memset(k, 0x31 + i, sizeof(k));
		snprintf(path, sizeof(path), "%s/k%d.key", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write(fd, k, sizeof(k)) == (ssize_t)sizeof(k));
		close(fd);
	}
	CHECK(rpmafs_keyring_load(dir, &ring, err, sizeof(err)) == 0);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/k%d.key", dir, i);
		unlink(path);
	}
	rmdir(dir);
	key = rpmafs_keyring_key(ring, 0);
	rpmafs_auth_request_encode(key, &pd, false, req);
	CHECK(rpmafs_nonces_new(WINDOW, &window) == 0);
}

/* a real pair on key: the sender's state, the receiver's (proven when proof) */
static void pair(bool encrypt, bool proof, struct rpmafs_auth **snd, struct rpmafs_auth **rcv)
{
	struct rpmafs_pdata ours = {.max_message = 4096, .credits = 4};
	uint8_t acc[RPMAFS_AUTH_ACCEPT_LEN], tag[16];

	CHECK(rpmafs_auth_accept_encode(key, req, &ours, encrypt, acc, rcv) == 0);
	CHECK(rpmafs_auth_accept_check(key, req, acc, sizeof(acc), encrypt, snd, NULL) == 0);
	if (proof) {
		rpmafs_auth_seal_proof(*snd, tag);
		CHECK(rpmafs_auth_open_proof(*rcv, tag) == 0);
	}
}

static bool model_seen(const uint8_t *n)
{
	for (unsigned i = 0; i < model_n; i++)
		if (memcmp(model[i], n, 16) == 0)
			return true;
	if (model_n == WINDOW) {
		memmove(model[0], model[1], (WINDOW - 1) * 16);
		model_n--;
	}
	memcpy(model[model_n++], n, 16);
	return false;
}

/* open -- data as imm (4 bytes), payload, tag (the last 16): refused; then a real SEND too */
static void fuzz_open(const uint8_t *data, size_t size, int what, bool encrypt)
{
	struct rpmafs_auth *snd = NULL, *rcv = NULL;
	uint8_t *buf, tag[16], good[8] = "genuine";
	uint32_t imm = 0;
	size_t len;

	if (size < 4 + 16)
		return;
	memcpy(&imm, data, 4);
	len = size - 4 - 16;
	buf = malloc(len ? len : 1); /* exactly len: a byte too far is an ASan report */
	CHECK(buf);
	memcpy(buf, data + 4, len);
	memcpy(tag, data + 4 + len, 16);
	pair(encrypt, what != 2, &snd, &rcv);
	switch (what) {
	case 0: /* a message */
		CHECK(rpmafs_auth_open(rcv, imm, buf, len, tag) == -1);
		rpmafs_auth_seal(snd, 1, good, sizeof(good), tag);
		CHECK(rpmafs_auth_open(rcv, 1, good, sizeof(good), tag) == -1);
		break;
	case 1: /* an acknowledgement */
		CHECK(rpmafs_auth_open_ack(snd, buf, len, tag) == -1);
		rpmafs_auth_seal_ack(rcv, good, sizeof(good), tag);
		CHECK(rpmafs_auth_open_ack(snd, good, sizeof(good), tag) == -1);
		break;
	default: /* a proof */
		CHECK(rpmafs_auth_open_proof(rcv, tag) == -1);
		rpmafs_auth_seal_proof(snd, tag);
		CHECK(rpmafs_auth_open_proof(rcv, tag) == -1);
		break;
	}
	rpmafs_auth_delete(&snd);
	rpmafs_auth_delete(&rcv);
	CHECK(!snd && !rcv);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpmafs_auth *conn = NULL;
	const char *why = NULL;
	uint8_t *copy;
	int op;

	if (!ring)
		setup();
	if (size == 0)
		return 0;
	op = data[0] % 6;
	data++;
	size--;
	if (size > 255)
		size = 255; /* the RDMA CM's most */
	copy = malloc(size ? size : 1);
	CHECK(copy);
	memcpy(copy, data, size);
	switch (op) {
	case 0: /* a connect request */
		CHECK(rpmafs_auth_request_check(ring, size ? copy : NULL, size, &why) == NULL ||
			(size >= 56 && memcmp(copy, req, 56) == 0));
		CHECK(why && why[0]);
		break;
	case 1: /* an accept of our request */
		CHECK(rpmafs_auth_accept_check(
			      key, req, size ? copy : NULL, size, false, &conn, &why) == -1);
		CHECK(conn == NULL && why && why[0] && strcmp(why, "ok") != 0);
		break;
	case 2: /* the window */
		for (size_t at = 0; at + 16 <= size; at += 16)
			CHECK(rpmafs_nonces_seen(window, copy + at) == model_seen(copy + at));
		break;
	default: /* a SEND: message, ack, proof; mac or encrypt by the next byte */
		fuzz_open(copy, size, op - 3, size && (copy[0] & 0x80));
		break;
	}
	free(copy);
	return 0;
}
