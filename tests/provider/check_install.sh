#!/usr/bin/env bash
# provider.install_layout: `cmake --install --prefix /usr` puts the provider
# where Debian's libibverbs looks for it and adds the driver file.
set -euo pipefail
build=${1:?usage: check_install.sh CMAKE_BINARY_DIR}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
DESTDIR=$d cmake --install "$build" --prefix /usr --component provider >"$d.log" 2>&1 ||
	{ cat "$d.log"; rm -f "$d.log"; exit 1; }
rm -f "$d.log"
fail=0
so=$d/usr/lib/x86_64-linux-gnu/libibverbs/libswiwarp-rdmav34.so
[ -f "$so" ] || { echo "missing $so"; fail=1; }
[ "$(cat "$d/etc/libibverbs.d/swiwarp.driver" 2>/dev/null)" = "driver swiwarp" ] ||
	{ echo "bad or missing /etc/libibverbs.d/swiwarp.driver"; fail=1; }
extra=$(cd "$d" && find . -type f | grep -v -e '^./usr/lib/x86_64-linux-gnu/libibverbs/libswiwarp-rdmav34.so$' \
	-e '^./etc/libibverbs.d/swiwarp.driver$' || true)
[ -z "$extra" ] || { echo "unexpected files: $extra"; fail=1; }
[ $fail -eq 0 ] && (cd "$d" && find . -type f)
exit $fail
