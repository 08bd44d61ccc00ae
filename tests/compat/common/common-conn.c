// SPDX-License-Identifier: BSD-3-Clause
/*
 * common-conn.c -- the connection helpers the compat programs share
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common-conn.h"

void *malloc_aligned(size_t size)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	if (pagesize < 0) {
		perror("sysconf(_SC_PAGESIZE)");
		return NULL;
	}

	void *mem = NULL;
	int err = posix_memalign(&mem, (size_t)pagesize, size);
	if (err) {
		fprintf(stderr, "posix_memalign(%zu): %s\n", size, strerror(err));
		return NULL;
	}
	memset(mem, 0, size);
	return mem;
}

uint64_t strtoul_noerror(const char *in)
{
	char *end = NULL;
	errno = 0;
	unsigned long long value = strtoull(in, &end, 10);
	if (errno || end == in || *end != '\0') {
		fprintf(stderr, "not a number: \"%s\"\n", in);
		return 0;
	}
	return (uint64_t)value;
}

int fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		perror("fcntl(O_NONBLOCK)");
		return -1;
	}
	return 0;
}

int common_peer_via_address(
	const char *addr, enum rpma_util_ibv_context_type type, struct rpma_peer **peer_ptr)
{
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(addr, type, &dev);
	if (ret) {
		fprintf(stderr, "rpma_utils_get_ibv_context(%s): %s\n", addr, rpma_err_2str(ret));
		return ret;
	}
	return rpma_peer_new(dev, peer_ptr);
}

int common_listen(
	struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr)
{
	int ret = rpma_ep_listen(peer, addr, port, ep_ptr);
	if (ret) {
		fprintf(stderr, "rpma_ep_listen(%s:%s): %s\n", addr, port, rpma_err_2str(ret));
		return ret;
	}
	printf(LISTENING_FMT, addr, port);
	fflush(stdout);
	return 0;
}

/* wait for the next connection event, which must be expected */
static int wait_for_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		fprintf(stderr, "rpma_conn_next_event(): %s\n", rpma_err_2str(ret));
		return ret;
	}
	if (event != expected) {
		fprintf(stderr, "rpma_conn_next_event(): %s, expected %s\n",
			rpma_utils_conn_event_2str(event), rpma_utils_conn_event_2str(expected));
		return -1;
	}
	return 0;
}

int client_connect(struct rpma_peer *peer, const char *addr, const char *port,
	struct rpma_conn_cfg *cfg, struct rpma_conn_private_data *pdata,
	struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret) {
		fprintf(stderr, "rpma_conn_req_new(%s:%s): %s\n", addr, port, rpma_err_2str(ret));
		return ret;
	}

	/* consumes the request whatever happens */
	ret = rpma_conn_req_connect(&req, pdata, conn_ptr);
	if (ret) {
		fprintf(stderr, "rpma_conn_req_connect(): %s\n", rpma_err_2str(ret));
		return ret;
	}

	ret = wait_for_event(*conn_ptr, RPMA_CONN_ESTABLISHED);
	if (ret)
		(void)rpma_conn_delete(conn_ptr);
	return ret;
}

int server_accept_connection(struct rpma_ep *ep, struct rpma_conn_cfg *cfg,
	struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		fprintf(stderr, "rpma_ep_next_conn_req(): %s\n", rpma_err_2str(ret));
		return ret;
	}

	ret = rpma_conn_req_connect(&req, pdata, conn_ptr);
	if (ret) {
		fprintf(stderr, "rpma_conn_req_connect(): %s\n", rpma_err_2str(ret));
		return ret;
	}

	ret = wait_for_event(*conn_ptr, RPMA_CONN_ESTABLISHED);
	if (ret)
		(void)rpma_conn_delete(conn_ptr);
	return ret;
}

int common_wait_for_conn_close_and_disconnect(struct rpma_conn **conn_ptr)
{
	int ret = wait_for_event(*conn_ptr, RPMA_CONN_CLOSED);
	ret |= rpma_conn_disconnect(*conn_ptr);
	ret |= rpma_conn_delete(conn_ptr);
	return ret;
}

int common_disconnect_and_wait_for_conn_close(struct rpma_conn **conn_ptr)
{
	int ret = rpma_conn_disconnect(*conn_ptr);
	if (ret == 0)
		ret = wait_for_event(*conn_ptr, RPMA_CONN_CLOSED);
	ret |= rpma_conn_delete(conn_ptr);
	return ret;
}
