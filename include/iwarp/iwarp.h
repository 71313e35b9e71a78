/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/iwarp.h - the whole header-only iWARP wire-format core.
 *
 *   types.h    integer types, byte order helpers, status codes
 *   crc32c.h   software CRC32c (RFC 3720 B.4 compatible)
 *   mpa.h      MPA Request/Reply/Reject, v2 negotiation, FPDU framing
 *   markers.h  MPA marker arithmetic, insertion and removal
 *   ddp.h      DDP tagged/untagged headers, DDP Terminate codes
 *   rdmap.h    RDMAP opcodes and headers, Terminate, name tables
 *
 * See Documentation/protocol.md for the wire formats.
 */
#ifndef IWARP_IWARP_H
#define IWARP_IWARP_H

#include "types.h"
#include "crc32c.h"
#include "mpa.h"
#include "markers.h"
#include "ddp.h"
#include "rdmap.h"

#endif /* IWARP_IWARP_H */
