/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/types.h - environment shim for the header-only iWARP wire core.
 *
 * Every iwarp/ header includes this one first.  It supplies fixed-width
 * integer types from <linux/types.h> inside the kernel and from <stdint.h>
 * elsewhere, portable big/little-endian load/store helpers that work on
 * unaligned byte buffers (no htonl(), no casts of packet pointers), and the
 * status codes shared by every parse/encode function.
 *
 * The code is plain C99 that also compiles as C++ (no designated array
 * initialisers, no implicit void * conversions) and with the kernel's W=1
 * warning set (declarations before statements, no libc).
 */
#ifndef IWARP_TYPES_H
#define IWARP_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/*
 * Status codes.  Functions that produce a length return it as a
 * non-negative int; on failure they return one of these negative values.
 * They never touch memory outside the (buffer, length) pairs they get.
 */
enum iwarp_status {
	IWARP_OK = 0,
	/* Input ends before the structure does; more bytes may fix it. */
	IWARP_ERR_TRUNCATED = -1,
	/* MPA key is neither "MPA ID Req Frame" nor "MPA ID Rep Frame". */
	IWARP_ERR_BAD_KEY = -2,
	/* MPA revision not 1 or 2 (or not acceptable in this context). */
	IWARP_ERR_BAD_REV = -3,
	/* A field the RFC reserves (must be zero) is not zero. */
	IWARP_ERR_RESERVED = -4,
	/* A length field exceeds its protocol maximum. */
	IWARP_ERR_TOO_LONG = -5,
	/* Output buffer too small for what must be written. */
	IWARP_ERR_NOSPACE = -6,
	/* DDP version (DV) or RDMAP version (RV) is not 1. */
	IWARP_ERR_BAD_VERSION = -7,
	/* RDMAP opcode unknown or not valid in this position. */
	IWARP_ERR_BAD_OPCODE = -8,
	/* DDP tagged flag / queue number do not match the RDMAP opcode. */
	IWARP_ERR_BAD_QN = -9,
	/* MPA CRC32c trailer does not match the computed value. */
	IWARP_ERR_CRC = -10,
	/* An MPA marker has a wrong FPDUPTR or non-zero reserved half. */
	IWARP_ERR_MARKER = -11,
	/* Invalid argument from the caller (not from the wire). */
	IWARP_ERR_INVAL = -12,
	/* Enhanced (MPA v2) frame without the 4-byte IRD/ORD word. */
	IWARP_ERR_V2_PDATA = -13,
	/* MPA negotiation: peer asked for something local policy refuses. */
	IWARP_ERR_REJECT = -14,
	/* MPA reply carries the Reject flag. */
	IWARP_ERR_PEER_REJECTED = -15,
	/* Inconsistent frame (e.g. flag combination the RFC forbids). */
	IWARP_ERR_MALFORMED = -16
};

static inline const char *iwarp_strerror(int status)
{
	switch (status) {
	case IWARP_OK:
		return "ok";
	case IWARP_ERR_TRUNCATED:
		return "truncated";
	case IWARP_ERR_BAD_KEY:
		return "bad MPA key";
	case IWARP_ERR_BAD_REV:
		return "bad MPA revision";
	case IWARP_ERR_RESERVED:
		return "reserved bits set";
	case IWARP_ERR_TOO_LONG:
		return "length too large";
	case IWARP_ERR_NOSPACE:
		return "output buffer too small";
	case IWARP_ERR_BAD_VERSION:
		return "bad DDP/RDMAP version";
	case IWARP_ERR_BAD_OPCODE:
		return "bad RDMAP opcode";
	case IWARP_ERR_BAD_QN:
		return "tagged flag or queue number does not match opcode";
	case IWARP_ERR_CRC:
		return "MPA CRC mismatch";
	case IWARP_ERR_MARKER:
		return "bad MPA marker";
	case IWARP_ERR_INVAL:
		return "invalid argument";
	case IWARP_ERR_V2_PDATA:
		return "MPA v2 frame without IRD/ORD private data";
	case IWARP_ERR_REJECT:
		return "MPA negotiation refused by local policy";
	case IWARP_ERR_PEER_REJECTED:
		return "MPA peer rejected the connection";
	case IWARP_ERR_MALFORMED:
		return "malformed frame";
	default:
		return "unknown error";
	}
}

/*
 * Byte order helpers.  The wire is big-endian ("network order") everywhere
 * in iWARP except the MPA CRC field, which carries the CRC32c register the
 * way iSCSI does (least significant byte first, RFC 3720 B.4).
 */
static inline uint16_t iwarp_get_be16(const uint8_t *p)
{
	return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static inline uint32_t iwarp_get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t iwarp_get_be64(const uint8_t *p)
{
	return ((uint64_t)iwarp_get_be32(p) << 32) | iwarp_get_be32(p + 4);
}

static inline uint32_t iwarp_get_le32(const uint8_t *p)
{
	return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[1] << 8) | (uint32_t)p[0];
}

static inline void iwarp_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void iwarp_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void iwarp_put_be64(uint8_t *p, uint64_t v)
{
	iwarp_put_be32(p, (uint32_t)(v >> 32));
	iwarp_put_be32(p + 4, (uint32_t)v);
}

static inline void iwarp_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Byte copy/compare without libc, so the same code builds in the kernel. */
static inline void iwarp_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = src[i];
}

static inline void iwarp_zero(uint8_t *dst, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = 0;
}

static inline bool iwarp_bytes_equal(const uint8_t *a, const uint8_t *b,
				     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

#endif /* IWARP_TYPES_H */
