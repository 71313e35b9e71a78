# shellcheck shell=bash
# siw compatibility (issue 14 item 5, Documentation/ulp.md "Scripts written
# for siw"): kernel/siw-compat.conf in /etc/modprobe.d plus swiwarp's
# siw_compat parameter, the way a host uses them: swiwarp.ko (and later the
# real upstream siw.ko) installed under /lib/modules/<release>/updates and
# found by modprobe after depmod, as DKMS would install them.  The guest's
# root is a throw-away overlay, so installing there touches nothing else.
# Sourced by tests/swiwarp/scenario.sh (pair mode, both guests, after
# swiwarp was unloaded); uses its mode, me and work.
# shellcheck disable=SC2154  # mode, me, work: set by scenario.sh

compat_conf=/etc/modprobe.d/swiwarp-siw-compat.conf
compat_param=/sys/module/swiwarp/parameters/siw_compat

# compat_is_swiwarp DEV: DEV exists and is a swiwarp device
compat_is_swiwarp() {
	[ "$(cat "/sys/class/infiniband/$1/node_desc" 2>/dev/null)" = "swiwarp software iWARP" ]
}

# compat_state: what is loaded and which RDMA devices exist, for FAIL reasons
compat_state() {
	local m
	for m in swiwarp siw; do [ -e "/sys/module/$m" ] && printf '%s loaded; ' "$m"; done
	[ -r "$compat_param" ] && printf 'siw_compat=%s; ' "$(cat "$compat_param")"
	printf 'devices: %s' "$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
}

# compat_expect NAME COND...: PASS NAME if the shell condition holds
compat_expect() {
	local name=$1
	shift
	if eval "$*"; then lab_pass "$mode/siw-compat-$name-$me"
	else lab_fail "$mode/siw-compat-$name-$me" "not ($*): $(compat_state) $(lab_klog)"; fi
}

# compat_clean: nothing of swiwarp or siw left (module or device)
compat_clean() {
	[ ! -e /sys/module/swiwarp ] && [ ! -e /sys/module/siw ] &&
		[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]
}

# compat_depmod KO...: make modprobe find KO... (installed under
# /lib/modules/<release>), as DKMS's depmod would; time in compat_depmod_s.
# A full depmod reads every module of the tree over 9p and took 248 s in a
# TCG guest, so this index holds only the modules loaded now, KO... and what
# they depend on: all that modprobe needs for the rest of this boot.
compat_depmod() {
	local t0 rc m p files=()
	t0=$(date +%s%N)
	for m in $({ awk '{ print $1 }' /proc/modules; modinfo -F depends "$@" | tr ',' '\n'; } | sort -u); do
		p=$(modinfo -n "$m" 2>/dev/null) && [ -f "$p" ] && files+=("$p")
	done
	depmod "$(uname -r)" "${files[@]}" "$@"
	rc=$?
	compat_depmod_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	echo "siw-compat: depmod of ${#files[@]} + $# modules took ${compat_depmod_s} s"
	return $rc
}

