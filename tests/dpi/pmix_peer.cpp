// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A misbehaving rank for tests/dpi/pmix_host_test.sh: joins the address
// exchange's fence like a libdpi rank, but publishes nothing (no argument) or
// the given string as its address.
//   mpirun -np 1 dpi info : -np 1 dpi-pmix-peer ['VALUE']
#include <pmix.h>

#include <cstdio>

int main(int argc, char **argv)
{
	pmix_proc_t me;
	pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
	if (rc != PMIX_SUCCESS) {
		std::fprintf(stderr, "dpi-pmix-peer: PMIx_Init: %s\n", PMIx_Error_string(rc));
		return 1;
	}
	if (argc > 1) {
		pmix_value_t v;
		PMIX_VALUE_LOAD(&v, argv[1], PMIX_STRING);
		rc = PMIx_Put(PMIX_GLOBAL, "dpi.node.v1", &v);
		PMIX_VALUE_DESTRUCT(&v);
		if (rc == PMIX_SUCCESS)
			rc = PMIx_Commit();
	}
	pmix_proc_t job;
	PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
	bool collect = true;
	pmix_info_t info;
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Fence(&job, 1, &info, 1);
	std::fprintf(stderr, "dpi-pmix-peer: rank %u %s, fence: %s\n", me.rank,
	             argc > 1 ? "published a value" : "published nothing", PMIx_Error_string(rc));
	PMIx_Finalize(nullptr, 0);
	return rc == PMIX_SUCCESS ? 0 : 1;
}
