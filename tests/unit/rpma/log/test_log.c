// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_log.c -- thresholds, the user logging function and the default one (syslog + stderr)
 *
 * The library's log macros are used directly (rpma/log.h) to produce messages. syslog(3) is
 * wrapped at link time so that what the default function sends is seen here; stderr is
 * redirected to a temporary file around the calls that may write to it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

/* ---- syslog and stderr capture ------------------------------------------------------ */

static int Syslog_calls;
static int Syslog_priority;
static char Syslog_text[1024];

static void record_syslog(int priority, const char *format, va_list ap)
{
	Syslog_calls++;
	Syslog_priority = priority;
	vsnprintf(Syslog_text, sizeof(Syslog_text), format, ap);
}

void __wrap_syslog(int priority, const char *format, ...);
void __wrap_syslog(int priority, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	record_syslog(priority, format, ap);
	va_end(ap);
}

void __wrap___syslog_chk(int priority, int flag, const char *format, ...);
void __wrap___syslog_chk(int priority, int flag, const char *format, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, format);
	record_syslog(priority, format, ap);
	va_end(ap);
}

static int Saved_stderr = -1;
static FILE *Stderr_file;

static void stderr_capture_start(void)
{
	fflush(stderr);
	Stderr_file = tmpfile();
	assert_non_null(Stderr_file);
	Saved_stderr = dup(STDERR_FILENO);
	assert_true(Saved_stderr >= 0);
	assert_true(dup2(fileno(Stderr_file), STDERR_FILENO) >= 0);
}

/* stop capturing; the captured text goes to buf */
static void stderr_capture_stop(char *buf, size_t size)
{
	fflush(stderr);
	assert_true(dup2(Saved_stderr, STDERR_FILENO) >= 0);
	close(Saved_stderr);
	rewind(Stderr_file);
	size_t got = fread(buf, 1, size - 1, Stderr_file);
	buf[got] = '\0';
	fclose(Stderr_file);
}

/* ---- a user logging function --------------------------------------------------------- */

static int User_calls;
static enum rpma_log_level User_level;
static char User_file[256], User_function[64], User_text[256];
static int User_line;

static void user_log(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));
static void user_log(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...)
{
	User_calls++;
	User_level = level;
	snprintf(User_file, sizeof(User_file), "%s", file_name ? file_name : "");
	snprintf(User_function, sizeof(User_function), "%s", function_name ? function_name : "");
	User_line = line_no;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(User_text, sizeof(User_text), message_format, ap);
	va_end(ap);
}

static int setup(void **state)
{
	(void)state;
	Syslog_calls = 0;
	User_calls = 0;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	return 0;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* first test of the file: nothing has changed the thresholds yet */
static void test_defaults_are_warning_and_disabled(void **state)
{
	(void)state;
	enum rpma_log_level level = RPMA_LOG_LEVEL_DEBUG;
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level), 0);
	assert_int_equal(level, RPMA_LOG_LEVEL_WARNING);
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level), 0);
	assert_int_equal(level, RPMA_LOG_DISABLED);

	/* and the default function is in place: an error reaches syslog */
	Syslog_calls = 0;
	RPMA_LOG_ERROR("first message");
	assert_int_equal(Syslog_calls, 1);
}

static void test_set_threshold_rejects_bad_arguments(void **state)
{
	(void)state;
	assert_int_equal(
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_ERROR), RPMA_E_INVAL);
	assert_int_equal(
		rpma_log_set_threshold((enum rpma_log_threshold) - 1, RPMA_LOG_LEVEL_ERROR),
		RPMA_E_INVAL);
	assert_int_equal(rpma_log_set_threshold(
				 RPMA_LOG_THRESHOLD, (enum rpma_log_level)(RPMA_LOG_DISABLED - 1)),
		RPMA_E_INVAL);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
				 (enum rpma_log_level)(RPMA_LOG_LEVEL_DEBUG + 1)),
		RPMA_E_INVAL);

	/* nothing changed */
	enum rpma_log_level level;
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level), 0);
	assert_int_equal(level, RPMA_LOG_LEVEL_WARNING);
}

static void test_get_threshold_rejects_bad_arguments(void **state)
{
	(void)state;
	enum rpma_log_level level;
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, &level), RPMA_E_INVAL);
	assert_int_equal(
		rpma_log_get_threshold((enum rpma_log_threshold) - 1, &level), RPMA_E_INVAL);
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, NULL), RPMA_E_INVAL);
}

static void test_every_level_round_trips_on_both_thresholds(void **state)
{
	(void)state;
	for (int t = RPMA_LOG_THRESHOLD; t <= RPMA_LOG_THRESHOLD_AUX; t++) {
		for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG; l++) {
			enum rpma_log_level got = (enum rpma_log_level)99;
			assert_int_equal(rpma_log_set_threshold((enum rpma_log_threshold)t,
						 (enum rpma_log_level)l),
				0);
			assert_int_equal(
				rpma_log_get_threshold((enum rpma_log_threshold)t, &got), 0);
			assert_int_equal(got, l);
		}
	}
}

static int Evaluations;
static int count_evaluation(void)
{
	return ++Evaluations;
}

