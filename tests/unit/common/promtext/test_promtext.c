// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_promtext.c -- unit tests of common/promtext.c: the text of families
 * and samples with their escaping, the names it refuses, the file replaced
 * whole while a reader keeps reading it, no PATH.tmp left behind, and
 * write errors said once per kind
 */

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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "promtext.h"

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rpmafs-test-promtext-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *text_of(struct promtext *pt)
{
	size_t len;
	const char *t = promtext_text(pt, &len);

	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	return t;
}

static void families_and_samples(void **state)
{
	struct promtext *pt = NULL;

	(void)state;
	assert_int_equal(promtext_new(&pt), 0);
	assert_string_equal(text_of(pt), "");
	assert_int_equal(
		promtext_family(pt, "x_sent_total", PROMTEXT_COUNTER, "Messages sent."), 0);
	assert_int_equal(promtext_sample(pt, "peer", "alpha", 3), 0);
	assert_int_equal(promtext_sample(pt, "peer", "beta", 18446744073709551615ull), 0);
	assert_int_equal(promtext_family(pt, "x_up", PROMTEXT_GAUGE, "Up."), 0);
	assert_int_equal(promtext_sample(pt, NULL, NULL, 0), 0);
	assert_string_equal(text_of(pt), "# HELP x_sent_total Messages sent.\n"
					 "# TYPE x_sent_total counter\n"
					 "x_sent_total{peer=\"alpha\"} 3\n"
					 "x_sent_total{peer=\"beta\"} 18446744073709551615\n"
					 "# HELP x_up Up.\n"
					 "# TYPE x_up gauge\n"
					 "x_up 0\n");
	promtext_reset(pt);
	assert_string_equal(text_of(pt), "");
	promtext_delete(&pt);
	assert_null(pt);
	promtext_delete(&pt);
}

static void escaping(void **state)
{
	struct promtext *pt = NULL;

	(void)state;
	assert_int_equal(promtext_new(&pt), 0);
	/* HELP: backslash and line break; a double quote stays */
	assert_int_equal(promtext_family(pt, "y", PROMTEXT_GAUGE, "a \\ b\nc \"d\""), 0);
	/* label value: backslash, double quote, line break */
	assert_int_equal(promtext_sample(pt, "sender", "x\\y\"z\nw", 1), 0);
	assert_int_equal(promtext_sample(pt, "sender", "", 2), 0);
	assert_string_equal(text_of(pt), "# HELP y a \\\\ b\\nc \"d\"\n"
					 "# TYPE y gauge\n"
					 "y{sender=\"x\\\\y\\\"z\\nw\"} 1\n"
					 "y{sender=\"\"} 2\n");
	promtext_delete(&pt);
}

static void bad_names(void **state)
{
	struct promtext *pt = NULL;
	size_t len;

	(void)state;
	assert_int_equal(promtext_new(&pt), 0);
	/* a sample before any family */
	assert_int_equal(promtext_sample(pt, NULL, NULL, 1), -EINVAL);
	assert_null(promtext_text(pt, &len));
	assert_int_equal(errno, EINVAL);
	promtext_reset(pt);
	/* a counter not called *_total */
	assert_int_equal(promtext_family(pt, "x_sent", PROMTEXT_COUNTER, ""), -EINVAL);
	assert_null(promtext_text(pt, &len));
	promtext_reset(pt);
	assert_int_equal(promtext_family(pt, "9x", PROMTEXT_GAUGE, ""), -EINVAL);
	promtext_reset(pt);
	assert_int_equal(promtext_family(pt, "a-b", PROMTEXT_GAUGE, ""), -EINVAL);
	promtext_reset(pt);
	assert_int_equal(promtext_family(pt, "", PROMTEXT_GAUGE, ""), -EINVAL);
	promtext_reset(pt);
	/* a label name takes no colon (a metric name may) */
	assert_int_equal(promtext_family(pt, "ns:x", PROMTEXT_GAUGE, ""), 0);
	assert_int_equal(promtext_sample(pt, "a:b", "v", 1), -EINVAL);
	assert_null(promtext_text(pt, &len));
	/* once bad, it stays bad until reset */
	assert_int_equal(promtext_family(pt, "ok", PROMTEXT_GAUGE, ""), -EINVAL);
	promtext_reset(pt);
	assert_int_equal(promtext_family(pt, "ok", PROMTEXT_GAUGE, ""), 0);
	assert_non_null(promtext_text(pt, &len));
	promtext_delete(&pt);
}

