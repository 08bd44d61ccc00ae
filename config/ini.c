// SPDX-License-Identifier: BSD-3-Clause
/* ini.c -- reading the config with iniparser */

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "ini.h"

/*
 * iniparser reports errors through one process-wide callback with no
 * argument of ours, so the load in progress is found per thread.
 */
struct capture {
	struct cfg_report *rep;
	const char *ini_path; /* what iniparser was given ... */
	const char *file;     /* ... and what the user knows the file as */
};

static __thread struct capture *capture;
static pthread_once_t callback_once = PTHREAD_ONCE_INIT;

/* msg on one line, with capture->ini_path replaced by capture->file. */
static char *clean_message(const char *msg)
{
	const char *at = strstr(msg, capture->ini_path);
	char *out, *p;

	if (at) {
		if (asprintf(&out, "%.*s%s%s", (int)(at - msg), msg, capture->file,
			    at + strlen(capture->ini_path)) < 0)
			return NULL;
	} else {
		out = strdup(msg);
		if (!out)
			return NULL;
	}
	for (p = out; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (p > out && p[-1] == ' ')
		*--p = '\0';
	return out;
}

static int on_iniparser_error(const char *fmt, ...)
{
	char *msg, *clean;
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (!capture) {
		/* not a load of ours: do what iniparser does by default */
		n = vfprintf(stderr, fmt, ap);
		va_end(ap);
		return n;
	}
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		capture->rep->oom = true;
		capture->rep->count++;
		return -1;
	}
	clean = clean_message(msg);
	free(msg);
	if (!clean) {
		capture->rep->oom = true;
		capture->rep->count++;
		return -1;
	}
	cfg_problem(capture->rep, 0, NULL, NULL, "%s", clean);
	free(clean);
	return n;
}

static void install_callback(void)
{
	iniparser_set_error_callback(on_iniparser_error);
}

int cfg_ini_load_path(
	const char *ini_path, const char *file, dictionary **dict, struct cfg_report *rep)
{
	struct capture cap = {rep, ini_path, file};
	unsigned before = rep->count;
	dictionary *d;

	pthread_once(&callback_once, install_callback);
	capture = &cap;
	d = iniparser_load(ini_path);
	capture = NULL;

	if (d && rep->count == before) {
		*dict = d;
		return 0;
	}
	if (d)
		iniparser_freedict(d);
	if (rep->count == before)
		cfg_problem(
			rep, 0, NULL, NULL, "iniparser could not load the file (out of memory?)");
	return -1;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int cfg_ini_load(
	const char *buf, size_t len, const char *file, dictionary **dict, struct cfg_report *rep)
{
	char proc_path[64];
	const char *ini_path = file;
	int fd, ret;

	/*
	 * Without memfd or /proc (neither is missing on a system that runs
	 * FUSE), iniparser reads the file itself, and cfg_ini_agrees() still
	 * catches a file that changed in between.
	 */
	fd = memfd_create("rpmafs.ini", MFD_CLOEXEC);
	if (fd >= 0 && write_all(fd, buf, len) == 0) {
		snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
		if (access(proc_path, R_OK) == 0)
			ini_path = proc_path;
	}
	ret = cfg_ini_load_path(ini_path, file, dict, rep);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int disagree(struct cfg_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int disagree(struct cfg_report *rep, const char *fmt, ...)
{
	char *what;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&what, fmt, ap);
	va_end(ap);
	if (n < 0) {
		rep->oom = true;
		rep->count++;
		return -1;
	}
	cfg_problem(rep, 0, NULL, NULL,
		"internal error: iniparser read this file differently from rpmafs (%s); was it changed while being read? If not, please report this with the file",
		what);
	free(what);
	return -1;
}

/* Whether d has the entry "lname:key" (key NULL: the section lname itself). */
static bool has_entry(const dictionary *d, const char *lname, const char *key)
{
	char entry[RPMAFS_PEER_NAME_MAX + CFG_KEY_NAME_MAX + 2];

	if (strlen(lname) > RPMAFS_PEER_NAME_MAX || (key && strlen(key) > CFG_KEY_NAME_MAX))
		return false;
	snprintf(entry, sizeof(entry), "%s%s%s", lname, key ? ":" : "", key ? key : "");
	return iniparser_find_entry(d, entry);
}

int cfg_ini_agrees(const dictionary *d, const struct cfg_scan *scan, struct cfg_report *rep)
{
	char k[CFG_QUOTE_MAX];
	int nsec = iniparser_getnsec(d);

	if (nsec < 0 || (size_t)nsec != scan->nsections)
		return disagree(rep, "%d sections, not %zu", nsec, scan->nsections);

	/* as many of each, and every one the scan located is in d: the same ones */
	for (size_t i = 0; i < scan->nsections; i++) {
		const struct cfg_section *sec = &scan->sections[i];
		int nkeys;

		if (!has_entry(d, sec->lname, NULL))
			return disagree(rep, "no section [%s]", sec->lname);
		nkeys = iniparser_getsecnkeys(d, sec->lname);
		if (nkeys < 0 || (size_t)nkeys != sec->nkeys)
			return disagree(
				rep, "[%s] has %d keys, not %zu", sec->lname, nkeys, sec->nkeys);
		for (size_t j = 0; j < sec->nkeys; j++) {
			const char *key = sec->keys[j].key;

			if (!has_entry(d, sec->lname, key))
				return disagree(rep, "[%s] %s is missing", sec->lname,
					cfg_escape(k, key, strlen(key)));
		}
	}
	return 0;
}
