#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# Kernel code hygiene, for every kernel whose headers are installed
# (tools/kernels.sh headers: Debian 12's 6.1 and Debian's 6.12): swiwarp.ko
# and the lab's kernel verbs API test module (tests/kapi/swiwarp_kapi.ko)
# build with W=1 and sparse (C=2) without a single warning, and kernel/,
# tests/kapi/ and the uAPI header pass checkpatch.pl --strict of every
# installed linux-source (extracted into build/, never committed).
set -uo pipefail
top=${SWIWARP_TOP:?}
source "$top/tests/swiwarp/suite-lib.sh"
build=${BUILD:?}
cd "$top" || exit 1
t0=$(date +%s)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
kernels=$(tools/kernels.sh headers)
if [ -z "$kernels" ]; then
	fail "kernel.headers" "no kernel headers installed"
	exit 0
fi
# W=1 + sparse in a scratch copy per kernel, so the tree's own builds stay
# untouched.
while read -r kver kdir; do
	s=$scratch/$kver
	mkdir -p "$s"
	git ls-files -z kernel include tests/kapi | xargs -0 cp --parents -t "$s"
	for m in kernel tests/kapi; do
		# kernel.* for swiwarp.ko, kapi.* for the test module
		n=${m#tests/}
		log=$s/build-$n.log
		if nice make -C "$kdir" M="$s/$m" W=1 C=2 -j2 modules >"$log" 2>&1; then
			if grep -E 'warning:|error:' "$log"; then
				fail "$n.w1-sparse-clean.$kver"
			else
				pass "$n.w1-sparse-clean.$kver"
			fi
		else
			grep -E 'warning:|error:' "$log" | head -n 30
			tail -n 5 "$log"
			fail "$n.w1-build.$kver"
		fi
	done
done <<<"$kernels"

# checkpatch of each installed linux-source series.
cps=()
for src in /usr/src/linux-source-*.tar.xz; do
	[ -f "$src" ] || continue
	series=$(basename "$src" .tar.xz)
	cp_dir=$build/checkpatch/${series#linux-source-}
	if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
		mkdir -p "$cp_dir"
		tar -xJf "$src" -C "$cp_dir" --strip-components=1 \
			"$series/scripts/checkpatch.pl" \
			"$series/scripts/spelling.txt" \
			"$series/scripts/const_structs.checkpatch"
	fi
	cps+=("$cp_dir/scripts/checkpatch.pl")
done
if [ ${#cps[@]} -eq 0 ]; then
	fail "kernel.checkpatch" "no linux-source package is installed"
	exit 0
fi
# checkpatch is one perl process per file and version: run them
# CHECKPATCH_JOBS (default 2) at a time into $scratch/cp, then print the
# verdicts in file order.
files=$(git ls-files 'kernel/*.c' 'kernel/*.h' 'tests/kapi/*.c'; echo include/uapi/swiwarp-abi.h)
mkdir -p "$scratch/cp"
# cp_out CHECKPATCH FILE: where that checkpatch's verdict on FILE goes.
cp_out() { echo "$scratch/cp/${2//\//_}.$(echo "$1" | md5sum | cut -c1-8)"; }
for cp in "${cps[@]}"; do
	for f in $files; do
		printf '%s\0%s\0%s\0' "$cp" "$f" "$(cp_out "$cp" "$f")"
	done
done | xargs -0 -n 3 -P "${CHECKPATCH_JOBS:-2}" sh -c '"$1" --strict --no-tree --terse -f "$2" >"$3" 2>&1' _
for f in $files; do
	out=
	for cp in "${cps[@]}"; do
		o=$(cp_out "$cp" "$f")
		if [ -f "$o" ]; then out+=$(cat "$o"); else out+="($cp did not run on $f)"; fi
	done
	if [ -z "$out" ]; then
		pass "kernel.checkpatch.$f"
	else
		echo "$out"
		fail "kernel.checkpatch.$f"
	fi
done
echo "30-kernel-style: $(echo "$kernels" | wc -l) kernels, ${#cps[@]} checkpatch versions, $(($(date +%s) - t0))s"
