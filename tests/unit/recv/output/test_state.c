// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_state.c -- rpma-recv's state file and the output's recovery at
 * start: every tear of the state file or the output comes back to a state
 * that was saved whole, never past what was acknowledged
 */

#include <dirent.h>
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

#include "output.h"
#include "sessions.h"
#include "state.h"

struct fixture {
	char dir[64];
	char out[96];
	char st[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test-recv-state.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	assert_int_equal(recv_state_path(RECV_FORMAT_LEN, f->out, f->st, sizeof(f->st)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void put(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static struct rpmafs_sessions *table(void)
{
	struct rpmafs_sessions *s;

	assert_int_equal(rpmafs_sessions_new(NULL, &s), 0);
	return s;
}

static void crc32c_and_paths(void **unused)
{
	char p[64];

	(void)unused;
	/* the check value of CRC-32C */
	assert_int_equal(recv_state_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(
		recv_state_crc32c(recv_state_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
	assert_int_equal(recv_state_path(RECV_FORMAT_DIR, "/a/d", p, sizeof(p)), 0);
	assert_string_equal(p, "/a/d/.rpma-recv-state");
	assert_int_equal(recv_state_path(RECV_FORMAT_LEN, "/a/b/out.bin", p, sizeof(p)), 0);
	assert_string_equal(p, "/a/b/.out.bin.rpma-recv-state");
	assert_int_equal(recv_state_path(RECV_FORMAT_RAW, "out", p, sizeof(p)), 0);
	assert_string_equal(p, ".out.rpma-recv-state");
	assert_int_equal(recv_state_path(RECV_FORMAT_RAW, "out", p, 5), -1);
}

/* saved, loaded: the position and the sessions come back; none: 0; another format refused */
static void round_trip(void **state)
{
	struct fixture *f = *state;
	struct rpmafs_sessions *s = table(), *t = table();
	struct recv_state *st;
	uint64_t pos = 0;
	const char *why;

	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why), 0);
	rpmafs_sessions_mark(s, 0xabcdef, 7, 1000);
	assert_int_equal(recv_state_create(f->st, RECV_FORMAT_LEN, 16, 123, s, &st), 0);
	rpmafs_sessions_mark(s, 0x1234, 3, 1000);
	assert_int_equal(recv_state_save(st, 456, s, true), 0);
	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why), 1);
	assert_int_equal(pos, 456);
	assert_int_equal(rpmafs_sessions_count(t), 2);
	assert_true(rpmafs_sessions_seen(t, 0xabcdef, 7, 1000));
	assert_true(rpmafs_sessions_seen(t, 0x1234, 3, 1000));
	assert_false(rpmafs_sessions_seen(t, 0x1234, 4, 1000));
	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_DIR, t, &pos, &why), -EMEDIUMTYPE);
	/* many saves: still the last */
	for (uint64_t i = 0; i < 7; i++)
		assert_int_equal(recv_state_save(st, 1000 + i, s, false), 0);
	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why), 1);
	assert_int_equal(pos, 1006);
	recv_state_close(&st);
	/* a run with --max-sessions 1 after: the most recent kept, and it fits */
	rpmafs_sessions_delete(&t);
	assert_int_equal(
		rpmafs_sessions_new(
			&(struct rpmafs_sessions_limits){1, RPMAFS_SESSIONS_TTL_DEFAULT_MS}, &t),
		0);
	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why), 1);
	assert_int_equal(rpmafs_sessions_count(t), 1);
	assert_true(rpmafs_sessions_seen(t, 0x1234, 3, 1000));
	assert_int_equal(recv_state_create(f->st, RECV_FORMAT_LEN, 1, 9, t, &st), 0);
	recv_state_close(&st);
	rpmafs_sessions_delete(&s);
	rpmafs_sessions_delete(&t);
}

/*
 * The state file cut at every length, and a save torn at every byte:
 * loaded is always a state saved whole (the newest whole one), or the
 * start is refused (-EINVAL) when nothing whole is left -- never garbage.
 */
