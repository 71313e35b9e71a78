// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: MPA CRC32c (RFC 5044 section 4.4), with the implementation
 * chosen by speed.
 *
 * The kernel's crc32c() uses whichever "crc32c" driver has the highest
 * priority, which assumes the CPU's instructions are the fastest way.
 * That is not always true: under an emulator (QEMU TCG, where this
 * driver is tested) the SSE4.2 crc32 instruction is emulated bit by bit
 * and the table-driven crc32c-generic is 2-3x faster.  So at load time
 * we time every crc32c driver we can get on FPDU-sized buffers and use
 * the fastest, as the kernel's XOR and RAID6 code pick their routines.
 * crc32c_driver=NAME at load time forces one.
 */

#include <crypto/hash.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "swiwarp.h"

static struct crypto_shash *swiwarp_crc_tfm;
static char swiwarp_crc_forced[CRYPTO_MAX_ALG_NAME];
static u64 swiwarp_crc_mbps;	/* measured speed of the chosen driver */

static int swiwarp_crc_driver_set(const char *val,
				  const struct kernel_param *kp)
{
	char name[CRYPTO_MAX_ALG_NAME];

	if (swiwarp_crc_tfm)
		return -EBUSY;
	strscpy(name, val, sizeof(name));
	strscpy(swiwarp_crc_forced, strim(name), sizeof(swiwarp_crc_forced));
	return 0;
}

static int swiwarp_crc_driver_get(char *buf, const struct kernel_param *kp)
{
	if (!swiwarp_crc_tfm)
		return sysfs_emit(buf, "none\n");
	return sysfs_emit(buf, "%s %llu MB/s\n",
			  crypto_shash_driver_name(swiwarp_crc_tfm),
			  swiwarp_crc_mbps);
}

static const struct kernel_param_ops swiwarp_crc_driver_ops = {
	.set = swiwarp_crc_driver_set,
	.get = swiwarp_crc_driver_get,
};

module_param_cb(crc32c_driver, &swiwarp_crc_driver_ops, NULL, 0444);
MODULE_PARM_DESC(crc32c_driver,
		 "crc32c driver for MPA CRCs, e.g. crc32c-generic (default: the fastest measured at load); reading shows the one in use and its measured speed");

u32 swiwarp_crc32c(u32 crc, const void *data, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, swiwarp_crc_tfm);
	u32 *state = shash_desc_ctx(desc);

	/* The descriptor state of every crc32c driver is the CRC register. */
	desc->tfm = swiwarp_crc_tfm;
	*state = crc;
	crypto_shash_update(desc, data, len);
	return *state;
}

/* Octets per microsecond (= MB/s) of tfm on buf, best of a few rounds. */
static u64 swiwarp_crc_speed(struct crypto_shash *tfm, const u8 *buf,
			     unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u64 best = U64_MAX;
	int round, i;

	desc->tfm = tfm;
	for (round = 0; round < 3; round++) {
		u64 t0 = ktime_get_ns(), dt;

		crypto_shash_init(desc);
		for (i = 0; i < 16; i++)
			crypto_shash_update(desc, buf, len);
		dt = ktime_get_ns() - t0;
		best = min(best, dt);
		cond_resched();
	}
	return div64_u64(16ULL * len * 1000, max_t(u64, best, 1));
}

static struct crypto_shash *swiwarp_crc_get(const char *name)
{
	struct crypto_shash *tfm = crypto_alloc_shash(name, 0, 0);

	if (IS_ERR(tfm))
		return NULL;
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_digestsize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return NULL;
	}
	return tfm;
}

int swiwarp_crc_init(void)
{
	/* the default (highest priority) first: it wins ties */
	static const char * const candidates[] = {
		"crc32c", "crc32c-generic", "crc32c-intel",
	};
	/* about one full-sized FPDU */
	const unsigned int len = 1460;
	struct crypto_shash *best = NULL;
	u64 best_mbps = 0;
	unsigned int i;
	u8 *buf;

	if (swiwarp_crc_forced[0]) {
		best = swiwarp_crc_get(swiwarp_crc_forced);
		if (!best) {
			pr_err("swiwarp: crc32c driver %s not available\n",
			       swiwarp_crc_forced);
			return -EINVAL;	/* a bad module parameter */
		}
	}
	buf = kmalloc(len, GFP_KERNEL);
	if (!buf) {
		if (best)
			crypto_free_shash(best);
		return -ENOMEM;
	}
	get_random_bytes(buf, len);
	if (best) {
		best_mbps = swiwarp_crc_speed(best, buf, len);
	} else {
		for (i = 0; i < ARRAY_SIZE(candidates); i++) {
			struct crypto_shash *tfm = swiwarp_crc_get(candidates[i]);
			u64 mbps;

			if (!tfm)
				continue;
			mbps = swiwarp_crc_speed(tfm, buf, len);
			if (mbps > best_mbps) {
				if (best)
					crypto_free_shash(best);
				best = tfm;
				best_mbps = mbps;
			} else {
				crypto_free_shash(tfm);
			}
		}
	}
	kfree(buf);
	if (!best) {
		pr_err("swiwarp: no crc32c driver\n");
		return -ENOENT;
	}
	swiwarp_crc_tfm = best;
	swiwarp_crc_mbps = best_mbps;
	pr_info("swiwarp: MPA CRC with %s (%llu MB/s measured)\n",
		crypto_shash_driver_name(best), best_mbps);
	return 0;
}

void swiwarp_crc_exit(void)
{
	crypto_free_shash(swiwarp_crc_tfm);
	swiwarp_crc_tfm = NULL;
}
