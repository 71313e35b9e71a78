// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crc-cost: what the MPA CRC (RFC 5044: CRC32c over every FPDU) costs on
 * this CPU, run natively, against a memcpy of the same bytes (issue 20).
 * Under QEMU TCG the crc32 instruction is emulated, so the lab cannot tell.
 *
 *   crc-cost [--json PATH] [--markdown PATH] [--rounds N] [--ms N] [--cpu N]
 *   crc-cost --verify-only
 *
 * What is timed, per buffer size (1460: a full-MSS FPDU; 4 KiB; 64 KiB;
 * 1 MiB):
 *   memcpy  glibc memcpy into a fixed destination (always cache-warm)
 *   movsb   rep movsb into the same: the kernel's own copy on a CPU with
 *           ERMS and FSRM, as the host's
 *   hw1     one chain of crc32 instructions, 8 octets each: crc32c-intel
 *           below 512 octets (crc32c_intel_le_hw())
 *   hw3     three crc32 chains over the thirds of each block of up to
 *           3 KiB, joined by a carry-less multiply (PCLMULQDQ): the
 *           technique of crc32c-intel's crc_pcl(), which the kernel's
 *           shash uses from 512 octets up on a CPU with PCLMULQDQ
 *   table8  slice-by-8 tables: crc32c-generic (CONFIG_CRC32_SLICEBY8)
 * each with a warm source (the same buffer every time) and a cold one
 * (buffers taken in turn from a pool four times the size of a 32 MiB L3).
 * The measurements alternate (memcpy, movsb, hw1, hw3, table8, memcpy, ...);
 * every round records /proc/loadavg before and after.  Each number is the
 * median over the rounds, with min and max; ratios are taken per round,
 * between neighbours in time.  Nothing is pinned unless --cpu asks.
 *
 * Before any timing every implementation is checked against the RFC 3720
 * B.4 vectors, a bit-at-a-time reference and the byte-table CRC of
 * include/iwarp/crc32c.h on random buffers, lengths and alignments; a
 * mismatch exits with status 1.  --verify-only stops after that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86_CRC 1
#else
#define HAVE_X86_CRC 0
#endif

#include <iwarp/crc32c.h>

#define CRC32C_POLY_REFLECTED 0x82f63b78U
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Cold sources rotate through this much memory: 4x the host's 32 MiB L3. */
#define COLD_POOL_BYTES (128UL << 20)
/* The largest buffer timed, and the size of memcpy's destination. */
#define MAX_LEN (1UL << 20)

typedef uint32_t (*crc_fn)(uint32_t crc, const uint8_t *p, size_t len);

/* ------------------------------------------------------- references */

/* Bit at a time, straight from the reflected polynomial: the yardstick. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (CRC32C_POLY_REFLECTED & -(crc & 1));
	}
	return crc;
}

/* The byte-table CRC the dissector and the unit tests use. */
static uint32_t crc_bytetable(uint32_t crc, const uint8_t *p, size_t len)
{
	return iwarp_crc32c_update(crc, p, len);
}

/* ------------------------------------------------------ slice-by-8 */

/*
 * slice8[k][b]: the register contribution of octet b followed by k zero
 * octets, so eight octets are folded with eight independent lookups.
 */
static uint32_t slice8[8][256];

