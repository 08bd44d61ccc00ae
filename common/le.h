/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * le.h -- little-endian integers in byte buffers, for the wire formats
 * (pdata.h, ack.h, sessions.h): byte by byte, so any alignment and any host order
 */
#ifndef RPMAFS_LE_H
#define RPMAFS_LE_H

#include <stdint.h>

/* put_le16 -- v at p[0..1], low byte first */
static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* get_le16 -- the 16-bit number at p[0..1], low byte first */
static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* put_le32 -- v at p[0..3], low byte first */
static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

/* get_le32 -- the 32-bit number at p[0..3], low byte first */
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

/* put_le64 -- v at p[0..7], low byte first */
static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* get_le64 -- the 64-bit number at p[0..7], low byte first */
static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

#endif /* RPMAFS_LE_H */
