/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Terminate checks through the device counters: swiwarp counts every
 * Terminate it sends and receives by the layer it names (tx_term_rdmap,
 * tx_term_ddp, tx_term_mpa, rx_term_* in the port's hw_counters,
 * Documentation/kernel.md "Counters").  term_ctr_open() notes the three
 * counters of one direction; term_ctr_check() then wants the counter of
 * the expected layer up by exactly one and the other two unchanged.  The
 * counters say the layer, not the type and code: those still come from
 * the QP itself (qpterm.h).
 */
#ifndef ROBUST_HWCTR_H
#define ROBUST_HWCTR_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

struct term_ctr {
	char dir[200];		/* .../ports/1/hw_counters/ */
	const char *side;	/* "tx" or "rx" */
	long long v[3];		/* by layer: RDMAP, DDP, LLP (MPA) */
	bool ok;
};

static const char *const term_ctr_layer[3] = { "rdmap", "ddp", "mpa" };

static inline long long term_ctr_read(const struct term_ctr *t, int layer)
{
	char path[300];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s_term_%s", t->dir, t->side, term_ctr_layer[layer]);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* sent: the Terminates the device sends, else those it receives. */
static inline void term_ctr_open(struct term_ctr *t, struct ibv_context *ctx, int sent)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->side = sent ? "tx" : "rx";
	if (!ctx)
		return;
	snprintf(t->dir, sizeof(t->dir), "/sys/class/infiniband/%s/ports/1/hw_counters/",
		 ibv_get_device_name(ctx->device));
	t->ok = true;
	for (i = 0; i < 3; i++) {
		t->v[i] = term_ctr_read(t, i);
		if (t->v[i] < 0)
			t->ok = false;
	}
}

/*
 * 0 when the counter of layer rose by one (within ms) and the others did
 * not move; else 1 with the reason in why.
 */
static inline int term_ctr_check(const struct term_ctr *t, int layer, int ms, char *why,
				 size_t wl)
{
	long long now[3];
	int i, waited = 0;

	if (!t->ok) {
		snprintf(why, wl, "no %s_term_* hw counters under %s", t->side,
			 t->dir[0] ? t->dir : "(no device)");
		return 1;
	}
	for (;;) {
		for (i = 0; i < 3; i++)
			now[i] = term_ctr_read(t, i);
		if (now[layer] != t->v[layer] || waited >= ms)
			break;
		usleep(50000);
		waited += 50;
	}
	for (i = 0; i < 3; i++) {
		long long want = t->v[i] + (i == layer);

		if (now[i] != want) {
			snprintf(why, wl, "%s_term_%s went from %lld to %lld, want %lld (a Terminate of layer %s)",
				 t->side, term_ctr_layer[i], t->v[i], now[i], want,
				 term_ctr_layer[layer]);
			return 1;
		}
	}
	printf("hw counters: %s_term_%s %lld -> %lld\n", t->side, term_ctr_layer[layer],
	       t->v[layer], now[layer]);
	return 0;
}

#endif