static void slice8_init(void)
{
	uint8_t b;
	int i, k;

	for (i = 0; i < 256; i++) {
		b = (uint8_t)i;
		slice8[0][i] = crc_bitwise(0, &b, 1);
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++)
			slice8[k][i] = (slice8[k - 1][i] >> 8) ^
				       slice8[0][slice8[k - 1][i] & 0xff];
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	/* x86 and every other host we build on are little-endian. */
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t crc_table8(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t w;

	while (len >= 8) {
		/* The register lines up with the first four octets. */
		w = load_le64(p) ^ crc;
		crc = slice8[7][w & 0xff] ^ slice8[6][(w >> 8) & 0xff] ^
		      slice8[5][(w >> 16) & 0xff] ^ slice8[4][(w >> 24) & 0xff] ^
		      slice8[3][(w >> 32) & 0xff] ^ slice8[2][(w >> 40) & 0xff] ^
		      slice8[1][(w >> 48) & 0xff] ^ slice8[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ slice8[0][(crc ^ *p++) & 0xff];
	return crc;
}

/* --------------------------------------------- the crc32 instruction */

#if HAVE_X86_CRC

/*
 * Blocks of hw3 hold three streams of at most this many 8-octet words
 * each (3 KiB in all), as crc_pcl()'s do.
 */
#define HW3_MAX_WORDS 128
/* Below this, one chain: crc32c-intel's CRC32C_PCL_BREAKEVEN. */
#define HW3_MIN_LEN 512

/*
 * Shift constants.  A CRC register R stands for a polynomial of degree
 * < 32, bit 31 being x^0 (reflected).  Feeding n zero bits multiplies it by
 * x^n mod P.  A carry-less product of two reflected 32-bit values, read as
 * a reflected 64-bit value, is x * A * B; crc32q from a zero register
 * multiplies its 64-bit operand by x^32 mod P.  So
 *   crc32q(0, clmul(R, x^(n - 33) mod P)) = R * x^n mod P.
 * hw3_shift1[w] shifts over one stream of w words, hw3_shift2[w] over two.
 */
static uint32_t hw3_shift1[HW3_MAX_WORDS + 1];
static uint32_t hw3_shift2[HW3_MAX_WORDS + 1];

static void hw3_init(void)
{
	uint32_t xn = 0x80000000U; /* x^0 */
	unsigned int n, w;

	/* One walk up the powers of x, keeping the ones the table needs. */
	for (n = 0; n <= 128 * HW3_MAX_WORDS - 33; n++) {
		if (n + 33 >= 64 && (n + 33) % 64 == 0) {
			w = (n + 33) / 64;
			if (w <= HW3_MAX_WORDS)
				hw3_shift1[w] = xn;
			if (w % 2 == 0)
				hw3_shift2[w / 2] = xn;
		}
		xn = (xn >> 1) ^ (CRC32C_POLY_REFLECTED & -(xn & 1));
	}
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw1(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t r = crc;

	while (len >= 8) {
		r = _mm_crc32_u64(r, load_le64(p));
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)r;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

/* The register over A|B|C from the registers over A, over B and over C
 * (the last two started from zero), each stream being w words long.
 */
__attribute__((target("sse4.2,pclmul")))
static inline uint32_t hw3_join(uint32_t ra, uint32_t rb, uint32_t rc,
				unsigned int w)
{
	__m128i k = _mm_set_epi64x(hw3_shift2[w], hw3_shift1[w]);
	__m128i a = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)ra), k, 0x10);
	__m128i b = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)rb), k, 0x00);
	uint64_t ab = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(a, b));

	/* One reduction for both products: the map is linear. */
	return (uint32_t)_mm_crc32_u64(0, ab) ^ rc;
}

/*
 * Three chains, because one crc32 takes three cycles to give its result
 * but a new one can start every cycle: independent streams fill the gaps.
 */
__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_hw3(uint32_t crc, const uint8_t *p, size_t len)
{
	const uint8_t *a, *b, *c;
	uint64_t ra, rb, rc;
	unsigned int w, i;

	if (len < HW3_MIN_LEN)
		return crc_hw1(crc, p, len);
	while ((uintptr_t)p & 7) {
		crc = _mm_crc32_u8(crc, *p++);
		len--;
	}
	while (len >= 24) {
		w = len / 24 < HW3_MAX_WORDS ? len / 24 : HW3_MAX_WORDS;
		a = p;
		b = p + 8 * w;
		c = p + 16 * w;
		ra = crc;
		rb = 0;
		rc = 0;
		for (i = 0; i < w; i++) {
			ra = _mm_crc32_u64(ra, load_le64(a + 8 * i));
			rb = _mm_crc32_u64(rb, load_le64(b + 8 * i));
			rc = _mm_crc32_u64(rc, load_le64(c + 8 * i));
		}
		crc = hw3_join((uint32_t)ra, (uint32_t)rb, (uint32_t)rc, w);
		p += 24 * w;
		len -= 24 * w;
	}
	return crc_hw1(crc, p, len);
}

static bool cpu_has_crc_insns(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return false;
	return (ecx & bit_SSE4_2) && (ecx & bit_PCLMUL);
}

