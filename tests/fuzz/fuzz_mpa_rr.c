/*
 * Fuzz the MPA Request/Reply parser and the negotiation helpers.
 * Properties:
 *  - parsing never reads outside the input (ASan) and never crashes;
 *  - a strictly parsed frame re-encodes to exactly the same bytes;
 *  - a leniently parsed frame re-encodes and parses strictly to the same
 *    fields (reserved bits dropped);
 *  - for a parsed Request, every negotiated Reply encodes, parses back,
 *    and an accepting Reply is accepted by the initiator side.
 */
#include <string.h>

#include <iwarp/mpa.h>

#include "fuzz_common.h"

static void same_fields(const struct iwarp_mpa_rr *a, const struct iwarp_mpa_rr *b)
{
	FUZZ_CHECK(a->kind == b->kind && a->rev == b->rev);
	FUZZ_CHECK(a->markers == b->markers && a->crc == b->crc);
	FUZZ_CHECK(a->reject == b->reject && a->enhanced == b->enhanced);
	FUZZ_CHECK(a->pd_len == b->pd_len);
	FUZZ_CHECK(a->p2p == b->p2p && a->rtr == b->rtr);
	FUZZ_CHECK(a->ird == b->ird && a->ord == b->ord);
	FUZZ_CHECK(a->ulp_pdata_len == b->ulp_pdata_len);
	FUZZ_CHECK(memcmp(a->ulp_pdata, b->ulp_pdata, a->ulp_pdata_len) == 0);
}

static void negotiate(const struct iwarp_mpa_rr *req, uint8_t sel)
{
	struct iwarp_mpa_policy rsp, ini;
	struct iwarp_mpa_rr rep, rep_rx, req_ini;
	struct iwarp_mpa_result r_res, i_res;
	uint8_t buf[IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA];
	int rc, n;

	memset(&rsp, 0, sizeof(rsp));
	rsp.max_rev = (uint8_t)(1 + (sel & 1));
	rsp.crc = (uint8_t)((sel >> 1) % 3);
	rsp.rx_markers = (sel >> 3) & 1;
	rsp.tx_markers_ok = (sel >> 4) & 1;
	rsp.p2p = (sel >> 5) & 1;
	rsp.rtr_mask = IWARP_MPA_RTR_ALL;
	rsp.relaxed_ird_ord = (sel >> 6) & 1;
	rsp.ird = 8;
	rsp.ord = 8;
	rc = iwarp_mpa_negotiate_reply(&rsp, req, NULL, 0, &rep, &r_res);
	FUZZ_CHECK(rc == IWARP_OK || rc == IWARP_ERR_REJECT);
	FUZZ_CHECK(rep.reject == (rc == IWARP_ERR_REJECT));
	n = iwarp_mpa_rr_encode(&rep, buf, sizeof(buf));
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(iwarp_mpa_rr_parse(buf, (size_t)n, &rep_rx) == n);
	if (rc != IWARP_OK)
		return;
	/* An initiator whose policy would have produced exactly this Request
	 * must accept the Reply. */
	memset(&ini, 0, sizeof(ini));
	ini.max_rev = req->rev;
	ini.crc = req->crc ? IWARP_MPA_CRC_REQUIRE : IWARP_MPA_CRC_OFFER;
	ini.rx_markers = req->markers;
	ini.tx_markers_ok = true;
	ini.p2p = req->p2p;
	ini.rtr_mask = req->rtr;
	ini.relaxed_ird_ord = true;
	ini.ird = req->ird;
	ini.ord = req->ord;
	req_ini = *req;
	rc = iwarp_mpa_check_reply(&ini, &req_ini, &rep_rx, &i_res);
	FUZZ_CHECK(rc == IWARP_OK);
	FUZZ_CHECK(i_res.rev == r_res.rev && i_res.enhanced == r_res.enhanced);
	FUZZ_CHECK(i_res.crc == r_res.crc);
	FUZZ_CHECK(i_res.p2p == r_res.p2p && i_res.rtr == r_res.rtr);
	FUZZ_CHECK(i_res.tx_markers == r_res.rx_markers);
	FUZZ_CHECK(i_res.rx_markers == r_res.tx_markers);
	/* Neither side may issue more RDMA Reads than the other takes. */
	if (i_res.enhanced) {
		FUZZ_CHECK(i_res.ord <= r_res.ird);
		FUZZ_CHECK(r_res.ord <= i_res.ird);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct iwarp_mpa_rr rr, back;
	uint8_t out[IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA];
	int n, m;

	n = iwarp_mpa_rr_frame_len(data, size);
	FUZZ_CHECK(n == IWARP_ERR_TRUNCATED || n >= IWARP_MPA_RR_HDR_LEN);

	n = iwarp_mpa_rr_parse(data, size, &rr);
	if (n >= 0) {
		FUZZ_CHECK((size_t)n <= size);
		m = iwarp_mpa_rr_encode(&rr, out, sizeof(out));
		FUZZ_CHECK(m == n);
		FUZZ_CHECK(memcmp(out, data, (size_t)n) == 0);
		FUZZ_CHECK(iwarp_mpa_rr_parse(out, (size_t)m, &back) == m);
		same_fields(&rr, &back);
		if (rr.kind == IWARP_MPA_REQUEST)
			negotiate(&rr, size ? data[size - 1] : 0);
	}

	n = iwarp_mpa_rr_parse_ex(data, size, IWARP_MPA_PARSE_IGNORE_RESERVED, &rr);
	if (n >= 0) {
		FUZZ_CHECK((size_t)n <= size);
		m = iwarp_mpa_rr_encode(&rr, out, sizeof(out));
		FUZZ_CHECK(m == n);
		FUZZ_CHECK(iwarp_mpa_rr_parse(out, (size_t)m, &back) == m);
		rr.res_bits = 0;
		same_fields(&rr, &back);
	}
	return 0;
}
