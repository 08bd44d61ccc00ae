/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit.h -- helpers shared by the rpma unit tests
 *
 * - unit_setup()/unit_teardown(): every test starts from a reset fake provider with the
 *   library's log captured, and ends by checking that nothing is left: no live fake object,
 *   no block allocated by the library, no violation of the verbs/CM rules;
 * - a log capture, to check that failures are logged with their errno;
 * - fixtures that build peers, requests and connections through the public API;
 * - unit_alloc_sweep(): fail every allocation of a call in turn and check each failure.
 */
#ifndef UNIT_H
#define UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka.h needs the three above */
#include <cmocka.h>

#include "alloc_fail.h"
#include "fake_rdma.h"
#include "librpma.h"

/* per-test setup and teardown (cmocka signatures), and a test entry using them */
int unit_setup(void **state);
int unit_teardown(void **state);
#define rpma_unit_test(f) cmocka_unit_test_setup_teardown(f, unit_setup, unit_teardown)

/* the live-object check of unit_teardown(), usable in the middle of a test */
void unit_assert_clean(void);

/* log capture: every message from the library at any level since the last clear */
void log_clear(void);
int log_count(void);
/* whether a captured message contains all the given substrings (NULL-terminated list) */
bool log_has(const char *first, ...) __attribute__((sentinel));
/* the level of the last captured message, RPMA_LOG_DISABLED when none */
enum rpma_log_level log_last_level(void);

/* fixtures, all through the public API; they fail the test when a step fails */
#define UNIT_ADDR "192.168.77.2"
#define UNIT_PORT "7204"

struct rpma_peer *fx_peer(void);
/* an outgoing request with cfg (NULL: defaults) */
struct rpma_conn_req *fx_req_active(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg);
/* a connection from an outgoing request, no private data */
struct rpma_conn *fx_conn_active(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg);
/* a listening endpoint on UNIT_ADDR:UNIT_PORT */
struct rpma_ep *fx_ep(struct rpma_peer *peer);
/* an incoming request: a connection request with pdata pushed to ep and taken from it */
struct rpma_conn_req *fx_req_passive(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, const void *pdata, uint8_t len);
/* the verbs QP behind a connection */
struct ibv_qp *fx_qp(const struct rpma_conn *conn);
/* an fd's O_NONBLOCK on */
void fx_set_nonblock(int fd);
/* a cfg with the given sizes (rcq_size 0: none) and channel sharing */
struct rpma_conn_cfg *fx_cfg(uint32_t cq, uint32_t rcq, uint32_t sq, uint32_t rq, bool shared);
/* a completion to push into a fake CQ */
struct ibv_wc fx_wc(uint64_t wr_id, enum ibv_wc_opcode opcode, enum ibv_wc_status status);

/*
 * unit_alloc_sweep -- for n = 1, 2, ...: setup(arg), fail the nth allocation, run op(arg).
 * While the failure fires, op must return RPMA_E_NOMEM and, unless check_failed is given
 * (then it is called instead), leave the live fake objects and the library's allocations as
 * before op; then teardown(arg). The first n whose failure does not fire must succeed (op
 * returns 0); undo(arg) then releases what op made, and the sweep ends. Returns the number of
 * allocation failures op went through (its allocation points).
 */
struct alloc_sweep {
	void (*setup)(void *arg);
	int (*op)(void *arg);
	void (*check_failed)(void *arg);
	void (*undo)(void *arg);
	void (*teardown)(void *arg);
};
unsigned int unit_alloc_sweep(const struct alloc_sweep *sweep, void *arg);

#endif /* UNIT_H */
