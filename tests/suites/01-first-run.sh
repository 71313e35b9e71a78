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
source "$top/tests/swiwarp/suite-lib.sh"
name=first-run

if ! unshare -m --propagation private true 2>/dev/null; then
	skip "$name.kernel" "no mount namespaces here: unshare -m failed"
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
	pass "$name.kernel" "one make after setup installed the headers: $(echo $want)"
else
	fail "$name.kernel" "make exited $rc; no module for:${missing:- -}; last lines follow"
	tail -n 15 "$work/make.log"
fi

# The same rule read statically: outside recipes, the top-level Makefile may
# not ask the system anything ($(shell ...) or $(wildcard ...)), since
# whatever it finds was decided before setup ran.
# (A recipe line starts with a tab: $'\t', since "\t" in a bracket
# expression is a backslash and a t, which let lines starting with t pass.)
bad=$(grep -nE $'^[^\t#].*\\$\\((shell|wildcard) ' "$top/Makefile")
if [ -z "$bad" ]; then
	pass "$name.makefile-reads-nothing-at-parse-time"
else
	fail "$name.makefile-reads-nothing-at-parse-time" "$bad"
fi

# tools/setup-host.sh on a machine that never ran apt-get update (a fresh
# container has no package lists; an image may lack bookworm-security's,
# where the 6.12 kernel is).  Stubs stand in for dpkg-query (nothing is
# installed), apt-cache (it knows a package only once "apt-get update" has
# run) and apt-get (which records its calls), in a private mount namespace
# whose /usr/sbin is empty (policy-rc.d goes there).  setup-host must
# update the lists first and then install everything, the 6.12 meta
# packages by name; and when the archive has no 6.12 kernel at all, say
# so and fail instead of stopping without a word.
if [ "$(id -u)" -ne 0 ]; then
	skip "$name.setup-no-lists" "needs root, as setup-host does"
	exit 0
fi
stub=$work/stub
mkdir -p "$stub"
printf '#!/bin/sh\nexit 1\n' >"$stub/dpkg-query"
cat >"$stub/apt-cache" <<STUB
#!/bin/sh
[ -e "$work/updated" ] || { [ "\$1" = show ] && exit 100; exit 0; }
case "\$1 \$2" in
"show linux-image-6.12-amd64" | "show linux-headers-6.12-amd64") [ -e "$work/no612" ] && exit 100 ;;
esac
exit 0
STUB
cat >"$stub/apt-get" <<STUB
#!/bin/sh
echo "apt-get \$*" >>"$work/apt.log"
[ "\$1" = update ] && : >"$work/updated"
exit 0
STUB
printf '#!/bin/sh\ncat >/dev/null\n' >"$stub/debconf-set-selections"
printf '#!/bin/sh\nexit 0\n' >"$stub/update-rc.d"
chmod +x "$stub"/*
setup_no_lists() { # OUT: tools/setup-host.sh with the stubs, output to OUT
	rm -f "$work/updated" "$work/apt.log"
	unshare -m --propagation private bash -c '
		mount -t tmpfs none /usr/sbin && PATH=$1:/usr/bin:/bin exec bash "$2"
	' setup "$stub" "$top/tools/setup-host.sh" >"$1" 2>&1
}
setup_no_lists "$work/setup1.out"
rc=$?
first=$(head -n 1 "$work/apt.log" 2>/dev/null)
inst=$(grep '^apt-get install' "$work/apt.log" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$first" = "apt-get update -q" ] &&
	[[ $inst == *" linux-image-6.12-amd64 "* && $inst == *" linux-headers-6.12-amd64 "* ]]; then
	pass "$name.setup-no-lists" "apt-get update first, then one install with the 6.12 kernel"
else
	fail "$name.setup-no-lists" "exit $rc; apt-get calls: $(tr '\n' ';' <"$work/apt.log" 2>/dev/null | cut -c1-200); output: $(tail -n 3 "$work/setup1.out" | tr '\n' ' ')"
fi
: >"$work/no612"
setup_no_lists "$work/setup2.out"
rc=$?
if [ $rc -ne 0 ] && grep -q 'no Debian 6.12 kernel' "$work/setup2.out" &&
	! grep -q '^apt-get install' "$work/apt.log" 2>/dev/null; then
	pass "$name.setup-no-6.12-says-why"
else
	fail "$name.setup-no-6.12-says-why" "exit $rc, output: $(tail -n 2 "$work/setup2.out" | tr '\n' ' ')"
fi
