// SPDX-License-Identifier: BSD-3-Clause
/*
 * fake_rdma.c -- a fake libibverbs + librdmacm for the rpma unit tests (see fake_rdma.h)
 *
 * Every fake object carries a node in one list of live objects; the list is what fake_live()
 * counts and what fake_free_all() empties. Fake memory comes from the unwrapped allocator so
 * that failures armed with alloc_fail_nth() only hit the code under test.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_fail.h"
#include "fake_rdma.h"

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#define QUEUE_MAX 256 /* events waiting on one channel */
#define WC_MAX 256    /* completions waiting in one CQ */
#define WR_MAX 1024   /* work requests remembered per QP */

struct node {
	struct node *prev, *next;
	enum fake_obj_type type;
};

struct fpd {
	struct node n;
	struct ibv_pd pd;
};

struct fmr {
	struct node n;
	struct ibv_mr mr;
};

struct fchan {
	struct node n;
	struct ibv_comp_channel ch;
	int wfd;
	struct ibv_cq *queue[QUEUE_MAX];
	unsigned int count;
};

struct fcq {
	struct node n;
	struct ibv_cq cq;
	struct ibv_wc wc[WC_MAX];
	unsigned int n_wc;
	bool armed;
	unsigned int got, acked;
};

struct fqp {
	struct node n;
	struct ibv_qp qp;
	struct ibv_qp_init_attr attr;
	struct fake_send_wr sends[WR_MAX];
	unsigned int n_send;
	struct fake_recv_wr recvs[WR_MAX];
	unsigned int n_recv;
	uint8_t min_rnr_timer;
};

struct fsrq {
	struct node n;
	struct ibv_srq srq;
	struct ibv_srq_init_attr attr; /* as asked */
	struct fake_recv_wr recvs[FAKE_MAX_SRQ_WR];
	unsigned int n_recv;
};

struct fevent;

struct fevch {
	struct node n; /* linked only when made by rdma_create_event_channel() */
	struct rdma_event_channel ch;
	int wfd;
	struct fevent *queue[QUEUE_MAX];
	unsigned int count;
};

struct fid {
	struct node n;
	struct rdma_cm_id id;
	int unacked;
	struct fevch *internal; /* the channel of a synchronous ID */
};

struct frai {
	struct node n;
	struct rdma_addrinfo rai;
	struct sockaddr_in src, dst;
};

struct fevent {
	struct node n; /* linked while handed out and not acknowledged */
	struct rdma_cm_event ev;
	uint8_t pdata[256];
};

static pthread_mutex_t Lock = PTHREAD_MUTEX_INITIALIZER;
static struct node Live = {&Live, &Live, FAKE_OBJ_TYPE_COUNT};

static struct ibv_device Device;
static struct ibv_context Ctx;

static unsigned int Calls[FAKE_FN_COUNT];
static unsigned int Fail_at[FAKE_FN_COUNT];
static int Fail_err[FAKE_FN_COUNT];

static int Violations;
static char Last_violation[256];

static uint32_t Next_handle = 1;
static uint32_t Next_qp_num = 0x100;

static struct fake_conn_param Last_connect, Last_accept;
static struct fake_modify_qp Last_modify_qp;
static int Last_resolve_addr_timeout = -1, Last_resolve_route_timeout = -1;
static int Last_cqe = -1, Last_reg_mr_access = -1, Last_backlog = -1;
static struct rdma_addrinfo Last_hints;
static char Last_node[64], Last_service[32];
static enum rdma_port_space Last_ps;

/* ---- bookkeeping -------------------------------------------------------------------- */

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(Last_violation, sizeof(Last_violation), fmt, ap);
	va_end(ap);
	Violations++;
	fprintf(stderr, "FAKE RDMA VIOLATION: %s\n", Last_violation);
}

static void link_node(struct node *n, enum fake_obj_type type)
{
	n->type = type;
	n->next = &Live;
	n->prev = Live.prev;
	Live.prev->next = n;
	Live.prev = n;
}

