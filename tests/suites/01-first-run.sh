#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# The first `make` on a fresh machine must work (issue 16, item 5).
#
# On a machine without our packages, `make demo` runs the setup step, which
# installs the kernel headers, and only then builds the module.  A Makefile
# that looks at the system when make reads it (before any recipe runs) sees
# no headers, and only the *second* run works.  This suite replays that first
# run: in a private mount namespace /usr/src is empty until the setup step
# runs, and the setup step (SETUP=) "installs" the headers by mounting the
# real /usr/src back.  One `make kernel` must then build the module.
set -uo pipefail
top=${SWIWARP_TOP:?}
name=first-run

if ! unshare -m --propagation private true 2>/dev/null; then
	echo "SKIP: $name.kernel (no mount namespaces here: unshare -m failed)"
	exit 0
fi

work=$(mktemp -d /tmp/swiwarp-first-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A copy of what `make kernel` reads, so the real tree's objects are untouched.
mkdir -p "$work/tree/tools"
cp -r "$top/Makefile" "$top/kernel" "$top/include" "$work/tree/"
# kernel/Makefile asks tools/kernels.sh which kernels have headers.
cp "$top/tools/kernels.sh" "$work/tree/tools/"
(cd "$work/tree/kernel" && rm -f ./*.o ./*.ko ./*.mod ./*.mod.c ./.*.cmd Module.symvers modules.order)
mkdir -p "$work/real-usr-src"

# The stand-in for tools/setup-host.sh: the headers appear only now.
cat >"$work/tree/tools/fake-setup.sh" <<SETUP
#!/bin/sh
mount --bind "$work/real-usr-src" /usr/src && echo "fake-setup: headers installed"
SETUP
chmod +x "$work/tree/tools/fake-setup.sh"

# Inside the namespace: keep the real /usr/src reachable at real-usr-src,
# then hide it behind an empty tmpfs, as on a machine without the headers.
unshare -m --propagation private bash -c '
	set -e
	mount --bind /usr/src "$1/real-usr-src"
	mount -t tmpfs none /usr/src
	test -z "$(ls /usr/src)"
	env -u KDIR -u KVER -u BUILD make -C "$1/tree" kernel SETUP="$1/tree/tools/fake-setup.sh"
' first-run "$work" >"$work/make.log" 2>&1
rc=$?
# The module for every kernel whose headers setup "installed" (6.1 in
# kernel/, the others under build/kernel/<release>/).
want=$("$top/tools/kernels.sh" headers | awk '{print $1}')
missing=
for kv in $want; do
	[ "$kv" = "$("$top/tools/kernels.sh" default)" ] && ko=$work/tree/kernel/swiwarp.ko ||
		ko=$work/tree/build/kernel/$kv/kernel/swiwarp.ko
	[ -f "$ko" ] || missing+=" $kv"
done
if [ $rc -eq 0 ] && [ -z "$missing" ]; then
	echo "PASS: $name.kernel (one make after setup installed the headers: $(echo $want))"
else
	echo "FAIL: $name.kernel (make exited $rc; no module for:${missing:- -}; last lines follow)"
	tail -n 15 "$work/make.log"
fi

# The same rule read statically: outside recipes, the top-level Makefile may
# not ask the system anything ($(shell ...) or $(wildcard ...)), since
# whatever it finds was decided before setup ran.
# (A recipe line starts with a tab: $'\t', since "\t" in a bracket
# expression is a backslash and a t, which let lines starting with t pass.)
bad=$(grep -nE $'^[^\t#].*\\$\\((shell|wildcard) ' "$top/Makefile")
if [ -z "$bad" ]; then
	echo "PASS: $name.makefile-reads-nothing-at-parse-time"
else
	echo "FAIL: $name.makefile-reads-nothing-at-parse-time ($bad)"
fi
