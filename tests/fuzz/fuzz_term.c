/*
 * Fuzz the Terminate header parser on its own (the part after the DDP
 * header), plus the name tables on whatever codes it finds.
 * Properties: no out-of-bounds reads, byte-exact re-encode, and names
 * are either NULL or non-empty strings.
 */
#include <string.h>

#include <iwarp/rdmap.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct iwarp_term t, back;
	uint8_t out[128];
	const char *name;
	int n, m;

	n = iwarp_term_parse(data, size, &t);
	if (n < 0) {
		FUZZ_CHECK(n == IWARP_ERR_TRUNCATED || n == IWARP_ERR_MALFORMED);
		return 0;
	}
	FUZZ_CHECK((size_t)n <= size);
	FUZZ_CHECK(iwarp_term_encoded_len(&t) == (uint32_t)n);
	m = iwarp_term_encode(&t, out, sizeof(out));
	FUZZ_CHECK(m == n);
	FUZZ_CHECK(memcmp(out, data, (size_t)n) == 0);
	FUZZ_CHECK(iwarp_term_parse(out, (size_t)m, &back) == m);
	FUZZ_CHECK(back.layer == t.layer && back.etype == t.etype &&
		   back.ecode == t.ecode && back.rsvd == t.rsvd);

	name = iwarp_term_layer_name(t.layer);
	FUZZ_CHECK(!name || name[0]);
	name = iwarp_term_etype_name(t.layer, t.etype);
	FUZZ_CHECK(!name || name[0]);
	name = iwarp_term_ecode_name(t.layer, t.etype, t.ecode);
	FUZZ_CHECK(!name || name[0]);
	return 0;
}
