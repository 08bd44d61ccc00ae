// SPDX-License-Identifier: BSD-3-Clause
/* test_output.c -- rpma-recv's output formats, read back from real files */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output.h"

struct fixture {
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test-recv-output.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/out", f->dir);
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
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static void write_ok(struct recv_output *out, const void *msg, size_t len)
{
	assert_int_equal(recv_output_write(out, msg, len), 0);
}

static void format_names(void **unused)
{
	static const char *const names[] = {"raw", "lines", "len", "dir"};
	enum recv_format f;

	(void)unused;
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(recv_format_parse(names[i], &f), 0);
		assert_string_equal(recv_format_name(f), names[i]);
	}
	assert_int_equal(recv_format_parse("Raw", &f), -1);
	assert_int_equal(recv_format_parse("", &f), -1);
}

static void raw_is_the_payloads_back_to_back(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out;
	size_t len;
	uint8_t *got;

	assert_int_equal(recv_output_open(RECV_FORMAT_RAW, f->path, &out), 0);
	assert_string_equal(recv_output_name(out), f->path);
	write_ok(out, "abc", 3);
	write_ok(out, NULL, 0);
	write_ok(out, "\n\\\0x", 4);
	assert_int_equal(recv_output_close(&out), 0);
	assert_null(out);

	got = slurp(f->path, &len);
	assert_int_equal(len, 7);
	assert_memory_equal(got, "abc\n\\\0x", 7);
	free(got);
}

/* the lines rule, written out independently of output.c */
static size_t encode_line(const uint8_t *m, size_t len, uint8_t *line)
{
	size_t n = 0;

	if (len && m[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++) {
		if (m[i] == '\\' || m[i] == '\n') {
			line[n++] = '\\';
			line[n++] = m[i] == '\n' ? 'n' : '\\';
		} else {
			line[n++] = m[i];
		}
	}
	line[n++] = '\n';
	return n;
}

static void lines_examples(void **state)
{
	static const struct {
		const char *msg;
		size_t len;
		const char *line;
	} cases[] = {
		{"hi\n", 3, "hi\n"}, /* echo hi: the newline is the line's */
		{"", 0, "\n"},	     /* a 0-byte message is an empty line */
		{"\n", 1, "\n"},     /* one trailing newline only is dropped */
		{"\n\n", 2, "\\n\n"},
		{"a\nb", 3, "a\\nb\n"},	     /* no trailing newline: nothing dropped */
		{"a\\b", 3, "a\\\\b\n"},     /* backslashes doubled */
		{"\\n", 2, "\\\\n\n"},	     /* a literal backslash-n stays tellable */
		{"a\0b\r\n", 5, "a\0b\r\n"}, /* other bytes pass as they are */
	};
	struct fixture *f = *state;
	struct recv_output *out;
	char want[64];
	size_t wlen = 0, len;
	uint8_t *got;

	assert_int_equal(recv_output_open(RECV_FORMAT_LINES, f->path, &out), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t l = i == 7 ? 5 : strlen(cases[i].line);

		write_ok(out, cases[i].msg, cases[i].len);
		memcpy(want + wlen, cases[i].line, l);
		wlen += l;
	}
	assert_int_equal(recv_output_close(&out), 0);
	got = slurp(f->path, &len);
	assert_int_equal(len, wlen);
	assert_memory_equal(got, want, wlen);
	free(got);
}

static void lines_long_messages_cross_chunks(void **state)
{
	/* escaped sizes that land on and around the 64 KiB staging chunk */
	static const size_t lens[] = {32766, 32767, 32768, 65533, 65534, 65535, 65536, 200001};
	struct fixture *f = *state;
	struct recv_output *out;
	uint8_t *msg, *want, *got;
	size_t wlen = 0, len;

	msg = malloc(200001);
	want = malloc(8 * (2 * 200001 + 1));
	assert_non_null(msg);
	assert_non_null(want);
	assert_int_equal(recv_output_open(RECV_FORMAT_LINES, f->path, &out), 0);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (size_t i = 0; i < lens[k]; i++) /* mostly escapes, some plain */
			msg[i] = (uint8_t)(k % 2 ? "\\\n"[i % 2] : (i % 3 ? '\\' : 'x'));
		write_ok(out, msg, lens[k]);
		wlen += encode_line(msg, lens[k], want + wlen);
	}
	assert_int_equal(recv_output_close(&out), 0);
	got = slurp(f->path, &len);
	assert_int_equal(len, wlen);
	assert_memory_equal(got, want, wlen);
	free(got);
	free(want);
	free(msg);
}

