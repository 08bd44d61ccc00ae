// SPDX-License-Identifier: BSD-3-Clause
/* state.c -- rpma-recv's state file (see state.h) */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"
#include "state.h"

#define HEADER_MAGIC "RPRS"
#define SLOT_MAGIC "RPSL"
#define VERSION 1
/* the sessions blob: 32 bytes of head, 32 per session, 8 of checksum (sessions.h) */
#define BLOB_SIZE(n) (40 + 32 * (size_t)(n))

struct recv_state {
	int fd;
	uint32_t slot_size;
	uint64_t gen; /* of the last slot written */
	uint8_t *buf; /* one slot */
};

uint32_t recv_state_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	static bool ready;
	const uint8_t *p = buf;

	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			table[i] = c;
		}
		ready = true;
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int recv_state_path(enum recv_format format, const char *output, char *buf, size_t cap)
{
	int n;

	if (format == RECV_FORMAT_DIR) {
		n = snprintf(buf, cap, "%s/" RECV_STATE_NAME, output);
	} else {
		const char *slash = strrchr(output, '/');

		if (slash)
			n = snprintf(buf, cap, "%.*s.%s" RECV_STATE_NAME, (int)(slash + 1 - output),
				output, slash + 1);
		else
			n = snprintf(buf, cap, ".%s" RECV_STATE_NAME, output);
	}
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static void encode_header(uint8_t h[RECV_STATE_HEADER], uint32_t slot_size, enum recv_format f)
{
	memset(h, 0, RECV_STATE_HEADER);
	memcpy(h, HEADER_MAGIC, 4);
	put_le16(h + 4, VERSION);
	put_le16(h + 6, RECV_STATE_HEADER);
	put_le32(h + 8, slot_size);
	put_le32(h + 12, (uint32_t)f);
	put_le32(h + 60, recv_state_crc32c(0, h, 60));
}

/* a valid slot of at most cap bytes at buf: its blob length, else -1 */
static long check_slot(const uint8_t *buf, size_t cap)
{
	uint32_t len, crc;

	if (cap < RECV_STATE_SLOT_HEAD || memcmp(buf, SLOT_MAGIC, 4))
		return -1;
	len = get_le32(buf + 4);
	if (len > cap - RECV_STATE_SLOT_HEAD || get_le32(buf + 24))
		return -1;
	crc = recv_state_crc32c(0, buf, 28);
	crc = recv_state_crc32c(crc, buf + RECV_STATE_SLOT_HEAD, len);
	return crc == get_le32(buf + 28) ? (long)len : -1;
}

static int read_all(int fd, void *buf, size_t len, off_t at, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, at + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	*got = done;
	return 0;
}

int recv_state_load(const char *path, enum recv_format format, struct rpmafs_sessions *sessions,
	uint64_t *position, const char **why)
{
	uint8_t h[RECV_STATE_HEADER];
	uint8_t *slot[2] = {NULL, NULL};
	long len[2] = {-1, -1};
	uint32_t slot_size;
	size_t got;
	int fd, ret, best;

	*why = "ok";
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		*why = "cannot open it";
		return -errno;
	}
	ret = read_all(fd, h, sizeof(h), 0, &got);
	if (ret) {
		*why = "cannot read it";
		goto out;
	}
	ret = -EINVAL;
	if (got < sizeof(h) || memcmp(h, HEADER_MAGIC, 4) || get_le16(h + 4) != VERSION ||
		get_le16(h + 6) != RECV_STATE_HEADER ||
		get_le32(h + 60) != recv_state_crc32c(0, h, 60)) {
		*why = "its header is damaged (not an rpma-recv state file?)";
		goto out;
	}
	slot_size = get_le32(h + 8);
	if (slot_size < RECV_STATE_SLOT_HEAD + BLOB_SIZE(0) ||
		slot_size > RECV_STATE_SLOT_HEAD + BLOB_SIZE(RPMAFS_SESSIONS_MAX_LIMIT)) {
		*why = "its header is damaged (slot size)";
		goto out;
	}
	if (get_le32(h + 12) != (uint32_t)format) {
		*why = "it was written for another --format";
		ret = -EMEDIUMTYPE;
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		slot[k] = malloc(slot_size);
		if (!slot[k]) {
			ret = -ENOMEM;
			*why = "out of memory";
			goto out;
		}
		ret = read_all(fd, slot[k], slot_size,
			(off_t)RECV_STATE_HEADER + (off_t)k * slot_size, &got);
		if (ret) {
			*why = "cannot read it";
			goto out;
		}
		len[k] = check_slot(slot[k], got);
	}
	if (len[0] < 0 && len[1] < 0) {
		ret = -EINVAL;
		*why = "neither of its slots is whole";
		goto out;
	}
	best = len[0] < 0 ? 1 : len[1] < 0 ? 0 : get_le64(slot[1] + 8) > get_le64(slot[0] + 8);
	ret = rpmafs_sessions_decode(
		sessions, slot[best] + RECV_STATE_SLOT_HEAD, (size_t)len[best]);
	if (ret) {
		*why = "its sessions do not decode";
		goto out;
	}
	*position = get_le64(slot[best] + 16);
	ret = 1;
out:
	free(slot[0]);
	free(slot[1]);
	close(fd);
	return ret;
}

