#!/usr/bin/env bash
# Render Documentation/images/wireshark-swiwarp.png: the Wireshark GUI under
# Xvfb, with the swiwarp plugin, showing a capture with one frame selected.
#   tests/dissector/screenshot.sh [CAPTURE[.gz] [FRAME [OUT.png]]]
# Needs wireshark (Qt), xvfb and python3-matplotlib (tools/setup-host.sh).
# Everything runs as an unprivileged user: Wireshark ignores personal plugin
# folders when started as root.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
cap=${1:-$top/tests/dissector/captures/swiwarp_hello.pcap.gz}
frame=${2:-15}
out=${3:-$top/Documentation/images/wireshark-swiwarp.png}
plugin=$build/plugins/4.0/epan/swiwarp.so
[ -f "$plugin" ] || { echo "no plugin at $plugin (make all)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/swiwarp-shot.XXXXXX)
chmod 755 "$tmp"
home=$tmp/home
mkdir -p "$home/.local/lib/wireshark/plugins/4.0/epan" "$home/.config/wireshark" "$tmp/fb"
install -m 644 "$plugin" "$home/.local/lib/wireshark/plugins/4.0/epan/"
case $cap in
*.gz) zcat "$cap" >"$tmp/cap.pcap" && chmod 644 "$tmp/cap.pcap" ;;
*) install -m 644 "$cap" "$tmp/cap.pcap" ;;
esac
# Packet list on top, details below, no byte view.
cat >"$home/.config/wireshark/preferences" <<'PREFS'
gui.layout_type: 1
gui.layout_content_1: PLIST
gui.layout_content_2: PDETAILS
gui.layout_content_3: NONE
PREFS
# A full-screen main window with room for the details pane.
cat >"$home/.config/wireshark/recent_common" <<'RECENT'
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: 1280
gui.geometry_main_height: 900
gui.geometry_main_maximized: FALSE
gui.geometry_main_upper_pane: 260
RECENT
chown -R 65534:65534 "$tmp" 2>/dev/null || true
if [ "$(id -u)" -eq 0 ]; then
	runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
	runas=()
fi
disp=$((90 + RANDOM % 100))
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd / && exec "${runas[@]}" Xvfb ":$disp" -screen 0 1280x900x24 -fbdir "$tmp/fb" -nolisten tcp \
	>"$tmp/xvfb.log" 2>&1) &
pids+=($!)
sleep 3
(cd / && exec "${runas[@]}" env HOME="$home" DISPLAY=":$disp" XDG_RUNTIME_DIR="$tmp" \
	QT_QPA_PLATFORM=xcb wireshark -r "$tmp/cap.pcap" -g "$frame" -Y "${SHOT_FILTER:-mpa || rdmap}" \
	>"$tmp/ws.log" 2>&1) &
pids+=($!)
sleep "${SHOT_WAIT:-25}"
# Expand the RDMAP and MPA items of the details pane (bottom up, so the
# rows above keep their place): click each, then Shift+Right (Expand Subtrees).
# The positions fit the default font and the geometry above.
keys=${SHOT_KEYS:-click:200,597 shift+Right click:200,563 shift+Right}
if [ -n "$keys" ]; then
	(cd / && "${runas[@]}" env DISPLAY=":$disp" /usr/bin/python3 "$top/tests/dissector/xkeys.py" \
		$keys) || true
	sleep 3
fi
mkdir -p "$(dirname "$out")"
/usr/bin/python3 "$top/tests/dissector/xwd2png.py" "$tmp/fb/Xvfb_screen0" "$out"
echo "wrote $out"
