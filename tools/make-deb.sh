#!/usr/bin/env bash
# `make deb`: the Debian packages from debian/ (Documentation/packaging.md).
#   tools/make-deb.sh [OUTDIR]      (default $BUILD/deb, BUILD default build/)
# dpkg-buildpackage runs in a copy of the source tree that holds only what
# git tracks (plus new files not yet added, unless .gitignore'd), so the
# checkout's own build products (kernel/*.o, build/) never end up in the
# module source that swiwarp-dkms ships.  The .debs land in OUTDIR.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${BUILD:-$top/build}/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/src/swiwarp-$version

rm -rf "$out/src"
mkdir -p "$src"
# Tracked and untracked-but-not-ignored files as they are in the working
# tree (so uncommitted edits are packaged); files deleted but not yet
# committed are skipped.
git -C "$top" ls-files -z --cached --others --exclude-standard |
	(cd "$top" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
	tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -

rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
jobs=$(nproc)
log=$out/dpkg-buildpackage.log
echo "make deb: building swiwarp $version in $src (log: $log)"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc) >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "make deb: dpkg-buildpackage failed (full log: $log)" >&2
	exit 1
fi
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out"/
rm -rf "$out/src"
ls -1 "$out"/*.deb