static char *slurp(const char *path, size_t *len)
{
	static char buf[1 << 20];
	ssize_t n;
	size_t off = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf + off, sizeof(buf) - 1 - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	*len = off;
	return buf;
}

static void tmp_path(char *buf, size_t size, const char *path)
{
	snprintf(buf, size, "%s.tmp", path);
}

static void write_and_replace(void **state)
{
	struct promtext *pt = NULL;
	struct promtext_file *pf = NULL;
	char path[128], tmp[160], why[256];
	const char *got;
	size_t len;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	tmp_path(tmp, sizeof(tmp), path);
	assert_int_equal(promtext_new(&pt), 0);
	assert_int_equal(promtext_file_new(path, 1000, 5, &pf), 0);
	assert_string_equal(promtext_file_path(pf), path);
	assert_int_equal(promtext_family(pt, "a_total", PROMTEXT_COUNTER, "A."), 0);
	assert_int_equal(promtext_sample(pt, NULL, NULL, 1), 0);
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	got = slurp(path, &len);
	assert_non_null(got);
	assert_string_equal(got, "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n");
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	/* replaced, shorter: nothing of the old text is left */
	promtext_reset(pt);
	assert_int_equal(promtext_family(pt, "b", PROMTEXT_GAUGE, "B."), 0);
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), 0);
	got = slurp(path, &len);
	assert_string_equal(got, "# HELP b B.\n# TYPE b gauge\n");
	assert_int_equal(stat(tmp, &st), -1);

	/* a bad text is not written: the file keeps the last good one */
	assert_int_equal(promtext_sample(pt, "bad name", "v", 1), -EINVAL);
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "cannot build"));
	got = slurp(path, &len);
	assert_string_equal(got, "# HELP b B.\n# TYPE b gauge\n");
	assert_int_equal(stat(tmp, &st), -1);

	promtext_file_delete(&pf);
	assert_null(pf);
	promtext_delete(&pt);
}

static void schedule(void **state)
{
	struct promtext_file *pf = NULL;

	(void)state;
	assert_int_equal(promtext_file_new("/x", 0, 0, &pf), -EINVAL);
	assert_int_equal(promtext_file_new("", 10, 0, &pf), -EINVAL);
	assert_int_equal(promtext_file_new("/x", 100, 50, &pf), 0);
	assert_int_equal(promtext_file_next(pf), 50);
	assert_false(promtext_file_due(pf, 49));
	assert_true(promtext_file_due(pf, 50));
	assert_int_equal(promtext_file_next(pf), 150);
	assert_false(promtext_file_due(pf, 149));
	/* late: the next is an interval after now, not a burst */
	assert_true(promtext_file_due(pf, 1000));
	assert_int_equal(promtext_file_next(pf), 1100);
	assert_false(promtext_file_due(pf, 1001));
	promtext_file_delete(&pf);
}