static int write_all_at(int fd, const void *buf, size_t len, off_t at)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const uint8_t *)buf + done, len - done, at + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

/* the slot for gen into st->buf: its length, or 0 when the sessions do not fit */
static size_t encode_slot(struct recv_state *st, uint64_t gen, uint64_t position,
	const struct rpmafs_sessions *sessions)
{
	uint8_t *b = st->buf;
	size_t len = rpmafs_sessions_encode(
		sessions, b + RECV_STATE_SLOT_HEAD, st->slot_size - RECV_STATE_SLOT_HEAD);
	uint32_t crc;

	if (!len)
		return 0;
	memcpy(b, SLOT_MAGIC, 4);
	put_le32(b + 4, (uint32_t)len);
	put_le64(b + 8, gen);
	put_le64(b + 16, position);
	put_le32(b + 24, 0);
	crc = recv_state_crc32c(0, b, 28);
	crc = recv_state_crc32c(crc, b + RECV_STATE_SLOT_HEAD, len);
	put_le32(b + 28, crc);
	return RECV_STATE_SLOT_HEAD + len;
}

static int sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, ret = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

int recv_state_create(const char *path, enum recv_format format, unsigned max_sessions,
	uint64_t position, const struct rpmafs_sessions *sessions, struct recv_state **out)
{
	struct recv_state *st;
	uint8_t h[RECV_STATE_HEADER];
	size_t plen = strlen(path), len;
	char *tmp;
	int ret;

	if (max_sessions > RPMAFS_SESSIONS_MAX_LIMIT)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	tmp = malloc(plen + 5);
	if (!st || !tmp) {
		free(st);
		free(tmp);
		return -ENOMEM;
	}
	memcpy(tmp, path, plen);
	memcpy(tmp + plen, ".tmp", 5);
	st->fd = -1;
	st->slot_size = (uint32_t)(RECV_STATE_SLOT_HEAD + BLOB_SIZE(max_sessions));
	st->buf = malloc(st->slot_size);
	if (!st->buf) {
		ret = -ENOMEM;
		goto fail;
	}
	(void)unlink(tmp); /* a leftover of a start that was cut short */
	st->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (st->fd < 0) {
		ret = -errno;
		goto fail;
	}
	encode_header(h, st->slot_size, format);
	len = encode_slot(st, 1, position, sessions);
	ret = len ? 0 : -EOVERFLOW;
	if (!ret)
		ret = write_all_at(st->fd, h, sizeof(h), 0);
	if (!ret)
		ret = write_all_at(st->fd, st->buf, len, RECV_STATE_HEADER);
	if (!ret && fsync(st->fd))
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		(void)unlink(tmp);
		goto fail;
	}
	ret = sync_dir_of(path);
	if (ret)
		goto fail;
	st->gen = 1;
	free(tmp);
	*out = st;
	return 0;
fail:
	recv_state_close(&st);
	free(tmp);
	return ret;
}

int recv_state_save(struct recv_state *st, uint64_t position,
	const struct rpmafs_sessions *sessions, bool durable)
{
	uint64_t gen = st->gen + 1;
	size_t len = encode_slot(st, gen, position, sessions);
	int ret;

	if (!len)
		return -EOVERFLOW;
	ret = write_all_at(st->fd, st->buf, len,
		(off_t)RECV_STATE_HEADER + (off_t)(gen & 1 ? 0 : 1) * st->slot_size);
	if (!ret && durable && fdatasync(st->fd))
		ret = -errno;
	if (!ret)
		st->gen = gen;
	return ret;
}

int recv_state_remove(const char *path)
{
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return 0;
}

void recv_state_close(struct recv_state **stp)
{
	struct recv_state *st = *stp;

	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	free(st->buf);
	free(st);
	*stp = NULL;
}
