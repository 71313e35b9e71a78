#!/usr/bin/env bash
# Build the wire-core libFuzzer targets and the corpus generator with clang.
# Usage: tests/fuzz/build.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"
cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
	for c in clang clang-14; do
		if command -v "$c" >/dev/null; then cc=$c; break; fi
	done
fi
[ -n "$cc" ] || { echo "no clang found" >&2; exit 77; }
flags=(-g -O1 -std=c11 -Wall -Wextra -Werror -I"$top/include"
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
pids=()
for t in mpa_rr fpdu_markers rdmap term; do
	src=$here/fuzz_$t.c
	bin=$out/fuzz_$t
	# Rebuild only when a source or a header changed.
	if [ -x "$bin" ] && [ -z "$(find "$src" "$here/fuzz_common.h" "$top/include/iwarp" -newer "$bin" 2>/dev/null)" ]; then
		continue
	fi
	nice "$cc" "${flags[@]}" "$src" -o "$bin" &
	pids+=($!)
	# At most two compiles at a time on the shared machine.
	if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
nice "$cc" -g -O1 -std=c11 -Wall -Wextra -Werror -I"$top/include" \
	"$here/gen_corpus.c" -o "$out/gen_corpus"