static void len_records(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out;
	uint8_t *big = malloc(70000), *got;
	size_t len;

	assert_non_null(big);
	for (size_t i = 0; i < 70000; i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->path, &out), 0);
	write_ok(out, NULL, 0);
	write_ok(out, "\n", 1);
	write_ok(out, big, 70000);
	assert_int_equal(recv_output_close(&out), 0);

	got = slurp(f->path, &len);
	assert_int_equal(len, 4 + 5 + 4 + 70000);
	assert_memory_equal(got, "\0\0\0\0\1\0\0\0\n", 9);
	assert_memory_equal(got + 9, "\x70\x11\x01\x00", 4); /* 70000 little-endian */
	assert_memory_equal(got + 13, big, 70000);
	free(got);
	free(big);
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && strcmp(de->d_name, ".") &&
			strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void file_is(const char *dir, const char *name, const void *data, size_t n)
{
	char path[160];
	size_t len;
	uint8_t *got;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	got = slurp(path, &len);
	assert_int_equal(len, n);
	assert_memory_equal(got, data, n);
	free(got);
}

static void dir_files_continue_after_existing(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out;
	char path[160];
	FILE *fp;

	/* a created directory starts at 1 */
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), 0);
	write_ok(out, "first", 5);
	assert_int_equal(recv_output_close(&out), 0);
	file_is(f->path, "00000000000000000001", "first", 5);

	/* what is already there is kept; numbering goes on after the highest */
	snprintf(path, sizeof(path), "%s/00000000000000000041", f->path);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/99999999999999999999x", f->path); /* not ours */
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);

	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), 0);
	assert_string_equal(recv_output_name(out), f->path);
	write_ok(out, NULL, 0);
	write_ok(out, "../../etc/passwd", 16); /* content never names a file */
	assert_int_equal(recv_output_close(&out), 0);

	file_is(f->path, "00000000000000000042", "", 0);
	file_is(f->path, "00000000000000000043", "../../etc/passwd", 16);
	file_is(f->path, "00000000000000000001", "first", 5);
	assert_int_equal(count_entries(f->path, "."), 0); /* no temporary files left */
	assert_int_equal(count_entries(f->path, ""), 5);
}

/* --fsync: syncing a file, a durable directory, and an output that cannot be synced */
static void sync_makes_records_durable(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out;
	int fds[2];

	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->path, &out), 0);
	write_ok(out, "abc", 3);
	assert_int_equal(recv_output_sync(out), 0);
	assert_int_equal(recv_output_close(&out), 0);

	snprintf(f->path + strlen(f->path), sizeof(f->path) - strlen(f->path), ".d");
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), 0);
	recv_output_set_durable(out, true);
	write_ok(out, "durable", 7);
	assert_int_equal(recv_output_sync(out), 0);
	assert_int_equal(recv_output_close(&out), 0);
	file_is(f->path, "00000000000000000001", "durable", 7);

	/* a pipe has nothing to sync: that is no error */
	assert_int_equal(pipe(fds), 0);
	int saved = dup(1);

	assert_true(saved >= 0);
	assert_int_equal(dup2(fds[1], 1), 1);
	assert_int_equal(recv_output_open(RECV_FORMAT_RAW, NULL, &out), 0);
	write_ok(out, "x", 1);
	assert_int_equal(recv_output_sync(out), 0);
	assert_int_equal(recv_output_close(&out), 0);
	assert_int_equal(dup2(saved, 1), 1);
	close(saved);
	close(fds[0]);
	close(fds[1]);
}

