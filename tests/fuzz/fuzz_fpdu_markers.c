/*
 * Fuzz FPDU framing and marker removal.  The first 4 input octets choose
 * the marker grid (base) and the FPDU's stream position; the rest is the
 * TCP stream from that position.
 * Properties:
 *  - neither parser reads outside the input (ASan) or crashes;
 *  - a stripped FPDU is a well-formed unmarked FPDU of the reported size;
 *  - re-inserting markers and stripping again gives the same FPDU, the
 *    same wire length and marker count, and a CRC that verifies.
 */
#include <string.h>

#include <iwarp/markers.h>

#include "fuzz_common.h"

#define MAX_FPDU (IWARP_MPA_MAX_ULPDU + 16)

static uint8_t unmarked[MAX_FPDU];
static uint8_t again[MAX_FPDU];
static uint8_t remarked[MAX_FPDU + 4 * 160];

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct iwarp_fpdu f;
	struct iwarp_marked_fpdu info, info2;
	uint32_t base, start;
	int n, m, k;

	/* Plain FPDU parsing on the raw bytes. */
	n = iwarp_fpdu_parse(data, size, &f);
	if (n >= 0) {
		FUZZ_CHECK((size_t)n <= size);
		FUZZ_CHECK((uint32_t)n == iwarp_fpdu_len(f.ulpdu_len));
		FUZZ_CHECK(f.crc_ok == (iwarp_crc32c(data, (size_t)n - 4) ==
					iwarp_crc32c_get(data + n - 4)));
	} else {
		FUZZ_CHECK(n == IWARP_ERR_TRUNCATED);
	}

	if (size < 4)
		return 0;
	base = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16;
	start = base + 4u * ((uint32_t)data[2] << 8 | data[3]);
	data += 4;
	size -= 4;

	n = iwarp_markers_strip(base, start, data, size, unmarked, sizeof(unmarked),
				&info);
	if (n < 0) {
		FUZZ_CHECK(n == IWARP_ERR_TRUNCATED || n == IWARP_ERR_MARKER);
		return 0;
	}
	FUZZ_CHECK(info.wire_len <= size);
	FUZZ_CHECK((uint32_t)n == info.unmarked_len);
	FUZZ_CHECK(info.wire_len == info.unmarked_len + 4 * info.markers);
	FUZZ_CHECK(info.markers == iwarp_markers_in_fpdu(base, start, (uint32_t)n));
	FUZZ_CHECK(iwarp_fpdu_parse(unmarked, (size_t)n, &f) == n);

	m = iwarp_markers_insert(base, start, unmarked, (size_t)n, true, remarked,
				 sizeof(remarked));
	/* Strip accepted every marker's FPDUPTR, so all of them are within
	 * 16-bit reach and insertion cannot fail. */
	FUZZ_CHECK(m == (int)info.wire_len);
	k = iwarp_markers_strip(base, start, remarked, (size_t)m, again, sizeof(again),
				&info2);
	FUZZ_CHECK(k == n);
	FUZZ_CHECK(info2.markers == info.markers && info2.wire_len == info.wire_len);
	FUZZ_CHECK(info2.crc_ok);
	FUZZ_CHECK(memcmp(again, unmarked, (size_t)n - 4) == 0);
	return 0;
}