static void torn_state_file(void **state)
{
	struct fixture *f = *state;
	struct rpmafs_sessions *s = table(), *t = table();
	struct recv_state *st;
	uint8_t *a, *b, *cut;
	size_t alen, blen, len1;
	uint64_t pos;
	const char *why;
	int ret;

	rpmafs_sessions_mark(s, 0x77, 1, 1000);
	assert_int_equal(recv_state_create(f->st, RECV_FORMAT_LEN, 4, 10, s, &st), 0);
	len1 = RECV_STATE_HEADER + RECV_STATE_SLOT_HEAD + rpmafs_sessions_encoded_size(s);
	rpmafs_sessions_mark(s, 0x77, 2, 1000);
	assert_int_equal(recv_state_save(st, 20, s, false), 0); /* slot 1 */
	a = slurp(f->st, &alen);

	/* cut at every length */
	for (size_t l = 0; l <= alen; l++) {
		put(f->st, a, l);
		pos = 0;
		ret = recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why);
		if (l == alen) {
			assert_int_equal(ret, 1);
			assert_int_equal(pos, 20);
		} else if (l >= len1) {
			assert_int_equal(ret, 1);
			assert_int_equal(pos, 10); /* slot 1 torn: slot 0 */
			assert_true(rpmafs_sessions_seen(t, 0x77, 1, 1000));
			assert_false(rpmafs_sessions_seen(t, 0x77, 2, 1000));
		} else {
			assert_int_equal(ret, -EINVAL);
		}
	}

	/* the next save (slot 0) torn at every byte: the one before (20) stays */
	put(f->st, a, alen);
	rpmafs_sessions_mark(s, 0x77, 3, 1000);
	assert_int_equal(recv_state_save(st, 30, s, false), 0);
	b = slurp(f->st, &blen);
	cut = malloc(alen > blen ? alen : blen);
	assert_non_null(cut);
	for (size_t k = 0; k < len1 + 32; k++) {
		size_t n = alen > blen ? alen : blen;

		memcpy(cut, a, alen);
		if (n > alen)
			memset(cut + alen, 0, n - alen);
		memcpy(cut + RECV_STATE_HEADER, b + RECV_STATE_HEADER, k);
		put(f->st, cut, n);
		ret = recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why);
		assert_int_equal(ret, 1);
		if (k < len1 - RECV_STATE_HEADER) {
			assert_int_equal(pos, 20);
			assert_false(rpmafs_sessions_seen(t, 0x77, 3, 1000));
		} else {
			assert_int_equal(pos, 30);
			assert_true(rpmafs_sessions_seen(t, 0x77, 3, 1000));
		}
	}
	/* a damaged header is refused */
	memcpy(cut, b, blen);
	cut[9] ^= 1;
	put(f->st, cut, blen);
	assert_int_equal(recv_state_load(f->st, RECV_FORMAT_LEN, t, &pos, &why), -EINVAL);
	free(cut);
	free(a);
	free(b);
	recv_state_close(&st);
	rpmafs_sessions_delete(&s);
	rpmafs_sessions_delete(&t);
}

/* len records of 0, 1, 2, ... bytes */
static size_t len_records(uint8_t *buf, size_t n, size_t *ends)
{
	size_t at = 0;

	for (size_t r = 0; r < n; r++) {
		buf[at] = (uint8_t)r;
		buf[at + 1] = buf[at + 2] = buf[at + 3] = 0;
		memset(buf + at + 4, 'a' + (int)r, r);
		at += 4 + r;
		ends[r] = at;
	}
	return at;
}

/*
 * The output cut at every byte and opened again: with the state's
 * position, cut back to it (a file shorter than it: the whole records);
 * without, len keeps its whole records, lines its whole lines, raw all
 */