#else /* !HAVE_X86_CRC */

static void hw3_init(void)
{
}

static bool cpu_has_crc_insns(void)
{
	return false;
}

#define crc_hw1 NULL
#define crc_hw3 NULL

#endif

/* ------------------------------------------------------------ memcpy */

static uint8_t *copy_dst;

/* memcpy in the shape of a CRC, so one harness times them all. */
static uint32_t do_memcpy(uint32_t crc, const uint8_t *p, size_t len)
{
	memcpy(copy_dst, p, len);
	return crc ^ copy_dst[len - 1];
}

#if HAVE_X86_CRC
/*
 * The kernel's own copy on a CPU with ERMS and FSRM, as this host's: both
 * copy_user_generic() (user pages to skb on send) and memcpy() (skb_copy_bits()
 * on receive) come down to one rep movsb.
 */
static uint32_t do_movsb(uint32_t crc, const uint8_t *p, size_t len)
{
	void *d = copy_dst;
	const void *s = p;
	size_t n = len;

	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return crc ^ copy_dst[len - 1];
}
#else
#define do_movsb NULL
#endif

/* --------------------------------------------------------- registry */

enum { IMPL_MEMCPY, IMPL_MOVSB, IMPL_HW1, IMPL_HW3, IMPL_TABLE8, NIMPL };

struct impl {
	const char *name;
	const char *what;
	crc_fn fn;
	bool needs_insns;
};

static const struct impl impls[NIMPL] = {
	[IMPL_MEMCPY] = { "memcpy", "glibc memcpy to a warm destination",
			  do_memcpy, false },
	[IMPL_MOVSB] = { "movsb", "rep movsb to a warm destination (the kernel's copy with ERMS/FSRM)",
			 do_movsb, false },
	[IMPL_HW1] = { "hw1", "crc32 instruction, one chain (crc32c-intel < 512 B)",
		       crc_hw1, true },
	[IMPL_HW3] = { "hw3", "crc32 instruction, three chains joined with PCLMULQDQ (crc32c-intel >= 512 B)",
		       crc_hw3, true },
	[IMPL_TABLE8] = { "table8", "slice-by-8 tables (crc32c-generic)",
			  crc_table8, false },
};

static bool have_insns;

static bool impl_usable(int i)
{
	return impls[i].fn && (!impls[i].needs_insns || have_insns);
}

/* ------------------------------------------------------ verification */

/* RFC 3720 appendix B.4: CRC values of 32-octet buffers. */
static int verify_vectors(void)
{
	static const struct {
		const char *name;
		uint32_t crc;
	} vec[] = {
		{ "32 octets of 0x00", 0x8a9136aaU },
		{ "32 octets of 0xff", 0x62a8ab43U },
		{ "32 octets 0x00..0x1f", 0x46dd794eU },
		{ "32 octets 0x1f..0x00", 0x113fdb5cU },
	};
	static const crc_fn fns[] = { crc_bitwise, crc_bytetable, crc_table8,
				      crc_hw1, crc_hw3 };
	static const char *const names[] = { "bitwise", "bytetable", "table8",
					      "hw1", "hw3" };
	uint8_t buf[4][32];
	unsigned int v, f, i;
	uint32_t got;
	int bad = 0;

	for (i = 0; i < 32; i++) {
		buf[0][i] = 0;
		buf[1][i] = 0xff;
		buf[2][i] = (uint8_t)i;
		buf[3][i] = (uint8_t)(31 - i);
	}
	for (v = 0; v < ARRAY_SIZE(vec); v++) {
		for (f = 0; f < ARRAY_SIZE(fns); f++) {
			if (!fns[f] || (f >= 3 && !have_insns))
				continue;
			got = ~fns[f](~0U, buf[v], sizeof(buf[v]));
			if (got == vec[v].crc)
				continue;
			fprintf(stderr, "crc-cost: %s: %s gives 0x%08x, RFC 3720 says 0x%08x\n",
				names[f], vec[v].name, got, vec[v].crc);
			bad = 1;
		}
	}
	return bad;
}

