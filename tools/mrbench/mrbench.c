// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * mrbench: memory registration rate and kernel memory per MR on one verbs
 * device, without any connection (issue 20, tests/bench/scale.sh).
 *
 *   mrbench [-d DEV] [-t SECS] [-n ITERS] [-m MAXSIZE] [-k K]
 *       For each size 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB (up to MAXSIZE):
 *       ibv_reg_mr() + ibv_dereg_mr() of one buffer, allocated and touched
 *       before the clock starts, repeated until SECS (1) have passed and
 *       at least ITERS (20) pairs ran: registrations per second.  Then K
 *       (1000) MRs of 4 KiB, each on its own page, registered together:
 *       the kernel memory they hold, per MR.  Prints one JSON object.
 *   mrbench kmem
 *       The kernel memory counters now, one JSON object (the scale bench
 *       reads them around idle QPs, with the same definition).
 *
 * DEV is the verbs device's name (default: the first device).  Exit 1
 * with a message naming what failed (no device, ibv_reg_mr and its errno).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static const size_t sizes[] = { 4096, 65536, 1 << 20, 16 << 20, 64 << 20 };

/*
 * Kernel memory, from /proc/meminfo, in kB.  What a driver allocates for a
 * QP or an MR lands in
 *   SUnreclaim   kmalloc() and kmem_cache objects, and since 5.x also the
 *                pages of kmalloc() calls too large for a slab cache
 *                (6.1 mm/slab_common.c accounts them as
 *                NR_SLAB_UNRECLAIMABLE_B): the QP and MR structures, page
 *                lists, ib_umem and its scatterlist, the TCP socket, the
 *                xarray nodes of the object IDs;
 *   VmallocUsed  vmalloc() pages (vmalloc_nr_pages()): queues mapped to user
 *                space (vmalloc_user()), kvmalloc() falling back to vmalloc;
 *   KernelStack, Percpu
 *                a kernel thread per object or per-CPU data; neither driver
 *                is expected to have any, counted so that one would show.
 * The sum of these four is the figure.  Not counted:
 *   SReclaimable dentries and inodes, which come and go with file look-ups
 *                (the lab's root is 9p) and are not held by a QP or an MR;
 *   PageTables   the process's own page tables: they grow with its heap and
 *                its mappings, not with what the driver keeps (reported,
 *                not summed);
 *   MemFree      pages taken straight from the page allocator are in no
 *                counter, but neither swiwarp nor siw does that for a QP or
 *                an MR (both use kmalloc and vmalloc), and MemFree moves
 *                with the page cache and the per-CPU free lists by more
 *                than a QP's worth.
 * Pinned user pages are not kernel memory: the buffers are touched before
 * the first reading.
 *
 * Freed slab objects leave their slabs in the cache, so SUnreclaim after
 * a free depends on what ran before (mrbench's own registrations, an
 * earlier benchmark run).  Each reading therefore first asks every slab
 * cache to give back its empty slabs (/sys/kernel/slab/NAME/shrink, root
 * only; skipped without), and SUnreclaim then counts the slabs that hold
 * live objects.
 */
static const char *const kmem_names[] = { "SUnreclaim", "VmallocUsed", "KernelStack", "Percpu", "PageTables" };
#define KMEM_N 5
#define KMEM_SUMMED 4

struct kmem {
	long kb[KMEM_N];
};

static void slab_shrink(void)
{
	char p[512];
	struct dirent *e;
	DIR *d;
	int fd;

	d = opendir("/sys/kernel/slab");
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/kernel/slab/%s/shrink", e->d_name);
		fd = open(p, O_WRONLY);
		if (fd < 0)
			continue;
		/* a cache that cannot shrink keeps its slabs */
		if (write(fd, "1", 1) != 1)
			errno = 0;
		close(fd);
	}
	closedir(d);
}

static int kmem_read(struct kmem *k)
{
	char name[64];
	long v;
	FILE *f;
	int i, found = 0;

	slab_shrink();
	f = fopen("/proc/meminfo", "r");
	if (!f) {
		perror("mrbench: /proc/meminfo");
		return -1;
	}
	while (fscanf(f, "%63[^:]: %ld%*[^\n]\n", name, &v) == 2) {
		for (i = 0; i < KMEM_N; i++) {
			if (!strcmp(name, kmem_names[i])) {
				k->kb[i] = v;
				found++;
			}
		}
	}
	fclose(f);
	if (found != KMEM_N) {
		fprintf(stderr, "mrbench: /proc/meminfo lacks some of SUnreclaim, VmallocUsed, KernelStack, "
				"Percpu, PageTables\n");
		return -1;
	}
	return 0;
}

static long kmem_sum(const struct kmem *k)
{
	long s = 0;
	int i;

	for (i = 0; i < KMEM_SUMMED; i++)
		s += k->kb[i];
	return s;
}

