/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * allow.h -- which peer addresses may connect: rpma-recv's --allow and
 * rpmafs.ini's [rpmafs] allow
 *
 * A list of IPv4 and IPv6 networks written as ADDR/PREFIX (a bare ADDR is a
 * single host). An empty list allows everyone. IPv4 peers that appear as
 * IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are matched as IPv4.
 */
#ifndef RPMAFS_COMMON_ALLOW_H
#define RPMAFS_COMMON_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct recv_allow;

/* recv_allow_new -- an empty list (allows everyone); 0 or -1 out of memory */
int recv_allow_new(struct recv_allow **list_ptr);

/* recv_allow_delete -- free the list and set *list_ptr to NULL */
void recv_allow_delete(struct recv_allow **list_ptr);

/*
 * recv_allow_add -- add the network spec ("192.168.77.0/24", "fd00::/8",
 * "10.1.2.3"). Host bits beyond the prefix are ignored. Returns 0, or -1 with
 * *why set to a static string saying what is wrong with spec.
 */
int recv_allow_add(struct recv_allow *list, const char *spec, const char **why);

/* recv_allow_count -- how many networks the list holds */
size_t recv_allow_count(const struct recv_allow *list);

/*
 * recv_allow_match -- true when addr (AF_INET or AF_INET6) is inside one of
 * the networks, or when the list is empty. Other families never match a
 * non-empty list.
 */
bool recv_allow_match(const struct recv_allow *list, const struct sockaddr *addr);

#endif /* RPMAFS_COMMON_ALLOW_H */
