// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * tcg-profile: a QEMU TCG plugin that counts the guest instructions each
 * translated block executes, for profiling lab guests (issue 20).
 *
 * Why not perf in the guest: under TCG it has no PMU, and its timer
 * samples land only where the guest re-enables interrupts (a handful per
 * run, Documentation/benchmarks.md).  Under TCG the guest's cost is what
 * it executes, so counting executed instructions per block is the
 * profile: tools/tcg-profile/report.py maps the blocks to the guest's
 * symbols (its /proc/kallsyms) and prints instructions per function.
 *
 * Use: qemu-system-x86_64 ... -plugin file=libtcg-profile.so,out=PREFIX
 * (tests/lab/lab does it with LAB_TCG_PROFILE=1).  Whenever PREFIX.req
 * exists, the plugin writes the counts so far to PREFIX.<word in .req>
 * ("vaddr n_insns executions" a line, hex, hex, decimal) and removes
 * PREFIX.req; at exit it writes PREFIX.exit.  Counts are cumulative: a
 * window's profile is the difference of two snapshots.
 *
 * The counters are plain inline adds that QEMU emits into the translated
 * code: vCPUs running the same block at once can lose an increment, which
 * a profile can afford and an atomic add per block would not (it is a
 * call per block execution).
 *
 * QEMU's plugin header is not packaged in Debian: qemu_plugin_abi.h
 * declares the part of it we use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu_plugin_abi.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* ---- the counters ---- */

/*
 * One slot per (block start address, instruction count), in a table that
 * never moves: QEMU keeps a pointer to each counter in translated code.
 * The same address in two processes shares a slot (user space is one
 * bucket in the report anyway); kernel addresses are unique.
 */
struct block_count {
	uint64_t vaddr;
	uint64_t n_insns; /* 0: free slot */
	uint64_t executions;
};

#define TABLE_BITS 21
#define TABLE_SIZE (1u << TABLE_BITS)

static struct block_count *table;
static struct block_count overflow; /* blocks that found no slot */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_prefix;

static struct block_count *slot_for(uint64_t vaddr, uint64_t n_insns)
{
	uint64_t h = (vaddr ^ (n_insns << 56)) * 0x9e3779b97f4a7c15ull;
	uint32_t i = (uint32_t)(h >> (64 - TABLE_BITS));
	uint32_t probes;

	for (probes = 0; probes < 64; probes++, i = (i + 1) & (TABLE_SIZE - 1)) {
		struct block_count *b = &table[i];

		if (b->n_insns == 0) {
			b->vaddr = vaddr;
			b->n_insns = n_insns;
			return b;
		}
		if (b->vaddr == vaddr && b->n_insns == n_insns)
			return b;
	}
	return &overflow;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block_count *b;

	(void)id;
	pthread_mutex_lock(&table_lock);
	b = slot_for(qemu_plugin_tb_vaddr(tb), qemu_plugin_tb_n_insns(tb));
	pthread_mutex_unlock(&table_lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->executions, 1);
}

/* Writes the counts so far to PREFIX.NAME (through a temporary name). */
static void snapshot(const char *name)
{
	char path[4096], tmp[4200];
	FILE *f;
	uint32_t i;

	snprintf(path, sizeof(path), "%s.%s", out_prefix, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "tcg-profile: %s: %s\n", tmp, strerror(errno));
		return;
	}
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < TABLE_SIZE; i++) {
		const struct block_count *b = &table[i];

		if (b->n_insns && b->executions)
			fprintf(f, "%llx %llx %llu\n",
				(unsigned long long)b->vaddr,
				(unsigned long long)b->n_insns,
				(unsigned long long)b->executions);
	}
	pthread_mutex_unlock(&table_lock);
	/* Executions of blocks without a slot, unattributed (vaddr 0). */
	fprintf(f, "0 1 %llu\n", (unsigned long long)overflow.executions);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		fprintf(stderr, "tcg-profile: %s: %s\n", path, strerror(errno));
}

/*
 * Polls for PREFIX.req: the guest asks for a snapshot by creating it in
 * its 9p output directory, which is where PREFIX points.
 */
static void *request_poller(void *arg)
{
	char req[4096], name[64];

	(void)arg;
	snprintf(req, sizeof(req), "%s.req", out_prefix);
	for (;;) {
		FILE *f = fopen(req, "r");

		if (f) {
			size_t i, n = fread(name, 1, sizeof(name) - 1, f);

			fclose(f);
			name[n] = '\0';
			/* One word of [A-Za-z0-9_.-]; anything else ends it. */
			for (i = 0; i < n; i++) {
				char c = name[i];

				if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
				      c == '.'))
					break;
			}
			name[i] = '\0';
			snapshot(i ? name : "unnamed");
			unlink(req);
		}
		usleep(100000);
	}
	return NULL;
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	snapshot("exit");
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
			char **argv)
{
	pthread_t poller;
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "out=", 4) == 0)
			out_prefix = strdup(argv[i] + 4);
	if (!out_prefix || !*out_prefix) {
		fprintf(stderr, "tcg-profile: needs out=PREFIX\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table) {
		fprintf(stderr, "tcg-profile: no memory for the table\n");
		return -1;
	}
	if (pthread_create(&poller, NULL, request_poller, NULL) != 0) {
		fprintf(stderr, "tcg-profile: no poller thread\n");
		return -1;
	}
	pthread_detach(poller);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
