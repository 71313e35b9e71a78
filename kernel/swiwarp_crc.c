// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: MPA CRC32c (RFC 5044 section 4.4).
 *
 * The crypto API picks the "crc32c" driver of the highest priority, the
 * one the platform's maintainers rank fastest (crc32c-intel with SSE4.2 on
 * x86, crc32c-generic otherwise), as for every other kernel user of
 * crc32c.  The module does not second-guess that choice: a machine where
 * the ranking is wrong (an emulated CPU, where the crc32 instruction is
 * emulated bit by bit) is fixed there, for every user at once, by not
 * loading the slower driver (module_blacklist=crc32c_intel; the lab does
 * that under QEMU TCG, Documentation/lab.md).
 */

#include <crypto/hash.h>
#include <linux/module.h>

#include "swiwarp.h"

static struct crypto_shash *swiwarp_crc_tfm;

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

int swiwarp_crc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32c", 0, 0);

	if (IS_ERR(tfm)) {
		pr_err("swiwarp: no crc32c driver (%ld)\n", PTR_ERR(tfm));
		return PTR_ERR(tfm);
	}
	/* swiwarp_crc32c() keeps the CRC register in the descriptor state. */
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_digestsize(tfm) != sizeof(u32)) {
		pr_err("swiwarp: crc32c driver %s has an unexpected state size\n",
		       crypto_shash_driver_name(tfm));
		crypto_free_shash(tfm);
		return -EINVAL;
	}
	swiwarp_crc_tfm = tfm;
	pr_info("swiwarp: MPA CRC with %s\n", crypto_shash_driver_name(tfm));
	return 0;
}

void swiwarp_crc_exit(void)
{
	crypto_free_shash(swiwarp_crc_tfm);
	swiwarp_crc_tfm = NULL;
}
