#!/usr/bin/env bash
# run-private.sh COMMAND...: run COMMAND on this checkout as it is seen from a
# private directory, the way a user's clone under a Debian home (mode 0700)
# is seen.  Suites that drop privileges run this way in every `make check`
# (tests/run-checks.sh, "# check: runs-private" in the suite's header), so a
# test that makes an unprivileged user reach into the tree fails here, not
# only on a user's machine (issue 22).
#
# A private mount namespace binds the checkout at PRIV/tree, PRIV being a
# fresh 0700 directory; SWIWARP_TOP and BUILD point there.  The guests of the
# lab see the same view, since QEMU runs inside the namespace.
set -uo pipefail
top=${SWIWARP_TOP:?}
build=${BUILD:-$top/build}
priv=$(mktemp -d /tmp/swiwarp-private.XXXXXX) || exit 1
chmod 0700 "$priv"
trap 'rmdir "$priv/tree" "$priv" 2>/dev/null' EXIT

if ! unshare -m --propagation private true 2>/dev/null; then
	echo "run-private: no mount namespaces here (unshare -m failed); running in place" >&2
	exec "$@"
fi

# BUILD may sit outside the checkout (BUILD=...): keep it relative if inside.
case $build in
"$top"/*) pbuild=$priv/tree/${build#"$top"/} ;;
*) pbuild=$build ;;
esac
mkdir "$priv/tree"
unshare -m --propagation private bash -c '
	priv=$1 top=$2 pbuild=$3
	shift 3
	mount --bind "$top" "$priv/tree" || exit 1
	# The point of it all: nobody cannot reach into the tree from here.
	if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$priv/tree" 2>/dev/null; then
		echo "FAIL: private-checkout.unreachable ($priv/tree is reachable by nobody)"
		exit 1
	fi
	echo "PASS: private-checkout.unreachable (running from $priv/tree, parent mode 0700)"
	cd "$priv/tree" || exit 1
	SWIWARP_TOP=$priv/tree BUILD=$pbuild exec "$@"
' run-private "$priv" "$top" "$pbuild" "$@"
