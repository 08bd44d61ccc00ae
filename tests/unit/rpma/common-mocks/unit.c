// SPDX-License-Identifier: BSD-3-Clause
/*
 * unit.c -- helpers shared by the rpma unit tests (see unit.h)
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#define LOG_MAX 64

static struct {
	enum rpma_log_level level;
	char text[512];
} Log[LOG_MAX];
static int Log_count;

static long Alloc_baseline;

static void capture(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

static void capture(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...)
{
	(void)file_name;
	(void)line_no;
	(void)function_name;
	int slot = Log_count < LOG_MAX ? Log_count : LOG_MAX - 1;
	Log[slot].level = level;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(Log[slot].text, sizeof(Log[slot].text), message_format, ap);
	va_end(ap);
	if (Log_count < LOG_MAX)
		Log_count++;
}

void log_clear(void)
{
	Log_count = 0;
}

int log_count(void)
{
	return Log_count;
}

bool log_has(const char *first, ...)
{
	for (int i = 0; i < Log_count; i++) {
		bool all = true;
		va_list ap;
		va_start(ap, first);
		for (const char *s = first; s != NULL; s = va_arg(ap, const char *))
			if (strstr(Log[i].text, s) == NULL)
				all = false;
		va_end(ap);
		if (all)
			return true;
	}
	return false;
}

enum rpma_log_level log_last_level(void)
{
	return Log_count ? Log[Log_count - 1].level : RPMA_LOG_DISABLED;
}

int unit_setup(void **state)
{
	(void)state;
	fake_reset();
	alloc_fail_nth(0);
	log_clear();
	assert_int_equal(rpma_log_set_function(capture), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	Alloc_baseline = alloc_live();
	return 0;
}

void unit_assert_clean(void)
{
	if (fake_live_total() != 0) {
		for (int t = 0; t < FAKE_OBJ_TYPE_COUNT; t++)
			if (fake_live(t))
				fprintf(stderr, "left alive: %d of fake type %d\n", fake_live(t),
					t);
	}
	assert_int_equal(fake_live_total(), 0);
	assert_int_equal(alloc_live(), Alloc_baseline);
	if (fake_violations())
		fprintf(stderr, "violation: %s\n", fake_last_violation());
	assert_int_equal(fake_violations(), 0);
}

int unit_teardown(void **state)
{
	(void)state;
	alloc_fail_nth(0);
	unit_assert_clean();
	fake_reset();
	(void)rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING);
	return 0;
}

struct rpma_peer *fx_peer(void)
{
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_new(fake_ibv_context(), &peer), 0);
	assert_non_null(peer);
	return peer;
}

struct rpma_conn_req *fx_req_active(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), 0);
	assert_non_null(req);
	return req;
}

struct rpma_conn *fx_conn_active(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_null(req);
	assert_non_null(conn);
	return conn;
}

struct rpma_ep *fx_ep(struct rpma_peer *peer)
{
	struct rpma_ep *ep = NULL;
	assert_int_equal(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, &ep), 0);
	assert_non_null(ep);
	return ep;
}

struct rpma_conn_req *fx_req_passive(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, const void *pdata, uint8_t len)
{
	int fd;
	assert_int_equal(rpma_ep_get_fd(ep, &fd), 0);
	assert_non_null(fake_cm_push_connect_request(fd, pdata, len));
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, cfg, &req), 0);
	assert_non_null(req);
	return req;
}

struct ibv_qp *fx_qp(const struct rpma_conn *conn)
{
	uint32_t qp_num;
	assert_int_equal(rpma_conn_get_qp_num(conn, &qp_num), 0);
	struct ibv_qp *qp = fake_qp_by_num(qp_num);
	assert_non_null(qp);
	return qp;
}

void fx_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	assert_true(flags >= 0);
	assert_int_equal(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
}

struct rpma_conn_cfg *fx_cfg(uint32_t cq, uint32_t rcq, uint32_t sq, uint32_t rq, bool shared)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, cq), 0);
	assert_int_equal(rpma_conn_cfg_set_rcq_size(cfg, rcq), 0);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, sq), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, rq), 0);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, shared), 0);
	return cfg;
}

struct ibv_wc fx_wc(uint64_t wr_id, enum ibv_wc_opcode opcode, enum ibv_wc_status status)
{
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.opcode = opcode;
	wc.status = status;
	return wc;
}

unsigned int unit_alloc_sweep(const struct alloc_sweep *sweep, void *arg)
{
	for (unsigned int n = 1; n < 1000; n++) {
		if (sweep->setup)
			sweep->setup(arg);

		int fake_before = fake_live_total();
		long alloc_before = alloc_live();

		alloc_fail_nth(n);
		int ret = sweep->op(arg);
		bool fired = alloc_fail_fired();
		alloc_fail_nth(0);

		if (fired) {
			if (ret != RPMA_E_NOMEM)
				fprintf(stderr, "allocation %u failed, the call returned %d\n", n,
					ret);
			assert_int_equal(ret, RPMA_E_NOMEM);
			if (sweep->check_failed) {
				sweep->check_failed(arg);
			} else {
				assert_int_equal(fake_live_total(), fake_before);
				assert_int_equal(alloc_live(), alloc_before);
			}
		} else {
			assert_int_equal(ret, 0);
			if (sweep->undo)
				sweep->undo(arg);
		}

		if (sweep->teardown)
			sweep->teardown(arg);

		assert_int_equal(fake_violations(), 0);
		if (!fired)
			return n - 1;
	}
	fail_msg("the call allocated on and on");
	return 0;
}
