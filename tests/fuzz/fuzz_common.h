/* Shared helpers for the wire-core fuzz targets. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

/* A property violation is a bug: report it and crash so libFuzzer keeps
 * the input. */
#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: property failed: %s\n",      \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif
