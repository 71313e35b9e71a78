/*
 * Writes the seed corpora in tests/fuzz/corpus/<target>/ from valid frames
 * built with the wire core itself.  Run by hand after changing formats:
 *   tests/fuzz/build.sh OUT && OUT/gen_corpus tests/fuzz/corpus
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <iwarp/iwarp.h>

static const char *root;

static void put(const char *target, const char *name, const uint8_t *buf, int len)
{
	char path[512];
	FILE *f;

	if (len < 0) {
		fprintf(stderr, "%s/%s: %s\n", target, name, iwarp_strerror(len));
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST)
		perror(path);
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, (size_t)len, f) != (size_t)len)
		perror(path);
	if (f)
		fclose(f);
}

static void mpa_seeds(void)
{
	struct iwarp_mpa_policy p;
	struct iwarp_mpa_rr req, rep;
	struct iwarp_mpa_result res;
	uint8_t buf[600];
	static const uint8_t pd[] = "private data";

	memset(&p, 0, sizeof(p));
	p.max_rev = 1;
	p.crc = IWARP_MPA_CRC_REQUIRE;
	iwarp_mpa_init_request(&p, pd, sizeof(pd), &req);
	put("mpa_rr", "req_v1_crc", buf, iwarp_mpa_rr_encode(&req, buf, sizeof(buf)));
	iwarp_mpa_negotiate_reply(&p, &req, NULL, 0, &rep, &res);
	put("mpa_rr", "rep_v1_crc", buf, iwarp_mpa_rr_encode(&rep, buf, sizeof(buf)));

	p.max_rev = 2;
	p.crc = IWARP_MPA_CRC_OFFER;
	p.p2p = true;
	p.rtr_mask = IWARP_MPA_RTR_ALL;
	p.ird = 16;
	p.ord = 16;
	p.rx_markers = true;
	p.tx_markers_ok = true;
	iwarp_mpa_init_request(&p, pd, sizeof(pd), &req);
	put("mpa_rr", "req_v2_p2p", buf, iwarp_mpa_rr_encode(&req, buf, sizeof(buf)));
	iwarp_mpa_negotiate_reply(&p, &req, pd, 4, &rep, &res);
	put("mpa_rr", "rep_v2_p2p", buf, iwarp_mpa_rr_encode(&rep, buf, sizeof(buf)));
	p.p2p = false;
	iwarp_mpa_negotiate_reply(&p, &req, NULL, 0, &rep, &res);
	put("mpa_rr", "rej_v2", buf, iwarp_mpa_rr_encode(&rep, buf, sizeof(buf)));
}

static void fpdu_seeds(void)
{
	static const uint8_t ulpdu[] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 1, 0, 0, 0, 0, 'h', 'i'};
	uint8_t fpdu[64], big[1200], wire[1400];
	uint32_t starts[] = {0, 508, 500, 4};
	size_t i;
	int n, m;

	n = iwarp_fpdu_encode(fpdu, sizeof(fpdu), ulpdu, sizeof(ulpdu), true);
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		char name[32];

		/* Prefix: base 0, start = 4 * k. */
		wire[0] = wire[1] = 0;
		wire[2] = (uint8_t)((starts[i] / 4) >> 8);
		wire[3] = (uint8_t)(starts[i] / 4);
		m = iwarp_markers_insert(0, starts[i], fpdu, (size_t)n, true, wire + 4,
					 sizeof(wire) - 4);
		snprintf(name, sizeof(name), "send_at_%u", starts[i]);
		put("fpdu_markers", name, wire, m < 0 ? m : m + 4);
	}
	memset(big, 0x5a, sizeof(big));
	n = iwarp_fpdu_encode(fpdu, sizeof(fpdu), big, 0, true);
	n = iwarp_fpdu_encode(wire + 4, sizeof(wire) - 4, big, 1000, true);
	memcpy(big, wire + 4, (size_t)n);
	wire[0] = wire[1] = wire[2] = wire[3] = 0;
	m = iwarp_markers_insert(0, 0, big, (size_t)n, true, wire + 4, sizeof(wire) - 4);
	put("fpdu_markers", "big_two_markers", wire, m < 0 ? m : m + 4);
}

static void rdmap_seeds(void)
{
	struct iwarp_rdmap_msg m, rr;
	uint8_t buf[128], rrbuf[64];
	unsigned op;
	int n;

	for (op = 0; op < 12; op++) {
		char name[32];

		iwarp_rdmap_init(&m, op);
		m.ddp.msn = 1;
		m.ddp.stag = 0x1234;
		m.rreq.size = 512;
		m.areq.aopcode = IWARP_AOP_COMPARE_SWAP;
		snprintf(name, sizeof(name), "op_%u", op);
		put("rdmap", name, buf, iwarp_rdmap_encode(&m, buf, sizeof(buf)));
	}
	/* Terminate quoting a failed Read Request. */
	iwarp_rdmap_init(&rr, IWARP_OP_READ_REQUEST);
	n = iwarp_rdmap_encode(&rr, rrbuf, sizeof(rrbuf));
	iwarp_rdmap_init(&m, IWARP_OP_TERMINATE);
	m.term.layer = IWARP_TERM_LAYER_RDMAP;
	m.term.etype = IWARP_TERM_RDMAP_ETYPE_PROTECTION;
	m.term.flag_m = m.term.flag_d = m.term.flag_r = true;
	m.term.ddp_seg_len = (uint16_t)n;
	m.term.ddp_hdr = rrbuf;
	m.term.ddp_hdr_len = IWARP_DDP_UNTAGGED_HDR_LEN;
	m.term.rdmap_hdr = rrbuf + IWARP_DDP_UNTAGGED_HDR_LEN;
	m.term.rdmap_hdr_len = IWARP_RDMAP_READ_REQ_LEN;
	n = iwarp_rdmap_encode(&m, buf, sizeof(buf));
	put("rdmap", "term_mdr", buf, n);
	put("term", "term_mdr", buf + IWARP_DDP_UNTAGGED_HDR_LEN,
	    n - IWARP_DDP_UNTAGGED_HDR_LEN);
	m.term.flag_r = false;
	m.term.layer = IWARP_TERM_LAYER_DDP;
	m.term.etype = IWARP_TERM_DDP_ETYPE_UNTAGGED;
	m.term.ecode = IWARP_TERM_DDP_U_INVALID_QN;
	n = iwarp_rdmap_encode(&m, buf, sizeof(buf));
	put("term", "term_md", buf + IWARP_DDP_UNTAGGED_HDR_LEN,
	    n - IWARP_DDP_UNTAGGED_HDR_LEN);
	m.term.flag_m = m.term.flag_d = false;
	m.term.layer = IWARP_TERM_LAYER_LLP;
	m.term.etype = IWARP_TERM_ETYPE_MPA;
	m.term.ecode = IWARP_TERM_MPA_CRC;
	n = iwarp_rdmap_encode(&m, buf, sizeof(buf));
	put("term", "term_llp_crc", buf + IWARP_DDP_UNTAGGED_HDR_LEN,
	    n - IWARP_DDP_UNTAGGED_HDR_LEN);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	mkdir(root, 0755);
	mpa_seeds();
	fpdu_seeds();
	rdmap_seeds();
	return 0;
}