static void torn_output(void **state)
{
	struct fixture *f = *state;
	uint8_t full[256], *got;
	size_t ends[8], total = len_records(full, 8, ends), len;
	struct recv_output *out;
	uint64_t cut, pos;

	for (size_t l = 0; l <= total; l++) {
		size_t whole = 0;

		for (size_t r = 0; r < 8; r++)
			if (ends[r] <= l)
				whole = ends[r];
		/* without a state */
		put(f->out, full, l);
		assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out, &out), 0);
		assert_int_equal(recv_output_recover(out, NULL, &cut), 0);
		assert_int_equal(recv_output_position(out), whole);
		assert_int_equal(cut, l - whole);
		assert_int_equal(recv_output_write(out, "z", 1), 0);
		assert_int_equal(recv_output_close(&out), 0);
		got = slurp(f->out, &len);
		assert_int_equal(len, whole + 5);
		assert_memory_equal(got, full, whole);
		assert_memory_equal(got + whole, "\1\0\0\0z", 5);
		free(got);
		/* with the state of ends[4] acknowledged */
		put(f->out, full, l);
		pos = ends[4];
		assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out, &out), 0);
		assert_int_equal(recv_output_recover(out, &pos, &cut), 0);
		assert_int_equal(recv_output_position(out), l >= ends[4] ? ends[4] : whole);
		assert_int_equal(recv_output_close(&out), 0);
		/* lines: whole lines; raw: all */
		put(f->out, (const uint8_t *)"one\ntwo\nthr", l % 12);
		assert_int_equal(recv_output_open(RECV_FORMAT_LINES, f->out, &out), 0);
		assert_int_equal(recv_output_recover(out, NULL, &cut), 0);
		assert_int_equal(recv_output_position(out), l % 12 >= 8 ? 8 : l % 12 >= 4 ? 4 : 0);
		assert_int_equal(recv_output_close(&out), 0);
		put(f->out, (const uint8_t *)"one\ntwo\nthr", l % 12);
		assert_int_equal(recv_output_open(RECV_FORMAT_RAW, f->out, &out), 0);
		assert_int_equal(recv_output_recover(out, NULL, &cut), 0);
		assert_int_equal(recv_output_position(out), l % 12);
		assert_int_equal(recv_output_close(&out), 0);
	}
}

static bool exists(const char *dir, const char *name)
{
	char p[192];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* dir: files at or past the recorded number go, and leftover temporaries; numbering goes on */
static void dir_recovery(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out;
	uint64_t cut, pos = 4;
	char p[192];

	assert_int_equal(mkdir(f->out, 0755), 0);
	for (int i = 1; i <= 5; i++) {
		snprintf(p, sizeof(p), "%s/%020d", f->out, i);
		put(p, (const uint8_t *)"x", 1);
	}
	snprintf(p, sizeof(p), "%s/.%020d.tmp", f->out, 6);
	put(p, (const uint8_t *)"x", 1);
	snprintf(p, sizeof(p), "%s/other", f->out);
	put(p, (const uint8_t *)"x", 1);
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->out, &out), 0);
	assert_int_equal(recv_output_position(out), 6);
	assert_int_equal(recv_output_recover(out, &pos, &cut), 0);
	assert_int_equal(cut, 2);
	assert_int_equal(recv_output_position(out), 4);
	assert_int_equal(recv_output_write(out, "y", 1), 0);
	assert_int_equal(recv_output_close(&out), 0);
	assert_true(exists(f->out, "00000000000000000003"));
	assert_true(exists(f->out, "00000000000000000004"));
	assert_false(exists(f->out, "00000000000000000005"));
	assert_false(exists(f->out, ".00000000000000000006.tmp"));
	assert_true(exists(f->out, "other"));
	/* a consumer took files away: the recorded number still goes on from where it was */
	pos = 9;
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->out, &out), 0);
	assert_int_equal(recv_output_recover(out, &pos, &cut), 0);
	assert_int_equal(recv_output_position(out), 9);
	assert_int_equal(recv_output_close(&out), 0);
}

/* a second open of the same output is refused while the first holds it; --fresh truncates */
static void lock_and_fresh(void **state)
{
	struct fixture *f = *state;
	struct recv_output *a, *b;

	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out, &a), 0);
	assert_int_equal(recv_output_write(a, "abc", 3), 0);
	assert_int_equal(recv_output_open(RECV_FORMAT_LINES, f->out, &b), -EWOULDBLOCK);
	assert_int_equal(recv_output_close(&a), 0);
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out, &b), 0);
	assert_int_equal(recv_output_position(b), 7); /* continued, not truncated */
	assert_int_equal(recv_output_truncate(b), 0);
	assert_int_equal(recv_output_position(b), 0);
	assert_int_equal(recv_output_close(&b), 0);
	assert_int_equal(mkdir(f->st, 0755), 0); /* any name: a dir output */
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->st, &a), 0);
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->st, &b), -EWOULDBLOCK);
	assert_int_equal(recv_output_close(&a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32c_and_paths),
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_state_file, setup, teardown),
		cmocka_unit_test_setup_teardown(torn_output, setup, teardown),
		cmocka_unit_test_setup_teardown(dir_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(lock_and_fresh, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