/* xorshift64: reproducible test data without libc's rand(). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t len)
{
	uint64_t r;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		r = rng();
		memcpy(p + i, &r, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)rng();
}

/*
 * Every implementation against the bit-at-a-time reference: every length
 * up to 1100 (both sides of hw3's 512-octet switch and of its 24-octet
 * steps), random lengths to 20 KiB (several 3 KiB blocks), odd start
 * offsets, random start registers, and a buffer fed in two pieces.
 */
static int verify_cross(void)
{
	const size_t cap = 20 << 10;
	static const crc_fn fns[] = { crc_bytetable, crc_table8, crc_hw1,
				      crc_hw3 };
	static const char *const names[] = { "bytetable", "table8", "hw1",
					      "hw3" };
	uint8_t *buf = malloc(cap + 8);
	size_t len, off, cut, trial;
	uint32_t seed, want, got;
	unsigned int f;
	int bad = 0;

	if (!buf) {
		perror("crc-cost: malloc");
		return 1;
	}
	fill_random(buf, cap + 8);
	for (trial = 0; trial < 1100 + 400 && !bad; trial++) {
		len = trial < 1100 ? trial : rng() % cap;
		off = rng() % 8;
		seed = trial % 3 ? (uint32_t)rng() : ~0U;
		want = crc_bitwise(seed, buf + off, len);
		for (f = 0; f < ARRAY_SIZE(fns); f++) {
			if (!fns[f] || (f >= 2 && !have_insns))
				continue;
			got = fns[f](seed, buf + off, len);
			cut = len ? rng() % (len + 1) : 0;
			if (got == want)
				got = fns[f](fns[f](seed, buf + off, cut),
					     buf + off + cut, len - cut);
			if (got != want) {
				fprintf(stderr, "crc-cost: %s disagrees with the bitwise CRC: length %zu, offset %zu, split at %zu, start 0x%08x: 0x%08x, want 0x%08x\n",
					names[f], len, off, cut, seed, got, want);
				bad = 1;
			}
		}
	}
	free(buf);
	return bad;
}

static int verify(void)
{
	int bad = verify_vectors();

	bad |= verify_cross();
	printf("verify: RFC 3720 B.4 vectors and cross-checks of bytetable, table8%s: %s\n",
	       have_insns ? ", hw1, hw3" : " (no SSE4.2+PCLMULQDQ: hw1, hw3 not checked)",
	       bad ? "MISMATCH" : "all agree");
	return bad;
}

/* ------------------------------------------------------------ timing */

static const size_t sizes[] = { 1460, 4096, 65536, 1 << 20 };
#define NSIZE ARRAY_SIZE(sizes)
enum { WARM, COLD, NTEMP };
static const char *const temp_name[NTEMP] = { "warm", "cold" };

/* Where every timed result ends up, so the compiler cannot drop the work. */
static volatile uint32_t sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * ns per octet of fn over len-octet buffers, run for at least min_ns.
 * Each call takes the previous call's result, as a running CRC does.
 */
static double time_ns_per_octet(crc_fn fn, const uint8_t *base, size_t stride,
				size_t nslots, size_t len, double min_ns)
{
	size_t batch = len < (256 << 10) ? (256 << 10) / len : 1;
	size_t slot = 0, i;
	uint64_t calls = 0;
	uint32_t acc = 0;
	double t0, t;

	t0 = now_ns();
	do {
		for (i = 0; i < batch; i++) {
			acc = fn(acc, base + slot * stride, len);
			if (++slot == nslots)
				slot = 0;
		}
		calls += batch;
		t = now_ns() - t0;
	} while (t < min_ns);
	sink ^= acc;
	return t / ((double)calls * len);
}

struct load {
	double before, after;
};

