/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pdata.h -- the connection private data rpmafs and rpma-recv exchange
 *
 * Both ends of an rpmafs connection put a header in the RDMA CM private
 * data: the sender in its connect request, the receiver in its accept.
 * Integers are little-endian.
 *
 *	offset	size	field
 *	0	4	magic "RPMF"
 *	4	1	version: 1, 2 (a sender with a session), or 3 (a peer
 *			with a key: auth.h)
 *	5	1	header length in bytes: 16 (version 1), 24 (version 2),
 *			56 (version 3, a request) or 48 (version 3, an accept)
 *	6	2	flags: RPMAFS_PDATA_F_* (below); unknown bits are sent
 *			as 0 and ignored on receipt
 *	8	4	max_message: the largest message this end will send
 *			(sender) or can receive (receiver), 1 .. 1 GiB
 *	12	4	credits: receives the receiver keeps posted (0 from a
 *			sender), 0 .. RPMAFS_PDATA_MAX_CREDITS
 *	16	8	session (version 2 only): the sender's session id,
 *			random and non-zero, with RPMAFS_PDATA_F_SESSION
 *
 * A header without a session is written as version 1, so receivers'
 * accepts (and senders without a session) stay what every older peer
 * parses; version 2 is a sender's request with a session. Version 2 with
 * F_SESSION and session 0, or a non-zero session without F_SESSION, is
 * malformed, as is any other version/length pair; in a version 1 header
 * the F_SESSION bit is ignored (cleared), as unknown bits always were.
 *
 * Version 3 (issue 25, docs/design.md §11): a sender with a key sends the
 * request (56 bytes, RoCE's whole connect request private data), a
 * receiver with keys answers with the accept (48 bytes). Both carry
 * F_AUTH (required); F_ENCRYPT asks for (request) or says (accept) that
 * messages are encrypted. Bytes 0..16 are as above; then
 *	request				accept
 *	16	8	session		16	16	nonce_r
 *	24	8	key id		32	16	accept tag
 *	32	16	nonce_s
 *	48	8	request tag
 * The request's session follows version 2's rules; an accept's F_SESSION
 * is ignored (cleared). Version 3 without F_AUTH, or of another length, is
 * malformed. The parser checks no tag (it has no key, auth.h does): it
 * fills pd->auth. rpmafs_pdata_encode writes versions 1 and 2 only;
 * auth.h's rpmafs_auth_request_encode/rpmafs_auth_accept_encode write 3.
 *
 * The transport may pad private data (RoCE and InfiniBand pad a connect
 * request to 56 bytes with zeros), so bytes past the header are allowed
 * when they are zero. A peer that sends nothing, or only zeros, is a plain
 * librpma or verbs peer. Anything else that does not parse is refused: no
 * field from the network is used before it has been checked here.
 */
#ifndef RPMAFS_PDATA_H
#define RPMAFS_PDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPMAFS_PDATA_MAGIC "RPMF"
#define RPMAFS_PDATA_VERSION 1	      /* without a session */
#define RPMAFS_PDATA_LEN 16	      /* version 1's length */
#define RPMAFS_PDATA_VERSION_2 2      /* with a session */
#define RPMAFS_PDATA_LEN_2 24	      /* version 2's length */
#define RPMAFS_PDATA_VERSION_3 3      /* with a key (auth.h) */
#define RPMAFS_PDATA_LEN_3_REQUEST 56 /* version 3's length, a sender's request */
#define RPMAFS_PDATA_LEN_3_ACCEPT 48  /* version 3's length, a receiver's accept */
#define RPMAFS_PDATA_MAX_LEN 24	      /* the buffer rpmafs_pdata_encode needs */
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
/*
 * Flag: the session field is meaningful (version 2, from a sender). With
 * RPMAFS_PDATA_F_ACK in force, a receiver tells a message sent again on a
 * later connection of the same session by its number (docs/design.md
 * §8.6). encode sets it exactly when pd->session != 0; parse requires it
 * exactly then.
 */
#define RPMAFS_PDATA_F_SESSION 0x0002u
/*
 * Flag: version 3 (auth.h), required there: this header carries a key id,
 * a nonce and a tag. Never sent in version 1 or 2 (ignored there).
 */
#define RPMAFS_PDATA_F_AUTH 0x0004u
/*
 * Flag: version 3 only. In a request: "encrypt my messages' payloads"; in
 * an accept: the mode in force (set: encrypt, clear: mac).
 */
#define RPMAFS_PDATA_F_ENCRYPT 0x0008u
/* the flags of versions 1 and 2 (encode sends only these; parse keeps only these there) */
#define RPMAFS_PDATA_KNOWN_FLAGS (RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_SESSION)
/* the flags version 3 adds, kept in pd->flags by the parser for version 3 only */
#define RPMAFS_PDATA_AUTH_FLAGS (RPMAFS_PDATA_F_AUTH | RPMAFS_PDATA_F_ENCRYPT)

struct rpmafs_pdata {
	uint32_t max_message;
	uint32_t credits;
	uint16_t flags;	  /* RPMAFS_PDATA_F_*; encode sends only the known ones */
	uint64_t session; /* the sender's session id, 0 = none (version 1, an accept) */
	/*
	 * Version 3 (filled by rpmafs_pdata_parse; all zero for versions 1, 2):
	 * on: a version 3 header; request: it is a request (56 bytes; else an
	 * accept); encrypt: F_ENCRYPT; id: the request's key id; nonce:
	 * nonce_s or nonce_r; tag: the request's 8 bytes (the rest zero) or
	 * the accept's 16. Not checked here: auth.h checks the tags.
	 */
	struct {
		bool on;
		bool request;
		bool encrypt;
		uint8_t id[8];
		uint8_t nonce[16];
		uint8_t tag[16];
	} auth;
};

enum rpmafs_pdata_kind {
	RPMAFS_PDATA_OK,	/* a valid rpmafs header, fields filled in */
	RPMAFS_PDATA_NONE,	/* no private data, or only zero padding */
	RPMAFS_PDATA_FOREIGN,	/* non-zero data without the rpmafs magic */
	RPMAFS_PDATA_MALFORMED, /* rpmafs magic, but the header is invalid */
};

/*
 * rpmafs_pdata_encode -- write the header for *pd into buf: version 2
 * (RPMAFS_PDATA_LEN_2 bytes, F_SESSION set) when pd->session != 0, else
 * version 1 (RPMAFS_PDATA_LEN bytes, F_SESSION clear whatever pd->flags
 * say). Fields out of range are clamped to the limits above. Returns the
 * number of bytes written: the private data's length.
 */
size_t rpmafs_pdata_encode(const struct rpmafs_pdata *pd, uint8_t buf[RPMAFS_PDATA_MAX_LEN]);

/*
 * rpmafs_pdata_put_head -- write the 16 bytes every header starts with:
 * magic, version, len, flags as given, and pd's max_message and credits
 * clamped to the limits above (rpmafs_pdata_encode; version 3 in auth.c)
 */
void rpmafs_pdata_put_head(uint8_t buf[RPMAFS_PDATA_LEN], uint8_t version, uint8_t len,
	uint16_t flags, const struct rpmafs_pdata *pd);

/*
 * rpmafs_pdata_parse -- classify len bytes of private data at buf and, for
 * RPMAFS_PDATA_OK, fill *pd (session 0 for version 1, pd->auth for
 * version 3, zeroed otherwise). When why is not NULL it is set to a static
 * string saying what is wrong (or "ok").
 */
enum rpmafs_pdata_kind rpmafs_pdata_parse(
	const void *buf, size_t len, struct rpmafs_pdata *pd, const char **why);

#endif /* RPMAFS_PDATA_H */
