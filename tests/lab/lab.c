// SPDX-License-Identifier: BSD-3-Clause
/* lab.c -- what the lab tests share: environment, checks, waits with deadlines */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"

static pid_t child_pid;	  /* in the parent: the child to kill on failure */
static int ready_fd = -1; /* in the child: where lab_ready() writes */
static const char *role = "sender";

void lab_env_get(struct lab_env *env)
{
	env->a = getenv("LAB_A");
	env->b = getenv("LAB_B");
	env->dev_a = getenv("LAB_DEV_A");
	env->dev_b = getenv("LAB_DEV_B");
	if (!env->a || !env->b) {
		fprintf(stderr, "LAB_A/LAB_B are not set: this test needs the RDMA lab; run it as\n"
				"  tools/rdma-lab run -- meson test -C build --suite lab\n");
		exit(77);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
}

double lab_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void lab_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%d: ", role, file, line);
	if (cond)
		fprintf(stderr, "check failed: %s: ", cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	exit(1);
}

struct rpma_peer *lab_peer_new(
	const char *addr, enum rpma_util_ibv_context_type type, const char *dev)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;

	CHECK_RPMA(rpma_utils_get_ibv_context(addr, type, &ctx));
	if (dev)
		CHECK(strcmp(ibv_get_device_name(ctx->device), dev) == 0,
			"%s for %s is %s, expected %s",
			type == RPMA_UTIL_IBV_CONTEXT_LOCAL ? "local device" : "device reaching",
			addr, ibv_get_device_name(ctx->device), dev);
	CHECK_RPMA(rpma_peer_new(ctx, &peer));
	return peer;
}

struct rpma_mr_local *lab_mr_new(
	struct rpma_peer *peer, size_t size, int usage, int fill, uint8_t **ptr)
{
	struct rpma_mr_local *mr;
	void *p;

	CHECK(posix_memalign(&p, 4096, size) == 0, "cannot allocate %zu bytes", size);
	memset(p, fill, size);
	CHECK_RPMA(rpma_mr_reg(peer, p, size, usage, &mr));
	*ptr = p;
	return mr;
}

struct rpma_ep *lab_listen(struct rpma_peer *peer, const char *addr, const char *port)
{
	struct rpma_ep *ep;

	CHECK_RPMA(rpma_ep_listen(peer, addr, port, &ep));
	return ep;
}

/* wait until fd is readable; 1 when it is, 0 when the deadline has passed */
static int wait_fd(int fd, double deadline)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	double left;
	int ret;

	for (;;) {
		left = deadline - lab_now();
		ret = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
		if (ret > 0)
			return 1;
		CHECK(ret == 0 || errno == EINTR, "poll: %s", strerror(errno));
		if (ret == 0 && lab_now() >= deadline)
			return 0;
	}
}

struct rpma_conn_req *lab_next_req(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, int timeout_ms)
{
	struct rpma_conn_req *req;
	int fd;

	CHECK_RPMA(rpma_ep_get_fd(ep, &fd));
	CHECK(wait_fd(fd, lab_now() + timeout_ms / 1000.0), "no connection request in %d ms",
		timeout_ms);
	CHECK_RPMA(rpma_ep_next_conn_req(ep, cfg, &req));
	return req;
}

int lab_next_event(struct rpma_conn *conn, enum rpma_conn_event *event, int timeout_ms)
{
	int fd;

	CHECK_RPMA(rpma_conn_get_event_fd(conn, &fd));
	if (!wait_fd(fd, lab_now() + timeout_ms / 1000.0))
		return RPMA_E_NO_EVENT;
	CHECK_RPMA(rpma_conn_next_event(conn, event));
	return 0;
}

void lab_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected, int timeout_ms)
{
	enum rpma_conn_event event;

	CHECK(lab_next_event(conn, &event, timeout_ms) == 0,
		"no connection event in %d ms, expected %s", timeout_ms,
		rpma_utils_conn_event_2str(expected));
	CHECK(event == expected, "connection event %s, expected %s",
		rpma_utils_conn_event_2str(event), rpma_utils_conn_event_2str(expected));
}

struct rpma_conn *lab_connect(
	struct rpma_peer *peer, const char *addr, const char *port, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req;
	struct rpma_conn *conn;

	CHECK_RPMA(rpma_conn_req_new(peer, addr, port, cfg, &req));
	CHECK_RPMA(rpma_conn_req_connect(&req, NULL, &conn));
	CHECK(req == NULL, "rpma_conn_req_connect left the request set");
	lab_expect_event(conn, RPMA_CONN_ESTABLISHED, LAB_SAFETY_MS);
	return conn;
}

struct rpma_conn *lab_accept(struct rpma_conn_req **req)
{
	struct rpma_conn *conn;

	CHECK_RPMA(rpma_conn_req_connect(req, NULL, &conn));
	lab_expect_event(conn, RPMA_CONN_ESTABLISHED, LAB_SAFETY_MS);
	return conn;
}