static double loadavg1(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct stat3 {
	double med, min, max;
};

static struct stat3 stat_of(const double *v, int n)
{
	double *s = malloc(sizeof(*s) * n);
	struct stat3 r = { 0, 0, 0 };

	if (!s)
		return r;
	memcpy(s, v, sizeof(*s) * n);
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return r;
}

/* The CPU time share a CRC pass takes next to one copy: t_crc / (t_crc + t_copy). */
static double share(double ratio)
{
	return ratio / (1 + ratio);
}

/*
 * Per size, CRC implementation and copy (memcpy or movsb), the ratios
 * t_crc / t_copy that the report gives, each computed per round:
 *   warm  both sources warm
 *   cold  both sources cold
 *   tx    CRC cold, copy warm: the module's send path CRCs the user pages
 *         first, then TCP copies the same, now cached, octets
 *   rx    copy cold, CRC warm: the receive path copies out of the skbs,
 *         then CRCs the octets it just wrote
 */
enum { PAIR_WARM, PAIR_COLD, PAIR_TX, PAIR_RX, NPAIR };
static const char *const pair_name[NPAIR] = { "warm", "cold", "tx", "rx" };
static const int pair_crc_temp[NPAIR] = { WARM, COLD, COLD, WARM };
static const int pair_copy_temp[NPAIR] = { WARM, COLD, WARM, COLD };

struct results {
	int rounds;
	double ms;
	int cpu;
	/* ns per octet: [round][size][temp][impl] */
	double *ns;
	struct load *load;
};

static double *ns_at(struct results *r, int round, int s, int t, int i)
{
	return &r->ns[((round * NSIZE + s) * NTEMP + t) * NIMPL + i];
}

static struct stat3 gbps_stat(struct results *r, int s, int t, int i)
{
	double v[r->rounds];
	int k;

	for (k = 0; k < r->rounds; k++)
		v[k] = 1 / *ns_at(r, k, s, t, i); /* octets per ns = GB/s */
	return stat_of(v, r->rounds);
}

static struct stat3 ratio_stat(struct results *r, int s, int pair, int i,
			       int copy)
{
	double v[r->rounds];
	int k;

	for (k = 0; k < r->rounds; k++)
		v[k] = *ns_at(r, k, s, pair_crc_temp[pair], i) /
		       *ns_at(r, k, s, pair_copy_temp[pair], copy);
	return stat_of(v, r->rounds);
}

static int run(struct results *r)
{
	uint8_t *pool = aligned_alloc(4096, COLD_POOL_BYTES);
	const uint8_t *base;
	size_t stride, nslots;
	int round, s, t, i;
	double ns, min_ns;

	copy_dst = aligned_alloc(4096, MAX_LEN);
	if (!pool || !copy_dst) {
		perror("crc-cost: aligned_alloc");
		return 1;
	}
	fill_random(pool, COLD_POOL_BYTES);
	memset(copy_dst, 0, MAX_LEN);
	for (round = -1; round < r->rounds; round++) {
		/* Round -1 warms up caches, clocks and branch predictors, unrecorded. */
		min_ns = (round < 0 ? 0.2 : 1) * r->ms * 1e6;
		if (round >= 0)
			r->load[round].before = loadavg1();
		for (s = 0; s < (int)NSIZE; s++) {
			for (t = 0; t < NTEMP; t++) {
				/* Cold buffers start at 64-octet lines, as pages do. */
				stride = (sizes[s] + 63) & ~(size_t)63;
				nslots = t == WARM ? 1 : COLD_POOL_BYTES / stride;
				base = pool;
				for (i = 0; i < NIMPL; i++) {
					if (!impl_usable(i))
						continue;
					ns = time_ns_per_octet(impls[i].fn, base, stride,
							       nslots, sizes[s], min_ns);
					if (round >= 0)
						*ns_at(r, round, s, t, i) = ns;
				}
			}
		}
		if (round >= 0) {
			r->load[round].after = loadavg1();
			fprintf(stderr, "crc-cost: round %d of %d done, load %.2f -> %.2f\n",
				round + 1, r->rounds, r->load[round].before,
				r->load[round].after);
		}
	}
	free(pool);
	free(copy_dst);
	return 0;
}

/* ------------------------------------------------------------ output */

static double load_max(struct results *r)
{
	double m = 0;
	int k;

	for (k = 0; k < r->rounds; k++) {
		if (r->load[k].before > m)
			m = r->load[k].before;
		if (r->load[k].after > m)
			m = r->load[k].after;
	}
	return m;
}

static const int copies[] = { IMPL_MEMCPY, IMPL_MOVSB };
#define NCOPY ((int)ARRAY_SIZE(copies))

/* A share of the module's pick (hw3 at every size timed) and where it is. */
struct extreme {
	double share;
	int size, pair, copy;
};

/* The lowest (ex[0]) and highest (ex[1]) over sizes, pairings and copies. */
static void share_range(struct results *r, struct extreme ex[2])
{
	struct extreme e;
	int s, p, c;

	ex[0].share = 2;
	ex[1].share = -1;
	for (s = 0; s < (int)NSIZE; s++)
		for (p = 0; p < NPAIR; p++)
			for (c = 0; c < NCOPY; c++) {
				if (!impl_usable(copies[c]))
					continue;
				e = (struct extreme){
					share(ratio_stat(r, s, p, IMPL_HW3, copies[c]).med),
					s, p, copies[c] };
				if (e.share < ex[0].share)
					ex[0] = e;
				if (e.share > ex[1].share)
					ex[1] = e;
			}
}

/* The human table (md false) and the Markdown one share their layout. */
static void bandwidth_row(FILE *f, struct results *r, int s, int t, bool md)
{
	struct stat3 g;
	char cell[64];
	int i;

	if (md)
		fprintf(f, "| %zu | %s |", sizes[s], temp_name[t]);
	else
		fprintf(f, "%-8zu %-5s", sizes[s], temp_name[t]);
	for (i = 0; i < NIMPL; i++) {
		if (!impl_usable(i)) {
			fprintf(f, md ? " — |" : " %-22s", "-");
			continue;
		}
		g = gbps_stat(r, s, t, i);
		snprintf(cell, sizeof(cell), "%.2f [%.2f%s%.2f]", g.med, g.min,
			 md ? "–" : "-", g.max);
		fprintf(f, md ? " %s |" : " %-22s", cell);
	}
	fprintf(f, "\n");
}

static void ratio_row(FILE *f, struct results *r, int s, int i, int copy,
		      bool md)
{
	struct stat3 q;
	char cell[80];
	int p;

	if (md)
		fprintf(f, "| %zu | %s%s | %s |", sizes[s], impls[i].name,
			i == IMPL_HW3 ? " (module's pick)" : "",
			impls[copy].name);
	else
		fprintf(f, "%-8zu %-7s %-7s", sizes[s], impls[i].name,
			impls[copy].name);
	for (p = 0; p < NPAIR; p++) {
		q = ratio_stat(r, s, p, i, copy);
		snprintf(cell, sizeof(cell), md ? "%.3f [%.3f–%.3f]: %.1f %%" :
			 "%.3f [%.3f-%.3f] %.1f%%", q.med, q.min, q.max,
			 100 * share(q.med));
		fprintf(f, md ? " %s |" : " %-27s", cell);
	}
	fprintf(f, "\n");
}

static void print_tables(FILE *f, struct results *r, bool md)
{
	int s, t, i, p, c, k;

	if (md)
		fprintf(f, "Bandwidth in GB/s (10^9 octets per second), median [min–max] of %d rounds, %.0f ms per measurement, %s:\n\n| size | source |",
			r->rounds, r->ms, r->cpu >= 0 ? "pinned" : "not pinned");
	else
		fprintf(f, "\nGB/s, median [min-max] of %d rounds, %.0f ms per measurement, %s\n%-8s %-5s",
			r->rounds, r->ms, r->cpu >= 0 ? "pinned" : "not pinned",
			"size", "src");
	for (i = 0; i < NIMPL; i++)
		fprintf(f, md ? " %s |" : " %-22s", impls[i].name);
	if (md) {
		fprintf(f, "\n|---|---|");
		for (i = 0; i < NIMPL; i++)
			fprintf(f, "---|");
	}
	fprintf(f, "\n");
	for (s = 0; s < (int)NSIZE; s++)
		for (t = 0; t < NTEMP; t++)
			bandwidth_row(f, r, s, t, md);

	if (md)
		fputs("\nt_crc / t_copy per round, median [min–max], and the bound it gives on the CRC's share of per-octet CPU time, ratio / (1 + ratio). Pairings: warm (both sources warm), cold (both cold), tx (CRC cold, copy warm: the send path's order), rx (copy cold, CRC warm: the receive path's order).\n\n| size | CRC | copy |",
		      f);
	else
		fprintf(f, "\nt_crc / t_copy, median [min-max] per round, share = ratio / (1 + ratio)\n%-8s %-7s %-7s",
			"size", "crc", "copy");
	for (p = 0; p < NPAIR; p++)
		fprintf(f, md ? " %s |" : " %-27s", pair_name[p]);
	if (md) {
		fprintf(f, "\n|---|---|---|");
		for (p = 0; p < NPAIR; p++)
			fprintf(f, "---|");
	}
	fprintf(f, "\n");
	for (s = 0; s < (int)NSIZE; s++)
		for (i = IMPL_HW1; i < NIMPL; i++)
			for (c = 0; c < NCOPY; c++)
				if (impl_usable(i) && impl_usable(copies[c]))
					ratio_row(f, r, s, i, copies[c], md);

	fprintf(f, md ? "\nHost load (1-minute average), per round before → after:" :
		"\nload (1 min) per round, before -> after:");
	for (k = 0; k < r->rounds; k++)
		fprintf(f, md ? "%s %.2f → %.2f" : "%s %.2f->%.2f", k ? "," : "",
			r->load[k].before, r->load[k].after);
	fprintf(f, md ? ".\n" : "\n");
}

static void json_stat(FILE *f, const char *key, struct stat3 v)
{
	fprintf(f, "\"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}",
		key, v.med, v.min, v.max);
}

static void json_size(FILE *f, struct results *r, int s)
{
	int t, i, p, c, k;

	fprintf(f, "    {\"bytes\": %zu,\n     \"gbps\": {", sizes[s]);
	for (t = 0; t < NTEMP; t++) {
		fprintf(f, "%s\"%s\": {", t ? ", " : "", temp_name[t]);
		for (i = 0, k = 0; i < NIMPL; i++) {
			if (!impl_usable(i))
				continue;
			fprintf(f, "%s", k++ ? ", " : "");
			json_stat(f, impls[i].name, gbps_stat(r, s, t, i));
		}
		fprintf(f, "}");
	}
	fprintf(f, "},\n     \"crc_over_copy\": {");
	for (i = IMPL_HW1, k = 0; i < NIMPL; i++) {
		if (!impl_usable(i))
			continue;
		fprintf(f, "%s\"%s\": {", k++ ? ", " : "", impls[i].name);
		for (c = 0; c < NCOPY; c++) {
			if (!impl_usable(copies[c]))
				continue;
			fprintf(f, "%s\"%s\": {", c ? ", " : "",
				impls[copies[c]].name);
			for (p = 0; p < NPAIR; p++) {
				fprintf(f, "%s", p ? ", " : "");
				json_stat(f, pair_name[p],
					  ratio_stat(r, s, p, i, copies[c]));
			}
			fprintf(f, "}");
		}
		fprintf(f, "}");
	}
	fprintf(f, "}}%s\n", s + 1 < (int)NSIZE ? "," : "");
}

static void json_extreme(FILE *f, const char *key, struct extreme e)
{
	fprintf(f, "  \"%s\": {\"share\": %.4f, \"bytes\": %zu, \"pairing\": \"%s\", \"copy\": \"%s\"},\n",
		key, e.share, sizes[e.size], pair_name[e.pair],
		impls[e.copy].name);
}

static int write_json(struct results *r, const char *path)
{
	FILE *f = fopen(path, "w");
	struct extreme ex[2];
	int s, i, k;

	if (!f) {
		fprintf(stderr, "crc-cost: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"tool\": \"crc-cost\",\n  \"rounds\": %d,\n  \"ms_per_measurement\": %.0f,\n  \"pinned_cpu\": %d,\n  \"cold_pool_bytes\": %lu,\n",
		r->rounds, r->ms, r->cpu, COLD_POOL_BYTES);
	fprintf(f, "  \"implementations\": {");
	for (i = 0; i < NIMPL; i++)
		fprintf(f, "%s\"%s\": \"%s\"", i ? ", " : "", impls[i].name,
			impl_usable(i) ? impls[i].what : "not available here");
	fprintf(f, "},\n  \"load\": [");
	for (k = 0; k < r->rounds; k++)
		fprintf(f, "%s{\"before\": %.2f, \"after\": %.2f}", k ? ", " : "",
			r->load[k].before, r->load[k].after);
	fprintf(f, "],\n  \"load_max\": %.2f,\n  \"sizes\": [\n", load_max(r));
	for (s = 0; s < (int)NSIZE; s++)
		json_size(f, r, s);
	fprintf(f, "  ],\n");
	if (have_insns) {
		share_range(r, ex);
		fprintf(f, "  \"module_pick\": \"hw3\",\n");
		json_extreme(f, "share_lowest", ex[0]);
		json_extreme(f, "share_highest", ex[1]);
		fprintf(f, "  \"goal_10_percent_met\": %s\n}\n",
			ex[1].share <= 0.10 ? "true" : "false");
	} else {
		fprintf(f, "  \"module_pick\": null\n}\n");
	}
	return fclose(f) ? 1 : 0;
}

/* The generated part of Documentation/benchmarks.md's CRC section. */
static int write_markdown(struct results *r, const char *path)
{
	FILE *f = fopen(path, "w");
	double lmax = load_max(r);
	struct extreme ex[2];

	if (!f) {
		fprintf(stderr, "crc-cost: %s: %s\n", path, strerror(errno));
		return 1;
	}
	print_tables(f, r, true);
	fprintf(f, "\nHighest 1-minute load: %.2f%s.\n", lmax,
		lmax > 1.5 ? ": **not a quiet host** (other runs shared its two cores)" : "");
	if (have_insns) {
		share_range(r, ex);
		fprintf(f, "\n**Bound for the module's pick (hw3), over sizes, pairings and copies: %.1f %% (%zu octets, %s, %s) to %.1f %% (%zu octets, %s, %s). The goal \"CRC on costs ≤ 10 %%\" is %s by this bound.**\n",
			100 * ex[0].share, sizes[ex[0].size], pair_name[ex[0].pair],
			impls[ex[0].copy].name, 100 * ex[1].share,
			sizes[ex[1].size], pair_name[ex[1].pair],
			impls[ex[1].copy].name,
			ex[1].share <= 0.10 ? "MET" : "NOT MET");
	} else {
		fprintf(f, "\n**No bound: this CPU lacks SSE4.2 or PCLMULQDQ, so the module's pick was not timed.**\n");
	}
	return fclose(f) ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: crc-cost [--json PATH] [--markdown PATH] [--rounds N] [--ms N] [--cpu N]\n"
			"       crc-cost --verify-only\n");
}

int main(int argc, char **argv)
{
	struct results r = { .rounds = 5, .ms = 100, .cpu = -1 };
	const char *json = NULL, *md = NULL;
	bool verify_only = false;
	int a, rc;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--verify-only")) {
			verify_only = true;
		} else if (!strcmp(argv[a], "--json") && a + 1 < argc) {
			json = argv[++a];
		} else if (!strcmp(argv[a], "--markdown") && a + 1 < argc) {
			md = argv[++a];
		} else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) {
			r.rounds = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--ms") && a + 1 < argc) {
			r.ms = atof(argv[++a]);
		} else if (!strcmp(argv[a], "--cpu") && a + 1 < argc) {
			r.cpu = atoi(argv[++a]);
		} else {
			usage();
			return 2;
		}
	}
	if (r.rounds < 3 || r.ms <= 0) {
		fprintf(stderr, "crc-cost: at least 3 rounds and a positive --ms\n");
		return 2;
	}

	have_insns = HAVE_X86_CRC && cpu_has_crc_insns();
	slice8_init();
	hw3_init();
	if (verify())
		return 1;
	if (verify_only)
		return 0;

	if (r.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(r.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("crc-cost: sched_setaffinity");
			return 1;
		}
	}
	r.ns = calloc((size_t)r.rounds * NSIZE * NTEMP * NIMPL, sizeof(*r.ns));
	r.load = calloc(r.rounds, sizeof(*r.load));
	if (!r.ns || !r.load) {
		perror("crc-cost: calloc");
		return 1;
	}
	if (run(&r))
		return 1;
	print_tables(stdout, &r, false);
	rc = 0;
	if (json)
		rc |= write_json(&r, json);
	if (md)
		rc |= write_markdown(&r, md);
	free(r.ns);
	free(r.load);
	return rc;
}
