// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-khz: print the host's TSC rate in kHz.
 *
 * Under QEMU TCG a guest's RDTSC returns the host's TSC (plus an offset), so
 * the guest's TSC runs at exactly the host's rate.  A guest that calibrates
 * its TSC against the emulated PIT on a loaded host can get the rate badly
 * wrong ("tsc: Unable to calibrate against PIT"), and with tsc=reliable its
 * clock then runs wrong for the whole boot.  The lab passes this number as
 * tsc_early_khz= instead, so no guest calibrates.
 *
 * Each sample brackets one CLOCK_MONOTONIC_RAW read between two RDTSCs and is
 * kept only if the bracket is short, so a preemption in the middle of a
 * sample cannot skew the result; the rate is taken over about 200 ms.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

struct sample {
	uint64_t tsc;
	uint64_t ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The tightest of a few brackets: its midpoint pairs TSC with time. */
static int take_sample(struct sample *s)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 1000; i++) {
		uint64_t t0 = __rdtsc();
		uint64_t ns = now_ns();
		uint64_t t1 = __rdtsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			s->tsc = t0 + (t1 - t0) / 2;
			s->ns = ns;
		}
	}
	/* A bracket of more than ~20 us on every try: something is badly off. */
	return best < 50000 ? 0 : -1;
}

int main(void)
{
	struct timespec pause = { 0, 200000000 };
	struct sample a, b;

	if (take_sample(&a))
		return 1;
	nanosleep(&pause, NULL);
	if (take_sample(&b) || b.ns <= a.ns)
		return 1;
	printf("%llu\n", (unsigned long long)((b.tsc - a.tsc) * 1000000ull / (b.ns - a.ns)));
	return 0;
}