static void dir_needs_a_directory(void **state)
{
	struct fixture *f = *state;
	struct recv_output *out = NULL;
	FILE *fp = fopen(f->path, "w");

	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), -ENOTDIR);
	assert_null(out);
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, NULL, &out), -EINVAL);
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, "/nonexistent/dir/x", &out), -ENOENT);
}

/*
 * A record that does not fit (RLIMIT_FSIZE stands in for a full disk: the
 * write is cut short, then fails) is removed again, so the file holds only
 * whole records and the next record that fits follows them.
 */
static void failed_record_is_rolled_back(void **state)
{
	static const enum recv_format formats[] = {
		RECV_FORMAT_RAW, RECV_FORMAT_LINES, RECV_FORMAT_LEN};
	struct fixture *f = *state;
	struct recv_output *out;
	struct rlimit old, small = {10000, 0};
	uint8_t msg[6000];
	uint8_t *got;
	size_t len, first;

	memset(msg, 'm', sizeof(msg));
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;

	for (size_t i = 0; i < 3; i++) {
		unlink(f->path); /* an output is continued, never truncated: start anew */
		assert_int_equal(recv_output_open(formats[i], f->path, &out), 0);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
		write_ok(out, msg, sizeof(msg));
		first = formats[i] == RECV_FORMAT_RAW	? 6000
			: formats[i] == RECV_FORMAT_LEN ? 6004
							: 6001;
		assert_int_equal(recv_output_write(out, msg, sizeof(msg)), -EFBIG);
		write_ok(out, "ok", 2);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
		assert_int_equal(recv_output_close(&out), 0);

		got = slurp(f->path, &len);
		assert_int_equal(len, first + (formats[i] == RECV_FORMAT_LEN		? 6
						      : formats[i] == RECV_FORMAT_LINES ? 3
											: 2));
		assert_memory_equal(got + first + (formats[i] == RECV_FORMAT_LEN ? 4 : 0), "ok", 2);
		free(got);
	}

	/* dir: no partial file, no temporary left, the number is not used up */
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), -ENOTDIR);
	unlink(f->path);
	assert_int_equal(recv_output_open(RECV_FORMAT_DIR, f->path, &out), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &(struct rlimit){5000, old.rlim_max}), 0);
	assert_int_equal(recv_output_write(out, msg, sizeof(msg)), -EFBIG);
	write_ok(out, "ok", 2);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(recv_output_close(&out), 0);
	file_is(f->path, "00000000000000000001", "ok", 2);
	assert_int_equal(count_entries(f->path, ""), 1);
}

/* a batch is the same bytes as its records written one by one, in every format */
static void batch_is_the_records_one_by_one(void **state)
{
	static const enum recv_format formats[] = {
		RECV_FORMAT_RAW, RECV_FORMAT_LINES, RECV_FORMAT_LEN, RECV_FORMAT_DIR};
	struct fixture *f = *state;
	uint8_t *big = malloc(70000);
	struct recv_record recs[5] = {{"abc", 3}, {NULL, 0}, {"a\nb\n", 4}, {NULL, 0}, {NULL, 0}};
	char one[128], batch[128];

	assert_non_null(big);
	for (size_t i = 0; i < 70000; i++)
		big[i] = (uint8_t)(i * 13);
	recs[3] = (struct recv_record){big, 70000};
	recs[4] = (struct recv_record){"\n", 1};
	for (size_t i = 0; i < 4; i++) {
		struct recv_output *a, *b;
		size_t written = 99;

		snprintf(one, sizeof(one), "%s/one%zu", f->dir, i);
		snprintf(batch, sizeof(batch), "%s/batch%zu", f->dir, i);
		assert_int_equal(recv_output_open(formats[i], one, &a), 0);
		assert_int_equal(recv_output_open(formats[i], batch, &b), 0);
		for (size_t r = 0; r < 5; r++)
			write_ok(a, recs[r].msg, recs[r].len);
		assert_int_equal(recv_output_write_batch(b, recs, 5, &written), 0);
		assert_int_equal(written, 5);
		assert_int_equal(recv_output_close(&a), 0);
		assert_int_equal(recv_output_close(&b), 0);
		if (formats[i] == RECV_FORMAT_DIR) {
			char name[24];

			assert_int_equal(count_entries(batch, ""), 5);
			for (size_t r = 0; r < 5; r++) {
				snprintf(name, sizeof(name), "%020zu", r + 1);
				file_is(batch, name, recs[r].msg, recs[r].len);
			}
		} else {
			size_t la, lb;
			uint8_t *ga = slurp(one, &la), *gb = slurp(batch, &lb);

			assert_int_equal(la, lb);
			assert_memory_equal(ga, gb, la);
			free(ga);
			free(gb);
		}
	}
	free(big);
}