/* "NAME": {"SUnreclaim": kB, ...} of b - a (or of b alone when a is NULL). */
static void kmem_print(const char *name, const struct kmem *a, const struct kmem *b, const char *end)
{
	int i;

	printf("  \"%s\": {", name);
	for (i = 0; i < KMEM_N; i++)
		printf("\"%s\": %ld, ", kmem_names[i], b->kb[i] - (a ? a->kb[i] : 0));
	printf("\"summed\": %ld}%s\n", kmem_sum(b) - (a ? kmem_sum(a) : 0), end);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *touched(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "mrbench: mmap of %zu bytes: %s\n", len, strerror(errno));
		return NULL;
	}
	memset(p, 0xa5, len);
	return p;
}

static struct ibv_context *open_dev(const char *want)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, "mrbench: no verbs device\n");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (want && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "mrbench: ibv_open_device(%s): %s\n", ibv_get_device_name(list[i]),
				strerror(errno));
		break;
	}
	if (i == n)
		fprintf(stderr, "mrbench: no verbs device named %s\n", want);
	ibv_free_device_list(list);
	return ctx;
}

/* Registrations per second of one size; prints its JSON element. */
static int reg_rate(struct ibv_pd *pd, size_t size, double secs, long min_iters, const char *end)
{
	struct ibv_mr *mr;
	double t0, t;
	long n = 0;
	void *buf;

	buf = touched(size);
	if (!buf)
		return -1;
	t0 = now_s();
	do {
		mr = ibv_reg_mr(pd, buf, size, ACCESS);
		if (!mr) {
			fprintf(stderr, "mrbench: ibv_reg_mr of %zu bytes: %s (errno %d)\n", size, strerror(errno),
				errno);
			return -1;
		}
		if (ibv_dereg_mr(mr)) {
			fprintf(stderr, "mrbench: ibv_dereg_mr of %zu bytes: %s\n", size, strerror(errno));
			return -1;
		}
		n++;
		t = now_s() - t0;
	} while (t < secs || n < min_iters);
	printf("    {\"size\": %zu, \"iters\": %ld, \"secs\": %.6f, \"per_sec\": %.2f}%s\n", size, n, t, n / t, end);
	munmap(buf, size);
	return 0;
}

/* K MRs of one page each, held together: kernel memory per MR. */
static int mr_kmem(struct ibv_pd *pd, int k)
{
	struct kmem before, held, after;
	struct ibv_mr **mr;
	long page = sysconf(_SC_PAGESIZE);
	char *buf;
	int i;

	mr = calloc(k, sizeof(*mr));
	buf = touched((size_t)k * page);
	if (!mr || !buf)
		return -1;
	if (kmem_read(&before))
		return -1;
	for (i = 0; i < k; i++) {
		mr[i] = ibv_reg_mr(pd, buf + (size_t)i * page, page, ACCESS);
		if (!mr[i]) {
			fprintf(stderr, "mrbench: ibv_reg_mr %d of %d (one page each): %s (errno %d)\n", i + 1, k,
				strerror(errno), errno);
			return -1;
		}
	}
	if (kmem_read(&held))
		return -1;
	for (i = 0; i < k; i++)
		if (ibv_dereg_mr(mr[i])) {
			fprintf(stderr, "mrbench: ibv_dereg_mr %d of %d: %s\n", i + 1, k, strerror(errno));
			return -1;
		}
	if (kmem_read(&after))
		return -1;
	printf("  \"kmem_mrs\": %d,\n", k);
	kmem_print("kmem_held_kb", &before, &held, ",");
	kmem_print("kmem_left_after_dereg_kb", &before, &after, ",");
	printf("  \"kmem_per_mr_bytes\": %.1f\n", (kmem_sum(&held) - kmem_sum(&before)) * 1024.0 / k);
	munmap(buf, (size_t)k * page);
	free(mr);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: mrbench [-d DEV] [-t SECS] [-n ITERS] [-m MAXSIZE] [-k K] | mrbench kmem\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	long min_iters = 20, max_size = 64 << 20;
	double secs = 1;
	int k = 1000, c, i, last;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct kmem now;

	if (argc == 2 && !strcmp(argv[1], "kmem")) {
		if (kmem_read(&now))
			return 1;
		printf("{\n");
		kmem_print("kmem_kb", NULL, &now, "");
		printf("}\n");
		return 0;
	}
	while ((c = getopt(argc, argv, "d:t:n:m:k:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 't': secs = atof(optarg); break;
		case 'n': min_iters = atol(optarg); break;
		case 'm': max_size = atol(optarg); break;
		case 'k': k = atoi(optarg); break;
		default: return usage();
		}
	}
	if (optind != argc || k < 1)
		return usage();
	ctx = open_dev(dev);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "mrbench: ibv_alloc_pd: %s\n", strerror(errno));
		return 1;
	}
	printf("{\n  \"device\": \"%s\",\n  \"secs\": %.3f,\n  \"min_iters\": %ld,\n  \"reg\": [\n",
	       ibv_get_device_name(ctx->device), secs, min_iters);
	for (last = 0; last + 1 < (int)(sizeof(sizes) / sizeof(sizes[0])) && sizes[last + 1] <= (size_t)max_size;)
		last++;
	for (i = 0; i <= last; i++)
		if (reg_rate(pd, sizes[i], secs, min_iters, i < last ? "," : ""))
			return 1;
	printf("  ],\n");
	if (mr_kmem(pd, k))
		return 1;
	printf("}\n");
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
