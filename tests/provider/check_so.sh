#!/usr/bin/env bash
# provider.so_symbols: the built provider imports the registration entry
# point under IBVERBS_PRIVATE_34, resolves every symbol (no undefined
# symbols outside libibverbs/libc), exports no symbols of its own, and
# links against libibverbs.so.1.
set -euo pipefail
so=${1:?usage: check_so.sh libswiwarp-rdmav34.so}
fail=0
syms=$(nm -D --with-symbol-versions "$so")
if ! grep -Eq ' U verbs_register_driver_34@IBVERBS_PRIVATE_34$' <<<"$syms"; then
	echo "missing import verbs_register_driver_34@IBVERBS_PRIVATE_34"; fail=1
fi
# every private import must be one the installed libibverbs exports
lib=$(ldconfig -p | awk '/libibverbs.so.1 .*x86-64/ && !n++ {print $NF}')
exports=$(nm -D --with-symbol-versions --defined-only "$lib" | awk '{print $3}' | sed 's/@@/@/')
while read -r s; do
	[ -z "$s" ] && continue
	if ! grep -qxF "$s" <<<"$exports"; then
		echo "import $s not exported by $lib"; fail=1
	fi
done < <(awk '$1 == "U" && $2 ~ /@IBVERBS_/ {print $2}' <<<"$syms")
# defined, exported symbols: none (registration is by constructor)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBRW]/ {print $3}')
if [ -n "$exported" ]; then
	echo "provider exports symbols: $exported"; fail=1
fi
# (capture first: grep -q closing the pipe early would fail under pipefail)
deps=$(ldd -r "$so" 2>&1)
if ! grep -q 'libibverbs.so.1 =>' <<<"$deps"; then
	echo "not linked against libibverbs.so.1"; fail=1
fi
if grep 'undefined symbol' <<<"$deps"; then
	fail=1
fi
n=$(awk '$1 == "U" && $2 ~ /@IBVERBS_PRIVATE_34/' <<<"$syms" | wc -l)
[ "$fail" -eq 0 ] && echo "ok: $n IBVERBS_PRIVATE_34 imports, no exports"
exit "$fail"
