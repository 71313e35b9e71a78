/* The wire core used from plain C (the kernel module and the dissector
 * are C).  One GoogleTest case calls this and checks the result, so a C
 * compilation problem or a C-only behaviour difference shows up. */
#include <string.h>

#include <iwarp/iwarp.h>

int wire_c_smoke(void);

/* Returns 0 on success, otherwise the number of the failed step. */
int wire_c_smoke(void)
{
	uint8_t ulpdu[64], fpdu[128], marked[160], back[128];
	struct iwarp_rdmap_msg msg, parsed;
	struct iwarp_fpdu f;
	struct iwarp_marked_fpdu mf;
	int hl, n, m;

	if (iwarp_rdmap_init(&msg, IWARP_OP_SEND_SE) != IWARP_OK)
		return 1;
	msg.ddp.msn = 42;
	hl = iwarp_rdmap_encode(&msg, ulpdu, sizeof(ulpdu));
	if (hl != IWARP_DDP_UNTAGGED_HDR_LEN)
		return 2;
	memcpy(ulpdu + hl, "hello", 5);
	n = iwarp_fpdu_encode(fpdu, sizeof(fpdu), ulpdu, (size_t)hl + 5, true);
	if (n != (int)iwarp_fpdu_len((uint32_t)hl + 5))
		return 3;
	m = iwarp_markers_insert(100, 100 + 500, fpdu, (size_t)n, true, marked,
				 sizeof(marked));
	if (m != n + 4)
		return 4;
	if (iwarp_markers_strip(100, 600, marked, (size_t)m, back, sizeof(back),
				&mf) != n || !mf.crc_ok)
		return 5;
	/* Re-frame the stripped ULPDU without markers and parse it. */
	if (iwarp_fpdu_check(fpdu, (size_t)n, true, &f) != n)
		return 6;
	if (memcmp(back + 2, fpdu + 2, (size_t)n - 6) != 0)
		return 7;
	if (iwarp_rdmap_parse(f.ulpdu, f.ulpdu_len, &parsed) != hl)
		return 8;
	if (parsed.opcode != IWARP_OP_SEND_SE || parsed.ddp.msn != 42 ||
	    !parsed.ddp.last)
		return 9;
	if (memcmp(f.ulpdu + hl, "hello", 5) != 0)
		return 10;
	return 0;
}
