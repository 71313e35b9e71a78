#!/usr/bin/env bash
# Kernel code hygiene: swiwarp.ko builds with W=1 without a single warning,
# and kernel/ plus the uAPI header pass checkpatch.pl --strict.  checkpatch
# comes from Debian's linux-source package (extracted into build/, never
# committed).
set -uo pipefail
top=${SWIWARP_TOP:?}
build=${BUILD:?}
kdir=${KDIR:?}
cd "$top" || exit 1

# W=1 build in a scratch copy, so the tree's own build stays untouched.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git ls-files -z kernel include | xargs -0 cp --parents -t "$scratch"
if make -C "$kdir" M="$scratch/kernel" W=1 modules >"$scratch/w1.log" 2>&1; then
	if grep -E 'warning:' "$scratch/w1.log"; then
		echo "FAIL: kernel.w1-warning-free"
	else
		echo "PASS: kernel.w1-warning-free"
	fi
else
	cat "$scratch/w1.log"
	echo "FAIL: kernel.w1-build"
fi

cp_dir=$build/checkpatch
if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	src=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null | head -n 1)
	if [ -z "$src" ]; then
		echo "FAIL: kernel.checkpatch (linux-source-6.1 is not installed)"
		exit 0
	fi
	mkdir -p "$cp_dir"
	tar -xJf "$src" -C "$cp_dir" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
for f in $(git ls-files 'kernel/*.c' 'kernel/*.h') include/uapi/swiwarp-abi.h; do
	out=$("$cp_dir/scripts/checkpatch.pl" --strict --no-tree --terse -f "$f" 2>&1)
	if [ -z "$out" ]; then
		echo "PASS: kernel.checkpatch.$f"
	else
		echo "$out"
		echo "FAIL: kernel.checkpatch.$f"
	fi
done