static void unlink_node(struct node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

static bool is_live(const struct node *n, enum fake_obj_type type)
{
	for (struct node *i = Live.next; i != &Live; i = i->next)
		if (i == n && i->type == type)
			return true;
	return false;
}

#define FOR_EACH_LIVE(var, fake_type, member, type_tag)                                   \
	for (struct node *var##_n = Live.next; var##_n != &Live; var##_n = var##_n->next) \
		for (fake_type *var = var##_n->type == (type_tag)                         \
					      ? container_of(var##_n, fake_type, member)  \
					      : NULL;                                     \
			var != NULL; var = NULL)

/* count a call of fn; true (with the error in *err) when it is the one to fail */
static bool fail_now(enum fake_fn fn, int *err)
{
	Calls[fn]++;
	if (Fail_at[fn] != 0 && Calls[fn] == Fail_at[fn]) {
		Fail_at[fn] = 0;
		*err = Fail_err[fn];
		return true;
	}
	return false;
}

static void *fake_alloc(size_t size)
{
	void *ptr = __real_calloc(1, size);
	if (ptr == NULL)
		abort();
	return ptr;
}

static void make_pipe(int *rfd, int *wfd)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		abort();
	*rfd = fds[0];
	*wfd = fds[1];
}

static void drain_bytes(int fd, unsigned int count)
{
	/* the bytes are there (one per queued event): this never blocks */
	char buf[QUEUE_MAX];
	while (count > 0) {
		ssize_t got = read(fd, buf, count > sizeof(buf) ? sizeof(buf) : count);
		if (got <= 0)
			abort();
		count -= (unsigned int)got;
	}
}

static struct fcq *fcq_of(const struct ibv_cq *cq)
{
	return container_of(cq, struct fcq, cq);
}

static struct fqp *fqp_of(const struct ibv_qp *qp)
{
	return container_of(qp, struct fqp, qp);
}

static struct fsrq *fsrq_of(const struct ibv_srq *srq)
{
	return container_of(srq, struct fsrq, srq);
}

static struct fid *fid_of(const struct rdma_cm_id *id)
{
	return container_of(id, struct fid, id);
}

static struct fevch *fevch_of(const struct rdma_event_channel *ch)
{
	return container_of(ch, struct fevch, ch);
}

static void free_fevch_queue(struct fevch *e)
{
	for (unsigned int i = 0; i < e->count; i++)
		__real_free(e->queue[i]);
	e->count = 0;
	close(e->ch.fd);
	close(e->wfd);
}

static void free_node(struct node *n)
{
	unlink_node(n);
	switch (n->type) {
	case FAKE_PD:
		__real_free(container_of(n, struct fpd, n));
		break;
	case FAKE_MR:
		__real_free(container_of(n, struct fmr, n));
		break;
	case FAKE_COMP_CHANNEL: {
		struct fchan *c = container_of(n, struct fchan, n);
		close(c->ch.fd);
		close(c->wfd);
		__real_free(c);
		break;
	}
	case FAKE_CQ:
		__real_free(container_of(n, struct fcq, n));
		break;
	case FAKE_QP:
		__real_free(container_of(n, struct fqp, n));
		break;
	case FAKE_EVENT_CHANNEL: {
		struct fevch *e = container_of(n, struct fevch, n);
		free_fevch_queue(e);
		__real_free(e);
		break;
	}
	case FAKE_CM_ID: {
		struct fid *f = container_of(n, struct fid, n);
		if (f->internal != NULL) {
			free_fevch_queue(f->internal);
			__real_free(f->internal);
		}
		__real_free(f);
		break;
	}
	case FAKE_ADDRINFO:
		__real_free(container_of(n, struct frai, n));
		break;
	case FAKE_CM_EVENT:
		__real_free(container_of(n, struct fevent, n));
		break;
	case FAKE_SRQ:
		__real_free(container_of(n, struct fsrq, n));
		break;
	default:
		abort();
	}
}

static struct fevch *new_fevch(void)
{
	struct fevch *e = fake_alloc(sizeof(*e));
	make_pipe(&e->ch.fd, &e->wfd);
	e->n.next = e->n.prev = &e->n;
	return e;
}

/* the channel (made by rdma_create_event_channel() or internal to an ID) that has fd */
static struct fevch *fevch_by_fd(int fd)
{
	FOR_EACH_LIVE(e, struct fevch, n, FAKE_EVENT_CHANNEL)
	if (e->ch.fd == fd)
		return e;
	FOR_EACH_LIVE(f, struct fid, n, FAKE_CM_ID)
	if (f->internal != NULL && f->internal->ch.fd == fd)
		return f->internal;
	return NULL;
}

static bool channel_is_valid(const struct rdma_event_channel *ch)
{
	return ch != NULL && fevch_by_fd(ch->fd) == fevch_of(ch);
}

/* ---- the fake device ------------------------------------------------------------------ */

static int fake_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
static int fake_req_notify_cq(struct ibv_cq *cq, int solicited_only);
static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
static int fake_post_srq_recv(
	struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

static void init_device(enum ibv_transport_type transport)
{
	memset(&Device, 0, sizeof(Device));
	Device.node_type = IBV_NODE_CA;
	Device.transport_type = transport;
	snprintf(Device.name, sizeof(Device.name), "fake0");

	memset(&Ctx, 0, sizeof(Ctx));
	Ctx.device = &Device;
	Ctx.ops.poll_cq = fake_poll_cq;
	Ctx.ops.req_notify_cq = fake_req_notify_cq;
	Ctx.ops.post_send = fake_post_send;
	Ctx.ops.post_recv = fake_post_recv;
	Ctx.ops.post_srq_recv = fake_post_srq_recv;
	Ctx.cmd_fd = -1;
	Ctx.async_fd = -1;
	Ctx.num_comp_vectors = 1;
}

struct ibv_context *fake_ibv_context(void)
{
	if (Ctx.device == NULL)
		init_device(IBV_TRANSPORT_IB);
	return &Ctx;
}

void fake_set_transport(enum ibv_transport_type transport)
{
	(void)fake_ibv_context();
	Device.transport_type = transport;
}

/* ---- control ---------------------------------------------------------------------------- */

void fake_free_all(void)
{
	pthread_mutex_lock(&Lock);
	while (Live.next != &Live)
		free_node(Live.next);
	pthread_mutex_unlock(&Lock);
}

/* fake_cm_auto_answer(): what rdma_connect() makes the "remote side" answer */
static struct {
	bool on;
	enum rdma_cm_event_type type;
	int status; /* fake_cm_auto_answer_status() */
	uint8_t pdata[FAKE_CONNECT_PDATA_MAX];
	uint8_t len;
	fake_answer_fn fn; /* fake_cm_auto_answer_fn() */
} Auto_establish;

/* fake_fail_send_chain: the next ibv_post_send stops at request index with err */
static unsigned int Chain_fail_at;
static int Chain_fail_err;

void fake_reset(void)
{
	fake_free_all();
	pthread_mutex_lock(&Lock);
	memset(Calls, 0, sizeof(Calls));
	memset(Fail_at, 0, sizeof(Fail_at));
	memset(Fail_err, 0, sizeof(Fail_err));
	Chain_fail_at = 0;
	Chain_fail_err = 0;
	Violations = 0;
	Last_violation[0] = '\0';
	memset(&Last_connect, 0, sizeof(Last_connect));
	memset(&Auto_establish, 0, sizeof(Auto_establish));
	memset(&Last_accept, 0, sizeof(Last_accept));
	memset(&Last_modify_qp, 0, sizeof(Last_modify_qp));
	Last_resolve_addr_timeout = Last_resolve_route_timeout = -1;
	Last_cqe = Last_reg_mr_access = Last_backlog = -1;
	memset(&Last_hints, 0, sizeof(Last_hints));
	Last_node[0] = Last_service[0] = '\0';
	Last_ps = 0;
	init_device(IBV_TRANSPORT_IB);
	pthread_mutex_unlock(&Lock);
}

void fake_fail_send_chain(unsigned int index, int err)
{
	pthread_mutex_lock(&Lock);
	Chain_fail_at = index;
	Chain_fail_err = err;
	pthread_mutex_unlock(&Lock);
}

void fake_fail(enum fake_fn fn, unsigned int nth, int err)
{
	pthread_mutex_lock(&Lock);
	Fail_at[fn] = nth == 0 ? 0 : Calls[fn] + nth;
	Fail_err[fn] = err;
	pthread_mutex_unlock(&Lock);
}

unsigned int fake_calls(enum fake_fn fn)
{
	return Calls[fn];
}

int fake_live(enum fake_obj_type type)
{
	int count = 0;
	pthread_mutex_lock(&Lock);
	for (struct node *i = Live.next; i != &Live; i = i->next)
		if (i->type == type)
			count++;
	pthread_mutex_unlock(&Lock);
	return count;
}

int fake_live_total(void)
{
	int count = 0;
	pthread_mutex_lock(&Lock);
	for (struct node *i = Live.next; i != &Live; i = i->next)
		count++;
	pthread_mutex_unlock(&Lock);
	return count;
}

int fake_violations(void)
{
	return Violations;
}

const char *fake_last_violation(void)
{
	return Last_violation;
}

struct ibv_qp *fake_qp_by_num(uint32_t qp_num)
{
	FOR_EACH_LIVE(q, struct fqp, n, FAKE_QP)
	if (q->qp.qp_num == qp_num)
		return &q->qp;
	return NULL;
}

struct ibv_cq *fake_cq_by_channel_fd(int fd, int nth)
{
	FOR_EACH_LIVE(c, struct fcq, n, FAKE_CQ)
	if (c->cq.channel != NULL && c->cq.channel->fd == fd && nth-- == 0)
		return &c->cq;
	return NULL;
}

struct ibv_qp_init_attr fake_qp_attr(const struct ibv_qp *qp)
{
	return fqp_of(qp)->attr;
}

uint8_t fake_qp_min_rnr_timer(const struct ibv_qp *qp)
{
	return fqp_of(qp)->min_rnr_timer;
}

struct fake_modify_qp fake_last_modify_qp(void)
{
	return Last_modify_qp;
}

/* raise one event for cq on channel: a byte in the pipe and the CQ in the queue */
static void raise_locked(struct fchan *c, struct ibv_cq *cq)
{
	if (c->count == QUEUE_MAX)
		abort();
	c->queue[c->count++] = cq;
	if (write(c->wfd, "e", 1) != 1)
		abort();
}

void fake_cq_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc)
{
	pthread_mutex_lock(&Lock);
	struct fcq *f = fcq_of(cq);
	if (f->n_wc == WC_MAX)
		abort();
	f->wc[f->n_wc++] = *wc;
	/* verbs: an armed CQ raises one event for the next completion and disarms */
	if (f->armed && cq->channel != NULL) {
		f->armed = false;
		raise_locked(container_of(cq->channel, struct fchan, ch), cq);
	}
	pthread_mutex_unlock(&Lock);
}

bool fake_cq_armed(const struct ibv_cq *cq)
{
	return fcq_of(cq)->armed;
}

void fake_channel_raise(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	pthread_mutex_lock(&Lock);
	raise_locked(container_of(channel, struct fchan, ch), cq);
	pthread_mutex_unlock(&Lock);
}

unsigned int fake_cq_events_got(const struct ibv_cq *cq)
{
	return fcq_of(cq)->got;
}

unsigned int fake_cq_events_acked(const struct ibv_cq *cq)
{
	return fcq_of(cq)->acked;
}

unsigned int fake_send_count(const struct ibv_qp *qp)
{
	return fqp_of(qp)->n_send;
}

struct fake_send_wr fake_send_get(const struct ibv_qp *qp, unsigned int i)
{
	return fqp_of(qp)->sends[i];
}

unsigned int fake_recv_count(const struct ibv_qp *qp)
{
	return fqp_of(qp)->n_recv;
}

struct fake_recv_wr fake_recv_get(const struct ibv_qp *qp, unsigned int i)
{
	return fqp_of(qp)->recvs[i];
}

static void push_event_locked(struct fevch *e, struct rdma_cm_id *id, struct rdma_cm_id *listen_id,
	enum rdma_cm_event_type type, int status, const void *pdata, uint8_t pdata_len)
{
	struct fevent *ev = fake_alloc(sizeof(*ev));
	ev->n.next = ev->n.prev = &ev->n;
	ev->ev.id = id;
	ev->ev.listen_id = listen_id;
	ev->ev.event = type;
	ev->ev.status = status;
	if (pdata_len > 0) {
		memcpy(ev->pdata, pdata, pdata_len);
		ev->ev.param.conn.private_data = ev->pdata;
		ev->ev.param.conn.private_data_len = pdata_len;
	}
	if (e->count == QUEUE_MAX)
		abort();
	e->queue[e->count++] = ev;
	if (write(e->wfd, "e", 1) != 1)
		abort();
}

void fake_cm_push_event(int evch_fd, struct rdma_cm_id *id, enum rdma_cm_event_type type,
	int status, const void *pdata, uint8_t pdata_len)
{
	pthread_mutex_lock(&Lock);
	struct fevch *e = fevch_by_fd(evch_fd);
	if (e == NULL)
		abort();
	push_event_locked(e, id, NULL, type, status, pdata, pdata_len);
	pthread_mutex_unlock(&Lock);
}

struct rdma_cm_id *fake_cm_id_by_channel_fd(int evch_fd)
{
	FOR_EACH_LIVE(f, struct fid, n, FAKE_CM_ID)
	if (f->id.channel != NULL && f->id.channel->fd == evch_fd)
		return &f->id;
	return NULL;
}

/* the size of a socket address of family; sizeof(struct sockaddr) for the ones not known */
static size_t sockaddr_len(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return sizeof(struct sockaddr);
	}
}

struct rdma_cm_id *fake_cm_push_connect_request(int ep_fd, const void *pdata, uint8_t pdata_len)
{
	return fake_cm_push_connect_request_from(ep_fd, NULL, pdata, pdata_len);
}

struct rdma_cm_id *fake_cm_push_connect_request_from(
	int ep_fd, const struct sockaddr *peer, const void *pdata, uint8_t pdata_len)
{
	struct rdma_cm_id *listen_id = fake_cm_id_by_channel_fd(ep_fd);
	if (listen_id == NULL)
		abort();

	pthread_mutex_lock(&Lock);
	struct fevch *e = fevch_by_fd(ep_fd);
	struct fid *f = fake_alloc(sizeof(*f));
	f->id.verbs = &Ctx; /* the request arrived through the device */
	f->id.channel = &e->ch;
	f->id.ps = listen_id->ps;
	f->id.qp_type = IBV_QPT_RC;
	if (peer != NULL)
		memcpy(&f->id.route.addr.dst_storage, peer, sockaddr_len(peer));
	link_node(&f->n, FAKE_CM_ID);
	push_event_locked(e, &f->id, listen_id, RDMA_CM_EVENT_CONNECT_REQUEST, 0, pdata, pdata_len);
	pthread_mutex_unlock(&Lock);
	return &f->id;
}

struct fake_conn_param fake_last_connect(void)
{
	return Last_connect;
}

struct fake_conn_param fake_last_accept(void)
{
	return Last_accept;
}

int fake_last_resolve_addr_timeout(void)
{
	return Last_resolve_addr_timeout;
}

int fake_last_resolve_route_timeout(void)
{
	return Last_resolve_route_timeout;
}

int fake_last_cqe(void)
{
	return Last_cqe;
}

int fake_last_reg_mr_access(void)
{
	return Last_reg_mr_access;
}

struct rdma_addrinfo fake_last_hints(void)
{
	return Last_hints;
}

const char *fake_last_node(void)
{
	return Last_node;
}

const char *fake_last_service(void)
{
	return Last_service;
}

enum rdma_port_space fake_last_port_space(void)
{
	return Last_ps;
}

int fake_last_listen_backlog(void)
{
	return Last_backlog;
}

/* ---- libibverbs ------------------------------------------------------------------------- */

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_IBV_ALLOC_PD, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	if (context != &Ctx)
		violation("ibv_alloc_pd() on a context that is not the fake device");
	struct fpd *p = fake_alloc(sizeof(*p));
	p->pd.context = context;
	p->pd.handle = Next_handle++;
	link_node(&p->n, FAKE_PD);
	pthread_mutex_unlock(&Lock);
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fpd *p = container_of(pd, struct fpd, pd);
	if (!is_live(&p->n, FAKE_PD))
		violation("ibv_dealloc_pd() of a PD that does not exist");
	if (fail_now(FAKE_IBV_DEALLOC_PD, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	FOR_EACH_LIVE(m, struct fmr, n, FAKE_MR)
	if (m->mr.pd == pd) {
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	FOR_EACH_LIVE(q, struct fqp, n, FAKE_QP)
	if (q->qp.pd == pd) {
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	FOR_EACH_LIVE(r, struct fsrq, n, FAKE_SRQ)
	if (r->srq.pd == pd) {
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	free_node(&p->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	int err;
	pthread_mutex_lock(&Lock);
	Last_reg_mr_access = access;
	if (fail_now(FAKE_IBV_REG_MR, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	if (!is_live(&container_of(pd, struct fpd, pd)->n, FAKE_PD))
		violation("ibv_reg_mr() with a PD that does not exist");
	if (addr == NULL || length == 0) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return NULL;
	}
	struct fmr *m = fake_alloc(sizeof(*m));
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = Next_handle++;
	m->mr.lkey = 0x1000 + m->mr.handle;
	m->mr.rkey = 0x2000 + m->mr.handle;
	link_node(&m->n, FAKE_MR);
	pthread_mutex_unlock(&Lock);
	return &m->mr;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fmr *m = container_of(mr, struct fmr, mr);
	if (!is_live(&m->n, FAKE_MR))
		violation("ibv_dereg_mr() of an MR that does not exist");
	if (fail_now(FAKE_IBV_DEREG_MR, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	free_node(&m->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_IBV_CREATE_COMP_CHANNEL, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	if (context != &Ctx)
		violation("ibv_create_comp_channel() on a context that is not the fake device");
	struct fchan *c = fake_alloc(sizeof(*c));
	c->ch.context = context;
	make_pipe(&c->ch.fd, &c->wfd);
	link_node(&c->n, FAKE_COMP_CHANNEL);
	pthread_mutex_unlock(&Lock);
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fchan *c = container_of(channel, struct fchan, ch);
	if (!is_live(&c->n, FAKE_COMP_CHANNEL))
		violation("ibv_destroy_comp_channel() of a channel that does not exist");
	if (fail_now(FAKE_IBV_DESTROY_COMP_CHANNEL, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	FOR_EACH_LIVE(q, struct fcq, n, FAKE_CQ)
	if (q->cq.channel == channel) {
		violation("ibv_destroy_comp_channel() while a CQ uses the channel");
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	free_node(&c->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	struct ibv_comp_channel *channel, int comp_vector)
{
	(void)comp_vector;
	int err;
	pthread_mutex_lock(&Lock);
	Last_cqe = cqe;
	if (fail_now(FAKE_IBV_CREATE_CQ, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	if (context != &Ctx)
		violation("ibv_create_cq() on a context that is not the fake device");
	if (channel != NULL &&
		!is_live(&container_of(channel, struct fchan, ch)->n, FAKE_COMP_CHANNEL))
		violation("ibv_create_cq() on a channel that does not exist");
	if (cqe < 1) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return NULL;
	}
	struct fcq *q = fake_alloc(sizeof(*q));
	q->cq.context = context;
	q->cq.channel = channel;
	q->cq.cq_context = cq_context;
	q->cq.handle = Next_handle++;
	q->cq.cqe = cqe;
	link_node(&q->n, FAKE_CQ);
	pthread_mutex_unlock(&Lock);
	return &q->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fcq *q = fcq_of(cq);
	if (!is_live(&q->n, FAKE_CQ))
		violation("ibv_destroy_cq() of a CQ that does not exist");
	if (fail_now(FAKE_IBV_DESTROY_CQ, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	FOR_EACH_LIVE(p, struct fqp, n, FAKE_QP)
	if (p->qp.send_cq == cq || p->qp.recv_cq == cq) {
		violation("ibv_destroy_cq() while a QP uses the CQ");
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	if (q->got != q->acked)
		violation("ibv_destroy_cq() with %u unacknowledged events (it would hang)",
			q->got - q->acked);
	/* events not handed out yet die with the CQ, as in the kernel */
	if (cq->channel != NULL) {
		struct fchan *c = container_of(cq->channel, struct fchan, ch);
		unsigned int kept = 0, dropped = 0;
		for (unsigned int i = 0; i < c->count; i++) {
			if (c->queue[i] == cq)
				dropped++;
			else
				c->queue[kept++] = c->queue[i];
		}
		c->count = kept;
		drain_bytes(c->ch.fd, dropped);
	}
	free_node(&q->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

static int fake_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)solicited_only;
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_IBV_REQ_NOTIFY_CQ, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	fcq_of(cq)->armed = true;
	pthread_mutex_unlock(&Lock);
	return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_IBV_POLL_CQ, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	struct fcq *q = fcq_of(cq);
	unsigned int n = q->n_wc < (unsigned int)num_entries ? q->n_wc : (unsigned int)num_entries;
	memcpy(wc, q->wc, n * sizeof(*wc));
	memmove(q->wc, q->wc + n, (q->n_wc - n) * sizeof(*wc));
	q->n_wc -= n;
	pthread_mutex_unlock(&Lock);
	return (int)n;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	int err;
	pthread_mutex_lock(&Lock);
	bool fail = fail_now(FAKE_IBV_GET_CQ_EVENT, &err);
	pthread_mutex_unlock(&Lock);
	if (fail) {
		errno = err;
		return -1;
	}

	/* outside the lock: this blocks like the real read of a blocking channel fd */
	char byte;
	ssize_t got = read(channel->fd, &byte, 1);
	if (got != 1) {
		if (got == 0)
			errno = EIO;
		return -1;
	}

	pthread_mutex_lock(&Lock);
	struct fchan *c = container_of(channel, struct fchan, ch);
	struct ibv_cq *ev_cq = c->queue[0];
	memmove(c->queue, c->queue + 1, (c->count - 1) * sizeof(c->queue[0]));
	c->count--;
	fcq_of(ev_cq)->got++;
	*cq = ev_cq;
	*cq_context = ev_cq->cq_context;
	pthread_mutex_unlock(&Lock);
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&Lock);
	Calls[FAKE_IBV_ACK_CQ_EVENTS]++;
	struct fcq *q = fcq_of(cq);
	q->acked += nevents;
	if (q->acked > q->got)
		violation("ibv_ack_cq_events() acknowledged %u events of %u handed out", q->acked,
			q->got);
	pthread_mutex_unlock(&Lock);
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fqp *q = fqp_of(qp);
	if (fail_now(FAKE_IBV_POST_SEND, &err)) {
		*bad_wr = wr;
		pthread_mutex_unlock(&Lock);
		return err;
	}
	/* a chain is taken in order up to the first bad request, as verbs do */
	for (unsigned int i = 0; wr != NULL; wr = wr->next, i++) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->attr.cap.max_send_sge ||
			(Chain_fail_err && i == Chain_fail_at)) {
			err = Chain_fail_err ? Chain_fail_err : EINVAL;
			Chain_fail_err = 0;
			*bad_wr = wr;
			pthread_mutex_unlock(&Lock);
			return err;
		}
		if (wr->num_sge > 0 && wr->sg_list == NULL)
			violation("ibv_post_send() with num_sge %d and no sg_list", wr->num_sge);
		if (q->n_send == WR_MAX)
			abort();
		struct fake_send_wr *rec = &q->sends[q->n_send++];
		memset(rec, 0, sizeof(*rec));
		rec->wr_id = wr->wr_id;
		rec->opcode = wr->opcode;
		rec->send_flags = wr->send_flags;
		rec->num_sge = wr->num_sge;
		rec->sg_list_null = wr->sg_list == NULL;
		if (wr->num_sge > 0 && wr->sg_list != NULL)
			rec->sge = wr->sg_list[0];
		rec->imm_data = wr->imm_data;
		rec->remote_addr = wr->wr.rdma.remote_addr;
		rec->rkey = wr->wr.rdma.rkey;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fqp *q = fqp_of(qp);
	if (fail_now(FAKE_IBV_POST_RECV, &err)) {
		*bad_wr = wr;
		pthread_mutex_unlock(&Lock);
		return err;
	}
	/* rxe: a QP on an SRQ has no receive queue to post to */
	if (qp->srq != NULL) {
		*bad_wr = wr;
		pthread_mutex_unlock(&Lock);
		return EINVAL;
	}
	/* a chain is taken in order up to the first bad request, as verbs do */
	for (; wr != NULL; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->attr.cap.max_recv_sge) {
			*bad_wr = wr;
			pthread_mutex_unlock(&Lock);
			return EINVAL;
		}
		if (wr->num_sge > 0 && wr->sg_list == NULL)
			violation("ibv_post_recv() with num_sge %d and no sg_list", wr->num_sge);
		if (q->n_recv == WR_MAX)
			abort();
		struct fake_recv_wr *rec = &q->recvs[q->n_recv++];
		memset(rec, 0, sizeof(*rec));
		rec->wr_id = wr->wr_id;
		rec->num_sge = wr->num_sge;
		rec->sg_list_null = wr->sg_list == NULL;
		if (wr->num_sge > 0 && wr->sg_list != NULL)
			rec->sge = wr->sg_list[0];
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

/* whether verbs allow IBV_QP_MIN_RNR_TIMER in the transition from cur to next (RC) */
static bool min_rnr_timer_allowed(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	switch (cur) {
	case IBV_QPS_INIT:
		return next == IBV_QPS_RTR;
	case IBV_QPS_RTR:
	case IBV_QPS_SQE:
		return next == IBV_QPS_RTS;
	case IBV_QPS_RTS:
		return next == IBV_QPS_RTS;
	case IBV_QPS_SQD:
		return next == IBV_QPS_SQD || next == IBV_QPS_RTS;
	default:
		return false;
	}
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fqp *q = fqp_of(qp);
	if (!is_live(&q->n, FAKE_QP)) {
		violation("ibv_modify_qp() of a QP that does not exist");
		pthread_mutex_unlock(&Lock);
		return EINVAL;
	}
	Last_modify_qp.qp_num = qp->qp_num;
	Last_modify_qp.attr = *attr;
	Last_modify_qp.attr_mask = attr_mask;
	if (fail_now(FAKE_IBV_MODIFY_QP, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	if (attr_mask & ~(IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER))
		violation("ibv_modify_qp() with attributes the fake does not model (mask 0x%x)",
			(unsigned int)attr_mask);
	enum ibv_qp_state next = (attr_mask & IBV_QP_STATE) ? attr->qp_state : qp->state;
	if ((attr_mask & IBV_QP_MIN_RNR_TIMER) && !min_rnr_timer_allowed(qp->state, next)) {
		pthread_mutex_unlock(&Lock);
		return EINVAL;
	}
	if (attr_mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = attr->min_rnr_timer;
	qp->state = next;
	pthread_mutex_unlock(&Lock);
	return 0;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_IBV_CREATE_SRQ, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	if (pd == NULL || !is_live(&container_of(pd, struct fpd, pd)->n, FAKE_PD))
		violation("ibv_create_srq() with a PD that does not exist");
	/* rxe's limits: at least one receive, at most the device's, one SGE is plenty */
	if (srq_init_attr->attr.max_wr < 1 || srq_init_attr->attr.max_wr > FAKE_MAX_SRQ_WR ||
		srq_init_attr->attr.max_sge < 1 || srq_init_attr->attr.max_sge > 32) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return NULL;
	}
	struct fsrq *r = fake_alloc(sizeof(*r));
	r->srq.context = pd->context;
	r->srq.srq_context = srq_init_attr->srq_context;
	r->srq.pd = pd;
	r->srq.handle = Next_handle++;
	r->attr = *srq_init_attr;
	link_node(&r->n, FAKE_SRQ);
	pthread_mutex_unlock(&Lock);
	return &r->srq;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fsrq *r = fsrq_of(srq);
	if (!is_live(&r->n, FAKE_SRQ)) {
		violation("ibv_destroy_srq() of an SRQ that does not exist");
		pthread_mutex_unlock(&Lock);
		return EINVAL;
	}
	if (fail_now(FAKE_IBV_DESTROY_SRQ, &err)) {
		pthread_mutex_unlock(&Lock);
		return err;
	}
	/* the kernel refuses while a QP is attached (its usecnt) */
	FOR_EACH_LIVE(q, struct fqp, n, FAKE_QP)
	if (q->qp.srq == srq) {
		pthread_mutex_unlock(&Lock);
		return EBUSY;
	}
	free_node(&r->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

static int fake_post_srq_recv(
	struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fsrq *r = fsrq_of(srq);
	if (!is_live(&r->n, FAKE_SRQ))
		violation("ibv_post_srq_recv() on an SRQ that does not exist");
	if (fail_now(FAKE_IBV_POST_SRQ_RECV, &err)) {
		*bad_wr = wr;
		pthread_mutex_unlock(&Lock);
		return err;
	}
	/* a chain is taken in order up to the first bad request, as verbs do */
	for (; wr != NULL; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > r->attr.attr.max_sge) {
			*bad_wr = wr;
			pthread_mutex_unlock(&Lock);
			return EINVAL;
		}
		if (wr->num_sge > 0 && wr->sg_list == NULL)
			violation(
				"ibv_post_srq_recv() with num_sge %d and no sg_list", wr->num_sge);
		/* a full SRQ: ENOMEM, as providers say */
		if (r->n_recv == r->attr.attr.max_wr) {
			*bad_wr = wr;
			pthread_mutex_unlock(&Lock);
			return ENOMEM;
		}
		struct fake_recv_wr *rec = &r->recvs[r->n_recv++];
		memset(rec, 0, sizeof(*rec));
		rec->wr_id = wr->wr_id;
		rec->num_sge = wr->num_sge;
		rec->sg_list_null = wr->sg_list == NULL;
		if (wr->num_sge > 0 && wr->sg_list != NULL)
			rec->sge = wr->sg_list[0];
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

struct ibv_srq *fake_srq_nth(int nth)
{
	FOR_EACH_LIVE(r, struct fsrq, n, FAKE_SRQ)
	if (nth-- == 0)
		return &r->srq;
	return NULL;
}

struct ibv_srq_init_attr fake_srq_attr(const struct ibv_srq *srq)
{
	return fsrq_of(srq)->attr;
}

unsigned int fake_srq_recv_count(const struct ibv_srq *srq)
{
	return fsrq_of(srq)->n_recv;
}

struct fake_recv_wr fake_srq_recv_get(const struct ibv_srq *srq, unsigned int i)
{
	return fsrq_of(srq)->recvs[i];
}

bool fake_srq_deliver(struct ibv_qp *qp, uint32_t byte_len, bool with_imm, uint32_t imm_data)
{
	if (qp->srq == NULL)
		abort(); /* a test mistake: the QP takes receives of its own */

	pthread_mutex_lock(&Lock);
	struct fsrq *r = fsrq_of(qp->srq);
	if (r->n_recv == 0) {
		pthread_mutex_unlock(&Lock);
		return false;
	}
	struct fake_recv_wr rec = r->recvs[0];
	memmove(r->recvs, r->recvs + 1, (r->n_recv - 1) * sizeof(r->recvs[0]));
	r->n_recv--;
	pthread_mutex_unlock(&Lock);

	uint32_t room = rec.num_sge > 0 ? rec.sge.length : 0;
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rec.wr_id;
	wc.qp_num = qp->qp_num;
	wc.opcode = IBV_WC_RECV;
	if (byte_len > room) {
		wc.status = IBV_WC_LOC_LEN_ERR;
	} else {
		wc.status = IBV_WC_SUCCESS;
		wc.byte_len = byte_len;
		if (with_imm) {
			wc.wc_flags = IBV_WC_WITH_IMM;
			wc.imm_data = imm_data;
		}
	}
	fake_cq_push_wc(qp->recv_cq, &wc);
	return true;
}

/* the text libibverbs gives each completion status, word for word (the daemon logs it) */
const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};
	if ((unsigned int)status < sizeof(names) / sizeof(names[0]) && names[status] != NULL)
		return names[status];
	return "unknown";
}

/* ---- librdmacm -------------------------------------------------------------------------- */

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
	struct rdma_addrinfo **res)
{
	int err;
	pthread_mutex_lock(&Lock);
	snprintf(Last_node, sizeof(Last_node), "%s", node ? node : "");
	snprintf(Last_service, sizeof(Last_service), "%s", service ? service : "");
	if (hints != NULL)
		Last_hints = *hints;
	if (fail_now(FAKE_RDMA_GETADDRINFO, &err)) {
		pthread_mutex_unlock(&Lock);
		if (err == -1)
			errno = ENODEV;
		return err;
	}
	struct in_addr addr;
	if (node == NULL || inet_pton(AF_INET, node, &addr) != 1) {
		/* the fake knows numeric IPv4 addresses only */
		pthread_mutex_unlock(&Lock);
		return EAI_NONAME;
	}
	struct frai *r = fake_alloc(sizeof(*r));
	struct sockaddr_in *sin = (hints && (hints->ai_flags & RAI_PASSIVE)) ? &r->src : &r->dst;
	sin->sin_family = AF_INET;
	sin->sin_addr = addr;
	sin->sin_port = htons(service ? (uint16_t)atoi(service) : 0);
	r->rai.ai_family = AF_INET;
	r->rai.ai_qp_type = hints ? hints->ai_qp_type : IBV_QPT_RC;
	r->rai.ai_port_space = hints ? hints->ai_port_space : RDMA_PS_TCP;
	r->rai.ai_flags = hints ? hints->ai_flags : 0;
	if (sin == &r->src) {
		r->rai.ai_src_addr = (struct sockaddr *)&r->src;
		r->rai.ai_src_len = sizeof(r->src);
	} else {
		r->rai.ai_dst_addr = (struct sockaddr *)&r->dst;
		r->rai.ai_dst_len = sizeof(r->dst);
	}
	link_node(&r->n, FAKE_ADDRINFO);
	*res = &r->rai;
	pthread_mutex_unlock(&Lock);
	return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	pthread_mutex_lock(&Lock);
	Calls[FAKE_RDMA_FREEADDRINFO]++;
	struct frai *r = container_of(res, struct frai, rai);
	if (!is_live(&r->n, FAKE_ADDRINFO))
		violation("rdma_freeaddrinfo() of a result that does not exist");
	else
		free_node(&r->n);
	pthread_mutex_unlock(&Lock);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_CREATE_EVENT_CHANNEL, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return NULL;
	}
	struct fevch *e = new_fevch();
	link_node(&e->n, FAKE_EVENT_CHANNEL);
	pthread_mutex_unlock(&Lock);
	return &e->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	pthread_mutex_lock(&Lock);
	Calls[FAKE_RDMA_DESTROY_EVENT_CHANNEL]++;
	struct fevch *e = fevch_of(channel);
	if (!is_live(&e->n, FAKE_EVENT_CHANNEL)) {
		violation("rdma_destroy_event_channel() of a channel that does not exist");
		pthread_mutex_unlock(&Lock);
		return;
	}
	FOR_EACH_LIVE(f, struct fid, n, FAKE_CM_ID)
	if (f->id.channel == channel)
		violation("rdma_destroy_event_channel() while a CM ID is on it");
	free_node(&e->n);
	pthread_mutex_unlock(&Lock);
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	enum rdma_port_space ps)
{
	int err;
	pthread_mutex_lock(&Lock);
	Last_ps = ps;
	if (fail_now(FAKE_RDMA_CREATE_ID, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (channel != NULL && !channel_is_valid(channel))
		violation("rdma_create_id() on a channel that does not exist");
	struct fid *f = fake_alloc(sizeof(*f));
	if (channel == NULL) {
		/* librdmacm gives a synchronous ID a channel of its own */
		f->internal = new_fevch();
		channel = &f->internal->ch;
	}
	f->id.channel = channel;
	f->id.context = context;
	f->id.ps = ps;
	f->id.qp_type = IBV_QPT_RC;
	link_node(&f->n, FAKE_CM_ID);
	*id = &f->id;
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fid *f = fid_of(id);
	if (!is_live(&f->n, FAKE_CM_ID)) {
		violation("rdma_destroy_id() of an ID that does not exist");
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	if (fail_now(FAKE_RDMA_DESTROY_ID, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (f->unacked > 0)
		violation("rdma_destroy_id() with %d unacknowledged events (it would hang)",
			f->unacked);
	if (id->qp != NULL)
		violation("rdma_destroy_id() while the ID has a QP (the QP leaks)");
	free_node(&f->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_BIND_ADDR, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (addr == NULL || addr->sa_family != AF_INET) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	/* 127.0.0.0/8 binds, but no RDMA device serves it */
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
	if ((ntohl(sin->sin_addr.s_addr) >> 24) != 127)
		id->verbs = &Ctx;
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_resolve_addr(
	struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int timeout_ms)
{
	(void)src_addr;
	int err;
	pthread_mutex_lock(&Lock);
	Last_resolve_addr_timeout = timeout_ms;
	if (fail_now(FAKE_RDMA_RESOLVE_ADDR, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (dst_addr == NULL) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	/* as librdmacm: the ID knows its destination from here on */
	memcpy(&id->route.addr.dst_storage, dst_addr, sockaddr_len(dst_addr));
	id->verbs = &Ctx;
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	int err;
	pthread_mutex_lock(&Lock);
	Last_resolve_route_timeout = timeout_ms;
	if (fail_now(FAKE_RDMA_RESOLVE_ROUTE, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (id->verbs == NULL) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	(void)id;
	int err;
	pthread_mutex_lock(&Lock);
	Last_backlog = backlog;
	if (fail_now(FAKE_RDMA_LISTEN, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	int err;
	pthread_mutex_lock(&Lock);
	bool fail = fail_now(FAKE_RDMA_GET_CM_EVENT, &err);
	pthread_mutex_unlock(&Lock);
	if (fail) {
		errno = err;
		return -1;
	}

	/* outside the lock: blocks like the real channel unless the fd is non-blocking */
	char byte;
	ssize_t got = read(channel->fd, &byte, 1);
	if (got != 1) {
		if (got == 0)
			errno = ENODATA;
		return -1;
	}

	pthread_mutex_lock(&Lock);
	struct fevch *e = fevch_of(channel);
	struct fevent *ev = e->queue[0];
	memmove(e->queue, e->queue + 1, (e->count - 1) * sizeof(e->queue[0]));
	e->count--;
	link_node(&ev->n, FAKE_CM_EVENT);
	fid_of(ev->ev.id)->unacked++;
	/*
	 * librdmacm on the active side: the CONNECT_RESPONSE takes the QP INIT -> RTR (the
	 * kernel CM's min_rnr_timer, 0) -> RTS before ESTABLISHED is handed out
	 */
	struct ibv_qp *eqp = ev->ev.id != NULL ? ev->ev.id->qp : NULL;
	if (ev->ev.event == RDMA_CM_EVENT_ESTABLISHED && eqp != NULL &&
		(eqp->state == IBV_QPS_INIT || eqp->state == IBV_QPS_RTR)) {
		fqp_of(eqp)->min_rnr_timer = 0;
		eqp->state = IBV_QPS_RTS;
	}
	*event = &ev->ev;
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	int err;
	pthread_mutex_lock(&Lock);
	struct fevent *ev = container_of(event, struct fevent, ev);
	if (!is_live(&ev->n, FAKE_CM_EVENT)) {
		violation("rdma_ack_cm_event() of an event that is not handed out");
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	if (fail_now(FAKE_RDMA_ACK_CM_EVENT, &err)) {
		/* a failed acknowledgement still releases the event (librdmacm frees it) */
		fid_of(event->id)->unacked--;
		free_node(&ev->n);
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	fid_of(event->id)->unacked--;
	free_node(&ev->n);
	pthread_mutex_unlock(&Lock);
	return 0;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};
	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) && names[event] != NULL)
		return names[event];
	return "UNKNOWN EVENT";
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_CREATE_QP, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (id->verbs == NULL || pd == NULL || pd->context != id->verbs ||
		qp_init_attr->send_cq == NULL || qp_init_attr->recv_cq == NULL || id->qp != NULL) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	if (qp_init_attr->srq != NULL && !is_live(&fsrq_of(qp_init_attr->srq)->n, FAKE_SRQ))
		violation("rdma_create_qp() with an SRQ that does not exist");
	struct fqp *q = fake_alloc(sizeof(*q));
	q->qp.context = id->verbs;
	q->qp.qp_context = qp_init_attr->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = qp_init_attr->send_cq;
	q->qp.recv_cq = qp_init_attr->recv_cq;
	q->qp.srq = qp_init_attr->srq;
	q->qp.handle = Next_handle++;
	q->qp.qp_num = Next_qp_num++;
	q->qp.state = IBV_QPS_INIT;
	q->qp.qp_type = qp_init_attr->qp_type;
	q->attr = *qp_init_attr;
	link_node(&q->n, FAKE_QP);
	id->qp = &q->qp;
	pthread_mutex_unlock(&Lock);
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	pthread_mutex_lock(&Lock);
	Calls[FAKE_RDMA_DESTROY_QP]++;
	if (id->qp == NULL) {
		violation("rdma_destroy_qp() of an ID without a QP (librdmacm would crash)");
	} else {
		free_node(&fqp_of(id->qp)->n);
		id->qp = NULL;
	}
	pthread_mutex_unlock(&Lock);
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_MIGRATE_ID, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	struct fid *f = fid_of(id);
	if (f->unacked > 0)
		violation("rdma_migrate_id() with %d unacknowledged events (it would hang)",
			f->unacked);
	if (!channel_is_valid(channel)) {
		violation("rdma_migrate_id() to a channel that does not exist");
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	if (f->internal != NULL) {
		/* librdmacm destroys a synchronous ID's own channel when it moves */
		free_fevch_queue(f->internal);
		__real_free(f->internal);
		f->internal = NULL;
	}
	id->channel = channel;
	pthread_mutex_unlock(&Lock);
	return 0;
}

static int record_conn_param(struct fake_conn_param *rec, const struct rdma_conn_param *param)
{
	memset(rec, 0, sizeof(*rec));
	if (param == NULL)
		return 0;
	rec->param = *param;
	if (param->private_data != NULL && param->private_data_len > 0)
		memcpy(rec->pdata, param->private_data, param->private_data_len);
	return 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	int err;
	pthread_mutex_lock(&Lock);
	record_conn_param(&Last_connect, conn_param);
	if (fail_now(FAKE_RDMA_CONNECT, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (id->qp == NULL)
		violation("rdma_connect() of an ID without a QP");
	if (conn_param != NULL && conn_param->private_data_len > FAKE_CONNECT_PDATA_MAX) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	if (Auto_establish.on && Auto_establish.fn && conn_param != NULL)
		Auto_establish.len = Auto_establish.fn(conn_param->private_data,
			conn_param->private_data_len, Auto_establish.pdata);
	if (Auto_establish.on && id->channel != NULL && fevch_by_fd(id->channel->fd) != NULL)
		push_event_locked(fevch_by_fd(id->channel->fd), id, NULL, Auto_establish.type,
			Auto_establish.status, Auto_establish.pdata, Auto_establish.len);
	pthread_mutex_unlock(&Lock);
	return 0;
}

void fake_cm_auto_answer_fn(fake_answer_fn fn)
{
	pthread_mutex_lock(&Lock);
	Auto_establish.fn = fn;
	pthread_mutex_unlock(&Lock);
}

void fake_cm_auto_answer_status(int status)
{
	pthread_mutex_lock(&Lock);
	Auto_establish.status = status;
	pthread_mutex_unlock(&Lock);
}

void fake_cm_auto_answer(bool on, enum rdma_cm_event_type type, const void *pdata, uint8_t len)
{
	pthread_mutex_lock(&Lock);
	Auto_establish.on = on;
	Auto_establish.type = type;
	Auto_establish.len =
		len > sizeof(Auto_establish.pdata) ? sizeof(Auto_establish.pdata) : len;
	if (pdata != NULL)
		memcpy(Auto_establish.pdata, pdata, Auto_establish.len);
	pthread_mutex_unlock(&Lock);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	int err;
	pthread_mutex_lock(&Lock);
	record_conn_param(&Last_accept, conn_param);
	if (fail_now(FAKE_RDMA_ACCEPT, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	if (id->qp == NULL)
		violation("rdma_accept() of an ID without a QP");
	if (conn_param != NULL && conn_param->private_data_len > FAKE_ACCEPT_PDATA_MAX) {
		pthread_mutex_unlock(&Lock);
		errno = EINVAL;
		return -1;
	}
	/* librdmacm: INIT -> RTR (the kernel CM's min_rnr_timer, 0) -> RTS, then the accept */
	if (id->qp != NULL) {
		fqp_of(id->qp)->min_rnr_timer = 0;
		id->qp->state = IBV_QPS_RTS;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id;
	(void)private_data;
	(void)private_data_len;
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_REJECT, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	(void)id;
	int err;
	pthread_mutex_lock(&Lock);
	if (fail_now(FAKE_RDMA_DISCONNECT, &err)) {
		pthread_mutex_unlock(&Lock);
		errno = err;
		return -1;
	}
	pthread_mutex_unlock(&Lock);
	return 0;
}