/* a batch the file cannot take whole: the records before stay, the failing one goes */
static void batch_failure_keeps_whole_records(void **state)
{
	static const enum recv_format formats[] = {RECV_FORMAT_RAW, RECV_FORMAT_LEN};
	struct fixture *f = *state;
	struct rlimit old, small = {10000, 0};
	uint8_t msg[3000];
	struct recv_record recs[5];
	struct recv_output *out;
	size_t written, len;
	uint8_t *got;

	memset(msg, 'm', sizeof(msg));
	for (size_t r = 0; r < 5; r++)
		recs[r] = (struct recv_record){msg, sizeof(msg)};
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	for (size_t i = 0; i < 2; i++) {
		size_t rec = formats[i] == RECV_FORMAT_LEN ? 3004 : 3000;

		unlink(f->path); /* an output is continued, never truncated: start anew */
		assert_int_equal(recv_output_open(formats[i], f->path, &out), 0);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
		written = 99;
		/* 3 whole records fit under 10,000 bytes; the 4th is cut short, then refused */
		assert_int_equal(recv_output_write_batch(out, recs, 5, &written), -EFBIG);
		assert_int_equal(written, 3);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
		write_ok(out, "ok", 2);
		assert_int_equal(recv_output_close(&out), 0);
		got = slurp(f->path, &len);
		assert_int_equal(len, 3 * rec + (formats[i] == RECV_FORMAT_LEN ? 6 : 2));
		assert_memory_equal(
			got + 3 * rec + (formats[i] == RECV_FORMAT_LEN ? 4 : 0), "ok", 2);
		free(got);
	}
	/* more than a batch holds: refused, nothing written */
	assert_int_equal(recv_output_open(RECV_FORMAT_RAW, f->path, &out), 0);
	assert_int_equal(
		recv_output_write_batch(out, recs, RECV_OUTPUT_BATCH_MAX + 1, &written), -EINVAL);
	assert_int_equal(written, 0);
	assert_int_equal(recv_output_close(&out), 0);
}

/* standard output as a pipe whose reader is gone: -EPIPE, not a signal */
static void closed_pipe_is_epipe(void **unused)
{
	struct recv_output *out;
	int p[2], saved;

	(void)unused;
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(p[1], STDOUT_FILENO), STDOUT_FILENO);
	close(p[1]);

	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, NULL, &out), 0);
	assert_string_equal(recv_output_name(out), "standard output");
	write_ok(out, "x", 1);
	close(p[0]);
	assert_int_equal(recv_output_write(out, "y", 1), -EPIPE);
	assert_int_equal(recv_output_close(&out), 0);

	/* standard output was left open by close */
	assert_true(fcntl(STDOUT_FILENO, F_GETFD) >= 0);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_names),
		cmocka_unit_test_setup_teardown(raw_is_the_payloads_back_to_back, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_examples, setup, teardown),
		cmocka_unit_test_setup_teardown(lines_long_messages_cross_chunks, setup, teardown),
		cmocka_unit_test_setup_teardown(len_records, setup, teardown),
		cmocka_unit_test_setup_teardown(dir_files_continue_after_existing, setup, teardown),
		cmocka_unit_test_setup_teardown(dir_needs_a_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(sync_makes_records_durable, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_record_is_rolled_back, setup, teardown),
		cmocka_unit_test_setup_teardown(batch_is_the_records_one_by_one, setup, teardown),
		cmocka_unit_test_setup_teardown(batch_failure_keeps_whole_records, setup, teardown),
		cmocka_unit_test(closed_pipe_is_epipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