static void test_user_function_gets_messages_up_to_the_threshold(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(user_log), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE), 0);

	Evaluations = 0;
	RPMA_LOG_INFO("dropped %d", count_evaluation());
	RPMA_LOG_DEBUG("dropped %d", count_evaluation());
	assert_int_equal(User_calls, 0);
	assert_int_equal(Evaluations, 0); /* a dropped message's arguments are not evaluated */

	int line = __LINE__ + 1;
	RPMA_LOG_NOTICE("kept %d", 7);
	assert_int_equal(User_calls, 1);
	assert_int_equal(User_level, RPMA_LOG_LEVEL_NOTICE);
	assert_string_equal(User_text, "kept 7");
	assert_non_null(strstr(User_file, "test_log.c"));
	assert_int_equal(User_line, line);
	assert_string_equal(User_function, "test_user_function_gets_messages_up_to_the_threshold");

	RPMA_LOG_FATAL("fatal");
	assert_int_equal(User_calls, 2);
	assert_int_equal(User_level, RPMA_LOG_LEVEL_FATAL);
	assert_int_equal(Syslog_calls, 0); /* the default function is out of the way */

	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	RPMA_LOG_FATAL("even fatal is dropped");
	assert_int_equal(User_calls, 2);
}

static void test_errno_variant_appends_the_text_and_number(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(user_log), 0);
	errno = 0;
	RPMA_LOG_ERROR_WITH_ERRNO(ENOMEM, "ibv_post_send(%s)", "x");
	assert_int_equal(User_calls, 1);
	assert_string_equal(User_text, "ibv_post_send(x): Cannot allocate memory (errno 12)");
	assert_int_equal(errno, 0);
}

static void test_default_function_maps_levels_to_syslog_priorities(void **state)
{
	(void)state;
	static const struct {
		enum rpma_log_level level;
		int priority;
		const char *tag;
	} table[] = {
		{RPMA_LOG_LEVEL_FATAL, LOG_CRIT, "*FATAL*"},
		{RPMA_LOG_LEVEL_ERROR, LOG_ERR, "*ERROR*"},
		{RPMA_LOG_LEVEL_WARNING, LOG_WARNING, "*WARN*"},
		{RPMA_LOG_LEVEL_NOTICE, LOG_NOTICE, "*NOTE*"},
		{RPMA_LOG_LEVEL_INFO, LOG_INFO, "*INFO*"},
		{RPMA_LOG_LEVEL_DEBUG, LOG_DEBUG, "*DEBUG*"},
	};
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		Syslog_calls = 0;
		RPMA_LOG(table[i].level, "message %zu", i);
		assert_int_equal(Syslog_calls, 1);
		assert_int_equal(Syslog_priority, table[i].priority);
		char expected[64];
		snprintf(expected, sizeof(expected), "message %zu", i);
		assert_non_null(strstr(Syslog_text, table[i].tag));
		assert_non_null(strstr(Syslog_text, "test_log.c:"));
		assert_non_null(strstr(Syslog_text, expected));
	}
}

static void test_default_function_drops_above_the_threshold(void **state)
{
	(void)state;
	RPMA_LOG_NOTICE("above WARNING: dropped");
	RPMA_LOG_INFO("dropped");
	assert_int_equal(Syslog_calls, 0);
	RPMA_LOG_WARNING("kept");
	assert_int_equal(Syslog_calls, 1);
}

static void test_default_function_copies_to_stderr_up_to_aux(void **state)
{
	(void)state;
	char out[4096];

	/* AUX disabled (default): nothing on stderr */
	stderr_capture_start();
	RPMA_LOG_ERROR("not on stderr");
	stderr_capture_stop(out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(Syslog_calls, 1);

	/* AUX at WARNING: errors and warnings are copied, with a timestamp */
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING), 0);
	stderr_capture_start();
	RPMA_LOG_ERROR("on stderr %d", 1);
	RPMA_LOG_WARNING("at the threshold");
	RPMA_LOG_NOTICE("syslog only");
	stderr_capture_stop(out, sizeof(out));
	assert_int_equal(Syslog_calls, 4);
	assert_non_null(strstr(out, "*ERROR* test_log.c:"));
	assert_non_null(strstr(out, "on stderr 1\n"));
	assert_non_null(strstr(out, "*WARN* test_log.c:"));
	assert_non_null(strstr(out, "at the threshold\n"));
	assert_null(strstr(out, "syslog only"));
	/* "[YYYY-MM-DD HH:MM:SS.uuuuuu] " */
	assert_int_equal(out[0], '[');
	assert_int_equal(out[5], '-');
	assert_int_equal(out[11], ' ');
	assert_int_equal(out[20], '.');
	assert_int_equal(out[27], ']');
}

static void test_default_function_is_restored(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(user_log), 0);
	RPMA_LOG_ERROR("to the user function");
	assert_int_equal(User_calls, 1);
	assert_int_equal(Syslog_calls, 0);

	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	RPMA_LOG_ERROR("to syslog");
	assert_int_equal(User_calls, 1);
	assert_int_equal(Syslog_calls, 1);
	assert_non_null(strstr(Syslog_text, "to syslog"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_warning_and_disabled),
		cmocka_unit_test_setup(test_set_threshold_rejects_bad_arguments, setup),
		cmocka_unit_test_setup(test_get_threshold_rejects_bad_arguments, setup),
		cmocka_unit_test_setup(test_every_level_round_trips_on_both_thresholds, setup),
		cmocka_unit_test_setup(test_user_function_gets_messages_up_to_the_threshold, setup),
		cmocka_unit_test_setup(test_errno_variant_appends_the_text_and_number, setup),
		cmocka_unit_test_setup(
			test_default_function_maps_levels_to_syslog_priorities, setup),
		cmocka_unit_test_setup(test_default_function_drops_above_the_threshold, setup),
		cmocka_unit_test_setup(test_default_function_copies_to_stderr_up_to_aux, setup),
		cmocka_unit_test_setup(test_default_function_is_restored, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
