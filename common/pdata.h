/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pdata.h -- the connection private data rpmafs and rpma-recv exchange
 *
 * Both ends of an rpmafs connection put a 16-byte header in the RDMA CM
 * private data: the sender in its connect request, the receiver in its
 * accept. Integers are little-endian.
 *
 *	offset	size	field
 *	0	4	magic "RPMF"
 *	4	1	version (RPMAFS_PDATA_VERSION)
 *	5	1	header length in bytes (RPMAFS_PDATA_LEN)
 *	6	2	flags: RPMAFS_PDATA_F_ACK (below); unknown bits are sent
 *			as 0 and ignored on receipt
 *	8	4	max_message: the largest message this end will send
 *			(sender) or can receive (receiver), 1 .. 1 GiB
 *	12	4	credits: receives the receiver keeps posted (0 from a
 *			sender), 0 .. RPMAFS_PDATA_MAX_CREDITS
 *
 * The transport may pad private data (RoCE and InfiniBand pad a connect
 * request to 56 bytes with zeros), so bytes past the header are allowed
 * when they are zero. A peer that sends nothing, or only zeros, is a plain
 * librpma or verbs peer. Anything else that does not parse is refused: no
 * field from the network is used before it has been checked here.
 */
#ifndef RPMAFS_PDATA_H
#define RPMAFS_PDATA_H

#include <stddef.h>
#include <stdint.h>

#define RPMAFS_PDATA_MAGIC "RPMF"
#define RPMAFS_PDATA_VERSION 1
#define RPMAFS_PDATA_LEN 16
#define RPMAFS_PDATA_MAX_MESSAGE (1u << 30)
#define RPMAFS_PDATA_MAX_CREDITS 65535u

/*
 * Flag: receiver confirmation (ack.h). From a sender: "my messages carry
 * their numbers in the immediate data and I take acknowledgements"; from
 * a receiver, only in answer to a request that carried it: "I acknowledge
 * what I have written out". A peer of version 1 without the flag (every
 * rpmafs before it) ignores it, so neither end ever sends a numbered
 * message or an acknowledgement to a peer that did not offer the flag.
 */
#define RPMAFS_PDATA_F_ACK 0x0001u
#define RPMAFS_PDATA_KNOWN_FLAGS RPMAFS_PDATA_F_ACK

struct rpmafs_pdata {
	uint32_t max_message;
	uint32_t credits;
	uint16_t flags; /* RPMAFS_PDATA_F_*; encode sends only the known ones */
};

enum rpmafs_pdata_kind {
	RPMAFS_PDATA_OK,	/* a valid rpmafs header, fields filled in */
	RPMAFS_PDATA_NONE,	/* no private data, or only zero padding */
	RPMAFS_PDATA_FOREIGN,	/* non-zero data without the rpmafs magic */
	RPMAFS_PDATA_MALFORMED, /* rpmafs magic, but the header is invalid */
};

/*
 * rpmafs_pdata_encode -- write the header for *pd into buf (RPMAFS_PDATA_LEN
 * bytes). Fields out of range are clamped to the limits above.
 */
void rpmafs_pdata_encode(const struct rpmafs_pdata *pd, uint8_t buf[RPMAFS_PDATA_LEN]);

/*
 * rpmafs_pdata_parse -- classify len bytes of private data at buf and, for
 * RPMAFS_PDATA_OK, fill *pd. When why is not NULL it is set to a static
 * string saying what is wrong (or "ok").
 */
enum rpmafs_pdata_kind rpmafs_pdata_parse(const void *buf, size_t len, struct rpmafs_pdata *pd,
	const char **why);

#endif /* RPMAFS_PDATA_H */
