// SPDX-License-Identifier: BSD-3-Clause
/* address.c -- checking a peer's address before anything resolves it */

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "address.h"

#define ADDRESS_MAX 255	   /* struct rpmafs_peer_cfg holds 255 characters */
#define HOST_NAME_MAX_ 253 /* RFC 1035, without the final dot */
#define LABEL_MAX 63
#define ZONE_MAX 15 /* IFNAMSIZ - 1 */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* An IPv6 literal with an optional %zone (a link-local address's interface). */
static bool is_ipv6(const char *s)
{
	char copy[ADDRESS_MAX + 1];
	struct in6_addr a;
	char *zone;

	strcpy(copy, s);
	zone = strchr(copy, '%');
	if (zone) {
		size_t zlen = strlen(zone + 1);

		*zone++ = '\0';
		if (zlen == 0 || zlen > ZONE_MAX)
			return false;
		for (; *zone; zone++)
			if (!is_alnum(*zone) && !strchr("_.-", *zone))
				return false;
	}
	return inet_pton(AF_INET6, copy, &a) == 1;
}

/*
 * A host name: dot-separated labels of letters, digits, '-' (not first or
 * last) and '_' (not in DNS, but common in /etc/hosts), optionally ending
 * in a dot.
 */
static bool is_host_name(const char *s)
{
	size_t len = strlen(s);
	size_t label = 0;

	if (len && s[len - 1] == '.')
		len--;
	if (len == 0 || len > HOST_NAME_MAX_)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? s[i] : '.';

		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!is_alnum(c) && c != '-' && c != '_')
			return false;
		if (c == '-' && label == 0)
			return false;
		if (++label > LABEL_MAX)
			return false;
	}
	return true;
}

const char *cfg_address_problem(const char *s)
{
	size_t len = strlen(s);
	struct in_addr a4;
	const char *colon;

	if (len == 0)
		return "is empty; give the receiver's host name or IP address";
	if (len > ADDRESS_MAX)
		return "is longer than 255 characters";
	if (inet_pton(AF_INET, s, &a4) == 1)
		return NULL;
	if (s[0] == '[')
		return "has brackets; write an IPv6 address without them, and the port in the port key";
	colon = strchr(s, ':');
	if (colon) {
		if (is_ipv6(s))
			return NULL;
		if (!strchr(colon + 1, ':'))
			return "looks like host:port; put the port in the port key";
		return "is not a valid IPv6 address";
	}
	if (strspn(s, "0123456789.") == len)
		return "is not a valid IPv4 address";
	if (!is_host_name(s))
		return "is not a valid host name or IP address (host names are letters, digits, '-', '_' and dots)";
	return NULL;
}
