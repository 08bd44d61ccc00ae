// SPDX-License-Identifier: BSD-3-Clause
/* allow.c -- parse ADDR/PREFIX networks and match peer addresses against them */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"

struct allow_net {
	int family; /* AF_INET or AF_INET6 */
	unsigned prefix;
	uint8_t addr[16]; /* network byte order, host bits cleared */
};

struct recv_allow {
	struct allow_net *nets;
	size_t count;
};

int recv_allow_new(struct recv_allow **list_ptr)
{
	*list_ptr = calloc(1, sizeof(**list_ptr));
	return *list_ptr ? 0 : -1;
}

void recv_allow_delete(struct recv_allow **list_ptr)
{
	if (!*list_ptr)
		return;
	free((*list_ptr)->nets);
	free(*list_ptr);
	*list_ptr = NULL;
}

size_t recv_allow_count(const struct recv_allow *list)
{
	return list->count;
}

/* clear every bit of addr past the first prefix bits */
static void mask_host_bits(uint8_t *addr, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned bit = (unsigned)i * 8;

		if (bit >= prefix)
			addr[i] = 0;
		else if (prefix - bit < 8)
			addr[i] &= (uint8_t)(0xff << (8 - (prefix - bit)));
	}
}

static int parse_prefix(const char *s, unsigned max, unsigned *prefix)
{
	unsigned v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return -1;
	}
	*prefix = v;
	return 0;
}

int recv_allow_add(struct recv_allow *list, const char *spec, const char **why)
{
	char text[INET6_ADDRSTRLEN + 8];
	struct allow_net net = {0};
	const char *slash = strchr(spec, '/');
	size_t alen = slash ? (size_t)(slash - spec) : strlen(spec);
	struct allow_net *nets;

	if (alen == 0 || alen >= INET6_ADDRSTRLEN) {
		*why = "expected ADDR/PREFIX with an IPv4 or IPv6 address";
		return -1;
	}
	memcpy(text, spec, alen);
	text[alen] = '\0';

	if (inet_pton(AF_INET, text, net.addr) == 1) {
		net.family = AF_INET;
		net.prefix = 32;
	} else if (inet_pton(AF_INET6, text, net.addr) == 1) {
		net.family = AF_INET6;
		net.prefix = 128;
	} else {
		*why = "not an IPv4 or IPv6 address (host names are not accepted)";
		return -1;
	}

	if (slash && parse_prefix(slash + 1, net.prefix, &net.prefix)) {
		*why = net.family == AF_INET ? "prefix must be a number from 0 to 32"
					     : "prefix must be a number from 0 to 128";
		return -1;
	}
	mask_host_bits(net.addr, net.family == AF_INET ? 4 : 16, net.prefix);

	nets = realloc(list->nets, (list->count + 1) * sizeof(*nets));
	if (!nets) {
		*why = strerror(ENOMEM);
		return -1;
	}
	nets[list->count++] = net;
	list->nets = nets;
	*why = "ok";
	return 0;
}

static bool net_contains(const struct allow_net *net, const uint8_t *addr)
{
	unsigned full = net->prefix / 8, rest = net->prefix % 8;

	if (memcmp(net->addr, addr, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return (addr[full] & (uint8_t)(0xff << (8 - rest))) == net->addr[full];
}

bool recv_allow_match(const struct recv_allow *list, const struct sockaddr *addr)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uint8_t bytes[16];
	int family = addr->sa_family;

	if (list->count == 0)
		return true;

	if (family == AF_INET) {
		memcpy(bytes, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (family == AF_INET6) {
		memcpy(bytes, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
		if (memcmp(bytes, v4mapped, sizeof(v4mapped)) == 0) {
			/* an IPv4 peer seen through an IPv6 listener */
			memmove(bytes, bytes + 12, 4);
			family = AF_INET;
		}
	} else {
		return false;
	}

	for (size_t i = 0; i < list->count; i++)
		if (list->nets[i].family == family && net_contains(&list->nets[i], bytes))
			return true;
	return false;
}