siw_compat_steps() {
	local rel upd ko siwko t0
	t0=$(date +%s)
	rel=$(uname -r)
	upd=/lib/modules/$rel/updates/swiwarp-lab
	if ! ko=$(_lab_ko_for_me ${SWIWARP_KO:-"$LAB_TOP/kernel/swiwarp.ko" \
		"$BUILD/kernel/$rel/kernel/swiwarp.ko" "$BUILD/kernel/swiwarp.ko"}); then
		lab_fail "$mode/siw-compat-setup-$me" "no swiwarp.ko for $rel"
		return
	fi
	mkdir -p "$upd" && install -m 0644 "$ko" "$upd/swiwarp.ko" && compat_depmod "$upd/swiwarp.ko" ||
		{ lab_fail "$mode/siw-compat-setup-$me" "install or depmod failed"; return; }
	compat_expect start compat_clean

	# (a) Off by default: no setting, no siw module, so the kernel's
	# request for rdma-link-siw finds nothing.
	rdma link add x type siw netdev eth0 2>/dev/null
	compat_expect off-by-default "[ $? -ne 0 ] && compat_clean"

	# (b) With the setting, modprobe siw brings up swiwarp in compatibility
	# mode, and type siw makes a swiwarp device that carries data.
	install -m 0644 "$LAB_TOP/kernel/siw-compat.conf" "$compat_conf"
	modprobe siw
	compat_expect modprobe "[ $? -eq 0 ] && [ ! -e /sys/module/siw ] && [ \"\$(cat $compat_param)\" = Y ]"
	rdma link add siw0 type siw netdev eth0
	compat_expect link-add "[ $? -eq 0 ] && compat_is_swiwarp siw0"
	lab_barrier siw-compat-up 150
	lab_rping_pair "$mode/siw-compat-rping" 1 2 5 64 7178 90

	# (c) rdma link delete and modprobe -r siw leave nothing behind.
	rdma link delete siw0
	compat_expect link-delete "[ $? -eq 0 ] && [ ! -e /sys/class/infiniband/siw0 ]"
	modprobe -r siw
	compat_expect modprobe-r "[ $? -eq 0 ] && compat_clean"

	# (d) Nothing loaded: rdma link add alone, through the kernel's
	# request_module("rdma-link-siw").
	rdma link add y type siw netdev eth0
	compat_expect autoload "[ $? -eq 0 ] && compat_is_swiwarp y && [ \"\$(cat $compat_param)\" = Y ]"
	rdma link delete y
	modprobe -r siw
	# A swiwarp loaded earlier without the parameter: the same line turns
	# it on at run time; modprobe -r siw then unloads it with its device.
	modprobe swiwarp
	compat_expect runtime-off "[ \"\$(cat $compat_param)\" = N ]"
	rdma link add z type siw netdev eth0
	compat_expect runtime-on "[ $? -eq 0 ] && compat_is_swiwarp z && [ \"\$(cat $compat_param)\" = Y ]"
	modprobe -r siw
	compat_expect modprobe-r-busy "[ $? -eq 0 ] && compat_clean"

	# (e) A real siw that modprobe can find is the one that loads.
	if ! siwko=$(_lab_ko_for_me ${SIW_KO:-"$BUILD/siw-$rel/siw.ko" "$BUILD/siw/siw.ko"}); then
		lab_skip "$mode/siw-compat-real-siw-$me" "no upstream siw.ko built for $rel (tests/lab/build-siw.sh)"
		return
	fi
	install -m 0644 "$siwko" "$upd/siw.ko" && compat_depmod "$upd/swiwarp.ko" "$upd/siw.ko" ||
		{ lab_fail "$mode/siw-compat-real-siw-setup-$me" "install or depmod failed"; return; }
	modprobe siw
	compat_expect real-siw-modprobe "[ $? -eq 0 ] && [ -e /sys/module/siw ] && [ ! -e /sys/module/swiwarp ]"
	rdma link add s type siw netdev eth0
	compat_expect real-siw-link-add "[ $? -eq 0 ] && [ -e /sys/class/infiniband/s ] && ! compat_is_swiwarp s"
	rdma link delete s
	modprobe -r siw
	compat_expect real-siw-modprobe-r "[ $? -eq 0 ] && compat_clean"

	# swiwarp holding type siw hands it to a siw loaded afterwards (no
	# WARN from rdma_link_register: the lab's dmesg scan fails on one) and
	# refuses to take it back while siw is loaded, at run time and at load.
	modprobe swiwarp siw_compat=1
	modprobe siw
	compat_expect handover "[ $? -eq 0 ] && [ -e /sys/module/siw ] && [ \"\$(cat $compat_param)\" = N ]"
	rdma link add s2 type siw netdev eth0
	compat_expect handover-link-add "[ $? -eq 0 ] && [ -e /sys/class/infiniband/s2 ] && ! compat_is_swiwarp s2"
	echo 1 2>/dev/null >"$compat_param"
	compat_expect refuse-runtime "[ $? -ne 0 ] && [ \"\$(cat $compat_param)\" = N ]"
	rmmod swiwarp && modprobe swiwarp siw_compat=1
	compat_expect refuse-load "[ $? -eq 0 ] && [ \"\$(cat $compat_param)\" = N ]"
	rdma link delete s2
	modprobe -r siw && rmmod swiwarp
	compat_expect end compat_clean
	rm -f "$compat_conf"
	echo "siw-compat: steps took $(($(date +%s) - t0)) s in guest $LAB_ID"
}
