/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_check.h -- is a connecting peer to be accepted? The one judgement
 * of rpma-recv and of the mount's inbox
 *
 * A connection request is judged on what it brings before anything is
 * spent on it: its address against the allow-list (allow.h), its private
 * data (pdata.h: rpmafs header well-formed and of our version, a plain
 * peer's none or zeros, anything else refused), then the receiver's limit
 * of open connections. What the private data said (a plain peer, an rpmafs
 * sender, one that takes acknowledgements, its session) comes back with
 * the verdict, for the accept. Pure: the caller takes address and private data from
 * its connection request and writes its own log lines.
 */
#ifndef RPMAFS_COMMON_PEER_CHECK_H
#define RPMAFS_COMMON_PEER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "allow.h"
#include "pdata.h"

enum peer_verdict {
	PEER_ACCEPT,	  /* may be accepted */
	PEER_NOT_ALLOWED, /* a non-empty allow-list, and its address unknown or not in it */
	PEER_FOREIGN,	  /* non-zero private data without the rpmafs magic */
	PEER_MALFORMED,	  /* rpmafs private data that does not parse (version, length, limits) */
	PEER_TOO_MANY,	  /* as many connections are open as the receiver allows */
};

/* what a connection request brought, and what the receiver has room for */
struct peer_request {
	const struct sockaddr_storage *addr; /* NULL: this build cannot tell it */
	const void *pdata;		     /* its private data (NULL: none) */
	size_t pdata_len;
	unsigned open;	    /* connections open now */
	unsigned max_conns; /* the most that may be */
};

/* what the private data said, filled in whatever the verdict */
struct peer_facts {
	enum rpmafs_pdata_kind kind; /* RPMAFS_PDATA_OK: an rpmafs sender, pd filled in */
	struct rpmafs_pdata pd;
	const char *why; /* the parser's word on the private data (static) */
	bool acked;	 /* an rpmafs sender that offered receiver confirmation */
	/*
	 * the sender's session (RPMAFS_PDATA_F_SESSION, version 2) when it
	 * also offered receiver confirmation, else 0: non-zero exactly when
	 * the receiver tells its numbered messages apart across connections
	 * (docs/design.md §8.6); the raw field is in pd.session
	 */
	uint64_t session;
};

/*
 * peer_check -- judge req against allow (NULL or empty: everyone); the
 * checks go in the order of the verdicts above and the first that fails
 * is the verdict. *facts is filled in once the address passed.
 */
enum peer_verdict peer_check(
	const struct recv_allow *allow, const struct peer_request *req, struct peer_facts *facts);

/*
 * peer_check_keys -- peer_check for a receiver that has keys (keys true:
 * auth.h, --keys DIR, listen_keys) or none (keys false: peer_check). The
 * private data's verdict then also says whether the sender offers a key
 * (a version 3 request, facts->pd.auth.on):
 *	keys	offers	verdict (why)
 *	no	no	as peer_check
 *	no	yes	PEER_MALFORMED ("sender offers a key, this receiver has none")
 *	yes	no	PEER_MALFORMED ("sender proves no key"), PEER_FOREIGN as before
 *	yes	yes	as peer_check: the caller then asks rpmafs_auth_request_check
 *		whether the key is one of its own, and rpmafs_nonces_seen
 * A version 3 accept in a connect request is PEER_MALFORMED either way.
 * peer_check(allow, req, facts) is peer_check_keys(allow, req, false, facts).
 */
enum peer_verdict peer_check_keys(const struct recv_allow *allow, const struct peer_request *req,
	bool keys, struct peer_facts *facts);

/*
 * peer_describe -- "ADDR:PORT" (IPv4) or "[ADDR]:PORT" (IPv6) into text;
 * false, text untouched, for another family
 */
bool peer_describe(const struct sockaddr_storage *ss, char *text, size_t size);

/*
 * peer_hex_prefix -- the first 16 bytes of data as "52 50 4d ..." for a log
 * line (the caller says " ..." when there were more)
 */
void peer_hex_prefix(const void *data, size_t len, char *text, size_t size);

#endif /* RPMAFS_COMMON_PEER_CHECK_H */
