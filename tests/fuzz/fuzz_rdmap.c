/*
 * Fuzz the DDP + RDMAP header parser.
 * Properties:
 *  - never reads outside the input (ASan), never crashes;
 *  - a parsed header re-encodes to exactly the input's first hdr_len
 *    octets (every field, reserved ones included, is kept) and parses
 *    again to the same length;
 *  - the DDP-only parser agrees with the RDMAP parser on the DDP part.
 */
#include <string.h>

#include <iwarp/rdmap.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct iwarp_rdmap_msg msg, back;
	struct iwarp_ddp_hdr ddp;
	uint8_t out[256];
	int n, m, d;

	d = iwarp_ddp_hdr_parse(data, size, &ddp);
	if (d >= 0) {
		FUZZ_CHECK(d == IWARP_DDP_TAGGED_HDR_LEN ||
			   d == IWARP_DDP_UNTAGGED_HDR_LEN);
		FUZZ_CHECK(iwarp_ddp_hdr_encode(&ddp, out, sizeof(out)) == d);
		FUZZ_CHECK(memcmp(out, data, (size_t)d) == 0);
	}

	n = iwarp_rdmap_parse(data, size, &msg);
	if (n < 0) {
		FUZZ_CHECK(n == IWARP_ERR_TRUNCATED || n == IWARP_ERR_BAD_VERSION ||
			   n == IWARP_ERR_BAD_OPCODE || n == IWARP_ERR_BAD_QN ||
			   n == IWARP_ERR_MALFORMED);
		return 0;
	}
	FUZZ_CHECK(d >= 0 && n >= d);
	FUZZ_CHECK((size_t)n <= size);
	FUZZ_CHECK(msg.hdr_len == (uint32_t)n);
	FUZZ_CHECK(iwarp_rdmap_encoded_len(&msg) == (uint32_t)n);
	m = iwarp_rdmap_encode(&msg, out, sizeof(out));
	FUZZ_CHECK(m == n);
	FUZZ_CHECK(memcmp(out, data, (size_t)n) == 0);
	FUZZ_CHECK(iwarp_rdmap_parse(out, (size_t)m, &back) == m);
	FUZZ_CHECK(back.opcode == msg.opcode);
	return 0;
}