static void errors_said_once(void **state)
{
	struct promtext *pt = NULL;
	struct promtext_file *pf = NULL, *pf2 = NULL;
	char path[256], sub[128], why[512];
	int fd;

	(void)state;
	assert_int_equal(promtext_new(&pt), 0);
	assert_int_equal(promtext_family(pt, "c", PROMTEXT_GAUGE, "C."), 0);
	/* no such directory: said once, then quiet */
	snprintf(sub, sizeof(sub), "%s/gone", dir);
	snprintf(path, sizeof(path), "%s/m.prom", sub);
	assert_int_equal(promtext_file_new(path, 10, 0, &pf), 0);
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "m.prom.tmp"));
	assert_non_null(strstr(why, strerror(ENOENT)));
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "");
	/* the directory comes: written, and that is said */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "written again"));
	assert_int_equal(promtext_file_write(pf, pt, why, sizeof(why)), 0);
	assert_string_equal(why, "");

	/* another kind: the path is a directory that is not empty (rename fails) */
	snprintf(path, sizeof(path), "%s/isdir", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/isdir/f", dir);
	fd = open(sub, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(promtext_file_new(path, 10, 0, &pf2), 0);
	assert_true(promtext_file_write(pf2, pt, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "cannot rename"));
	assert_true(promtext_file_write(pf2, pt, why, sizeof(why)) < 0);
	assert_string_equal(why, "");
	/* the temporary file was removed */
	snprintf(sub, sizeof(sub), "%s/isdir.tmp", dir);
	assert_int_equal(access(sub, F_OK), -1);
	promtext_file_delete(&pf);
	promtext_file_delete(&pf2);
	promtext_delete(&pt);
}

/*
 * A reader that opens and reads the file over and over while it is being
 * replaced, with a long text and a short one in turn, only ever sees one
 * of the two whole: never a mix, a cut or an empty file.
 */
static void always_whole(void **state)
{
	struct promtext *a = NULL, *b = NULL;
	struct promtext_file *pf = NULL;
	char path[128], why[256];
	size_t alen, blen;
	const char *at, *bt;
	int stop[2], status;
	pid_t child;

	(void)state;
	snprintf(path, sizeof(path), "%s/whole.prom", dir);
	assert_int_equal(promtext_new(&a), 0);
	assert_int_equal(promtext_new(&b), 0);
	assert_int_equal(promtext_family(a, "long_total", PROMTEXT_COUNTER, "Long."), 0);
	for (unsigned i = 0; i < 4000; i++) {
		char v[16];

		snprintf(v, sizeof(v), "p%u", i);
		assert_int_equal(promtext_sample(a, "peer", v, i), 0);
	}
	assert_int_equal(promtext_family(b, "short", PROMTEXT_GAUGE, "Short."), 0);
	assert_int_equal(promtext_sample(b, NULL, NULL, 7), 0);
	at = promtext_text(a, &alen);
	bt = promtext_text(b, &blen);
	assert_true(alen > 65536);
	assert_int_equal(promtext_file_new(path, 10, 0, &pf), 0);
	assert_int_equal(promtext_file_write(pf, b, why, sizeof(why)), 0);
	assert_int_equal(pipe(stop), 0);

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		unsigned reads = 0;
		char c;

		close(stop[1]);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		while (read(stop[0], &c, 1) < 0) {
			size_t len;
			const char *got = slurp(path, &len);

			if (!got)
				_exit(2);
			if (!(len == alen && memcmp(got, at, len) == 0) &&
				!(len == blen && memcmp(got, bt, len) == 0))
				_exit(1);
			reads++;
		}
		_exit(reads ? 0 : 3);
	}
	close(stop[0]);
	for (unsigned i = 0; i < 400; i++)
		assert_int_equal(promtext_file_write(pf, i % 2 ? b : a, why, sizeof(why)), 0);
	assert_int_equal(write(stop[1], "x", 1), 1);
	close(stop[1]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	promtext_file_delete(&pf);
	promtext_delete(&a);
	promtext_delete(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(families_and_samples),
		cmocka_unit_test(escaping),
		cmocka_unit_test(bad_names),
		cmocka_unit_test(write_and_replace),
		cmocka_unit_test(schedule),
		cmocka_unit_test(errors_said_once),
		cmocka_unit_test(always_whole),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
