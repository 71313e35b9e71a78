// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * provider.so_registers: dlopen() the built libswiwarp-rdmav34.so and check
 * what its ELF constructor hands to verbs_register_driver_34().
 *
 * This executable defines verbs_register_driver_34 itself and exports it
 * (-rdynamic); the executable comes first in the global lookup scope, so the
 * provider's versioned reference binds here instead of to libibverbs.  The
 * test then checks the registered ops: name, ABI range and a match table
 * that matches exactly the private driver id of swiwarp-abi.h.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "pabi34.h"
#include "swiwarp-abi.h"

static const struct pabi34_device_ops *registered;
static int calls;

void verbs_register_driver_34(const struct pabi34_device_ops *ops)
{
	registered = ops;
	calls++;
}

int main(int argc, char **argv)
{
	const struct pabi34_match_ent *m;
	int fails = 0, ids = 0;
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PROVIDER.so\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
#define EXPECT(c)                                                              \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "expected: %s\n", #c);                 \
			fails++;                                               \
		}                                                              \
	} while (0)
	EXPECT(calls == 1);
	if (!registered)
		return 1;
	EXPECT(registered->name && !strcmp(registered->name, "swiwarp"));
	EXPECT(registered->match_min_abi_version == SWIWARP_ABI_VERSION);
	EXPECT(registered->match_max_abi_version == SWIWARP_ABI_VERSION);
	EXPECT(registered->alloc_device && registered->uninit_device);
	EXPECT(registered->alloc_context);
	EXPECT(registered->match_table);
	for (m = registered->match_table; m && m->kind != PABI34_MATCH_END;
	     m++) {
		EXPECT(m->kind == PABI34_MATCH_DRIVER_ID);
		EXPECT(m->u.driver_id == SWIWARP_DRIVER_ID);
		ids++;
	}
	EXPECT(ids == 1);
	/* The provider exports nothing of its own. */
	EXPECT(dlsym(h, "swi_register") == NULL);
	EXPECT(dlsym(h, "swr_sq_post") == NULL);
	if (fails)
		return 1;
	printf("constructor registered \"%s\", driver id %#x, ABI %u\n",
	       registered->name, SWIWARP_DRIVER_ID, SWIWARP_ABI_VERSION);
	return 0;
}