int lab_next_wc(struct rpma_conn *conn, struct ibv_wc *wc, int timeout_ms)
{
	double deadline = lab_now() + timeout_ms / 1000.0;
	struct rpma_cq *cq;
	int fd, got, ret;

	CHECK_RPMA(rpma_conn_get_cq(conn, &cq));
	CHECK_RPMA(rpma_cq_get_fd(cq, &fd));
	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, wc, &got);
		if (ret == 0) {
			CHECK(got == 1, "rpma_cq_get_wc gave %d completions, asked for 1", got);
			return 0;
		}
		CHECK(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc returned %d (%s)", ret,
			rpma_err_2str(ret));
		/* the CQ is armed: a completion after the poll above wakes the fd */
		if (!wait_fd(fd, deadline))
			return RPMA_E_NO_COMPLETION;
		CHECK_RPMA(rpma_cq_wait(cq));
	}
}

void lab_expect_wc(
	struct rpma_conn *conn, struct ibv_wc *wc, enum ibv_wc_status status, int timeout_ms)
{
	CHECK(lab_next_wc(conn, wc, timeout_ms) == 0, "no completion in %d ms", timeout_ms);
	CHECK(wc->status == status, "%s, expected status %s", lab_wc_str(wc),
		ibv_wc_status_str(status));
}

void lab_expect_no_more_wc(struct rpma_conn *conn, const char *what)
{
	static const char marker = 'M'; /* its address is the write's wr_id */
	struct ibv_wc wc;

	CHECK_RPMA(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &marker));
	lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
	CHECK(wc.wr_id == (uintptr_t)&marker && wc.opcode == IBV_WC_RDMA_WRITE,
		"%s: an unexpected %s before the marker write's completion", what, lab_wc_str(&wc));
}

void lab_close(struct rpma_conn **conn)
{
	CHECK_RPMA(rpma_conn_disconnect(*conn));
	lab_expect_event(*conn, RPMA_CONN_CLOSED, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_conn_delete(conn));
	CHECK(*conn == NULL, "rpma_conn_delete left the pointer set");
}

void lab_closed(struct rpma_conn **conn, int timeout_ms)
{
	lab_expect_event(*conn, RPMA_CONN_CLOSED, timeout_ms);
	CHECK_RPMA(rpma_conn_disconnect(*conn));
	CHECK_RPMA(rpma_conn_delete(conn));
}

const size_t lab_seq_size[LAB_SEQ_N] = {0, 0, 1, 7, 4096, 65536, LAB_SEQ_MAX, 0};

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 131u + (i >> 8) + seed * 29u + 1u);
}

void lab_fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, seed);
}

void lab_verify(const uint8_t *buf, size_t len, unsigned seed, const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(buf[i] == pattern(i, seed), "%s: byte %zu of %zu is 0x%02x, expected 0x%02x",
			what, i, len, buf[i], pattern(i, seed));
}

pid_t lab_fork(void (*fn)(void *arg), void *arg)
{
	int fds[2];
	char c;
	pid_t pid;

	CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		role = "receiver";
		child_pid = 0;
		close(fds[0]);
		ready_fd = fds[1];
		fn(arg);
		exit(0);
	}
	close(fds[1]);
	child_pid = pid;
	CHECK(wait_fd(fds[0], lab_now() + LAB_SAFETY_MS / 1000.0),
		"the receiver was not ready in %d s", LAB_SAFETY_MS / 1000);
	CHECK(read(fds[0], &c, 1) == 1, "the receiver died before it was ready");
	close(fds[0]);
	return pid;
}

void lab_ready(void)
{
	CHECK(write(ready_fd, "r", 1) == 1, "cannot tell the parent: %s", strerror(errno));
	close(ready_fd);
	ready_fd = -1;
}

void lab_reap(pid_t pid, int timeout_ms)
{
	double deadline = lab_now() + timeout_ms / 1000.0;
	int status;
	pid_t ret;

	while ((ret = waitpid(pid, &status, WNOHANG)) == 0) {
		CHECK(lab_now() < deadline, "the receiver did not finish in %d ms", timeout_ms);
		usleep(10000);
	}
	CHECK(ret == pid, "waitpid: %s", strerror(errno));
	child_pid = 0;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the receiver failed (%s %d)",
		WIFEXITED(status) ? "exit status" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static const char *opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND:
		return "IBV_WC_SEND";
	case IBV_WC_RDMA_WRITE:
		return "IBV_WC_RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "IBV_WC_RDMA_READ";
	case IBV_WC_RECV:
		return "IBV_WC_RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "IBV_WC_RECV_RDMA_WITH_IMM";
	default:
		return "opcode?";
	}
}

const char *lab_wc_str(const struct ibv_wc *wc)
{
	static char buf[160];

	/* the opcode is only defined for successful completions */
	snprintf(buf, sizeof(buf), "completion %s status %s (%d), wr_id 0x%llx, byte_len %u",
		wc->status == IBV_WC_SUCCESS ? opcode_str(wc->opcode) : "-",
		ibv_wc_status_str(wc->status), (int)wc->status, (unsigned long long)wc->wr_id,
		wc->byte_len);
	return buf;
}
