// SPDX-License-Identifier: BSD-3-Clause
/* pdata.c -- encode and check the rpmafs connection private data */

#include <string.h>

#include "le.h"
#include "pdata.h"

void rpmafs_pdata_put_head(uint8_t buf[RPMAFS_PDATA_LEN], uint8_t version, uint8_t len,
	uint16_t flags, const struct rpmafs_pdata *pd)
{
	uint32_t max = pd->max_message;
	uint32_t credits = pd->credits;

	if (max == 0)
		max = 1;
	if (max > RPMAFS_PDATA_MAX_MESSAGE)
		max = RPMAFS_PDATA_MAX_MESSAGE;
	if (credits > RPMAFS_PDATA_MAX_CREDITS)
		credits = RPMAFS_PDATA_MAX_CREDITS;
	memcpy(buf, RPMAFS_PDATA_MAGIC, 4);
	buf[4] = version;
	buf[5] = len;
	put_le16(buf + 6, flags);
	put_le32(buf + 8, max);
	put_le32(buf + 12, credits);
}

size_t rpmafs_pdata_encode(const struct rpmafs_pdata *pd, uint8_t buf[RPMAFS_PDATA_MAX_LEN])
{
	uint16_t flags = (uint16_t)(pd->flags & RPMAFS_PDATA_KNOWN_FLAGS & ~RPMAFS_PDATA_F_SESSION);
	size_t len = pd->session ? RPMAFS_PDATA_LEN_2 : RPMAFS_PDATA_LEN;

	if (pd->session)
		flags |= RPMAFS_PDATA_F_SESSION;
	rpmafs_pdata_put_head(buf, pd->session ? RPMAFS_PDATA_VERSION_2 : RPMAFS_PDATA_VERSION,
		(uint8_t)len, flags, pd);
	if (pd->session)
		put_le64(buf + 16, pd->session);
	return len;
}

static int all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* parse_auth -- pd->auth (and F_AUTH, F_ENCRYPT in pd->flags) of the version 3 header at p */
static void parse_auth(const uint8_t *p, size_t hlen, uint16_t flags, struct rpmafs_pdata *pd)
{
	pd->flags |= (uint16_t)(flags & RPMAFS_PDATA_AUTH_FLAGS);
	pd->auth.on = true;
	pd->auth.encrypt = (flags & RPMAFS_PDATA_F_ENCRYPT) != 0;
	if (hlen == RPMAFS_PDATA_LEN_3_REQUEST) {
		pd->auth.request = true;
		memcpy(pd->auth.id, p + 24, sizeof(pd->auth.id));
		memcpy(pd->auth.nonce, p + 32, sizeof(pd->auth.nonce));
		memcpy(pd->auth.tag, p + 48, 8);
	} else {
		memcpy(pd->auth.nonce, p + 16, sizeof(pd->auth.nonce));
		memcpy(pd->auth.tag, p + 32, sizeof(pd->auth.tag));
	}
}

enum rpmafs_pdata_kind rpmafs_pdata_parse(
	const void *buf, size_t len, struct rpmafs_pdata *pd, const char **why)
{
	const uint8_t *p = buf;
	const char *dummy;
	uint32_t max, credits;
	uint64_t session = 0;
	uint16_t flags;
	size_t hlen;

	if (!why)
		why = &dummy;

	if (len == 0 || !p || all_zero(p, len)) {
		*why = "no private data";
		return RPMAFS_PDATA_NONE;
	}
	if (len < 4 || memcmp(p, RPMAFS_PDATA_MAGIC, 4) != 0) {
		*why = "private data is not an rpmafs header";
		return RPMAFS_PDATA_FOREIGN;
	}
	if (len < RPMAFS_PDATA_LEN) {
		*why = "rpmafs header truncated";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (p[4] == RPMAFS_PDATA_VERSION) {
		hlen = RPMAFS_PDATA_LEN;
	} else if (p[4] == RPMAFS_PDATA_VERSION_2) {
		hlen = RPMAFS_PDATA_LEN_2;
	} else if (p[4] == RPMAFS_PDATA_VERSION_3) {
		/* a request or an accept, told by the length */
		hlen = p[5] == RPMAFS_PDATA_LEN_3_ACCEPT ? RPMAFS_PDATA_LEN_3_ACCEPT
							 : RPMAFS_PDATA_LEN_3_REQUEST;
	} else {
		*why = "unsupported rpmafs header version";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (p[5] != hlen) {
		*why = "rpmafs header length is wrong";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (len < hlen) {
		*why = "rpmafs header truncated";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (!all_zero(p + hlen, len - hlen)) {
		*why = "oversized private data: bytes past the rpmafs header";
		return RPMAFS_PDATA_MALFORMED;
	}
	flags = get_le16(p + 6);
	max = get_le32(p + 8);
	credits = get_le32(p + 12);
	if (max == 0 || max > RPMAFS_PDATA_MAX_MESSAGE) {
		*why = "max_message out of range";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (credits > RPMAFS_PDATA_MAX_CREDITS) {
		*why = "credits out of range";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (p[4] == RPMAFS_PDATA_VERSION_3 && !(flags & RPMAFS_PDATA_F_AUTH)) {
		*why = "version 3 header without the auth flag";
		return RPMAFS_PDATA_MALFORMED;
	}
	if (hlen == RPMAFS_PDATA_LEN_2 || hlen == RPMAFS_PDATA_LEN_3_REQUEST) {
		session = get_le64(p + 16);
		if ((flags & RPMAFS_PDATA_F_SESSION) && session == 0) {
			*why = "session flag with session 0";
			return RPMAFS_PDATA_MALFORMED;
		}
		if (!(flags & RPMAFS_PDATA_F_SESSION) && session != 0) {
			*why = "session without the session flag";
			return RPMAFS_PDATA_MALFORMED;
		}
	} else {
		/*
		 * version 1 (and a version 3 accept) carries no session: the bit
		 * is ignored as version 1 promised
		 */
		flags &= (uint16_t)~RPMAFS_PDATA_F_SESSION;
	}
	if (pd) {
		memset(pd, 0, sizeof(*pd));
		pd->max_message = max;
		pd->credits = credits;
		/* unknown bits are a newer peer's: ignored, as version 1 promised */
		pd->flags = (uint16_t)(flags & RPMAFS_PDATA_KNOWN_FLAGS);
		pd->session = session;
		if (p[4] == RPMAFS_PDATA_VERSION_3)
			parse_auth(p, hlen, flags, pd);
	}
	*why = "ok";
	return RPMAFS_PDATA_OK;
}
