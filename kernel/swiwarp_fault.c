// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Allocation failures injected into swiwarp alone (issue 15, item 4).
 *
 * failslab and fail_page_alloc can be aimed at one task (fail-nth,
 * task-filter), but aiming them at one module needs their stack-trace
 * filter, which no x86_64 kernel can have (in lib/Kconfig.debug,
 * FAULT_INJECTION_STACKTRACE_FILTER depends on !X86_64).  So swiwarp
 * carries a fault attribute of its own, /sys/kernel/debug/fail_swiwarp_alloc/
 * with the kernel's usual knobs (probability, interval, times, space,
 * task-filter, verbose), and asks it before each allocation it makes
 * (swiwarp_alloc() in swiwarp.h), whatever the context: verbs calls, the
 * CM's work items, the TX work.  should_fail() honours a task's fail-nth
 * too, so tests/robust/fail-nth.c counts these points along with the
 * slab and page ones.  Built only into kernels with fault injection (the
 * debug lab kernel); anywhere else swiwarp_alloc() is the allocation.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>

#include "swiwarp.h"

static DECLARE_FAULT_ATTR(swiwarp_fail_alloc_attr);
static struct dentry *swiwarp_fail_alloc_dir;

bool swiwarp_fail_alloc(void)
{
	return should_fail(&swiwarp_fail_alloc_attr, 1);
}

void swiwarp_fault_init(void)
{
	struct dentry *dir;

	/* Without its knobs the module works as ever; a test sees them missing. */
	dir = fault_create_debugfs_attr("fail_swiwarp_alloc", NULL,
					&swiwarp_fail_alloc_attr);
	swiwarp_fail_alloc_dir = IS_ERR(dir) ? NULL : dir;
}

void swiwarp_fault_exit(void)
{
	debugfs_remove_recursive(swiwarp_fail_alloc_dir);
}
