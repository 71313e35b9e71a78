# shellcheck shell=bash
# The kernel verbs API test module (tests/kapi/swiwarp_kapi.c, issue 14
# item 4) in a lab guest: load the build for this guest's kernel, run every
# case on the guest's own address (a client and a server QP of this
# guest's RDMA device, connected through the kernel RDMA CM), turn the
# module's result lines into lab results kapi/TAG/CASE, unload.  Sourced by
# tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh.  Works on any RDMA
# device: suite 66 runs it on swiwarp (6.12 and 6.1) and on upstream siw.

kapi_dbg=/sys/kernel/debug/swiwarp_kapi

# Upstream siw's known limitation: it completes an RDMA Read that the
# responder refused with a Terminate (an invalidated rkey) with
# IB_WC_WR_FLUSH_ERR, not IB_WC_REM_ACCESS_ERR: siw_recv_terminate() in
# drivers/infiniband/sw/siw/siw_qp_rx.c (6.1) logs the Terminate and
# returns -ECONNRESET, and the QP's error state then flushes the Read
# with every other WR; no Terminate is ever turned into a completion
# status.  The Read still fails and places nothing (checked in every
# case); only this strict status case becomes a SKIP on siw, and only
# when the status it saw is the flush.
kapi_siw_flush="siw flushes a Read refused by the responder's Terminate (WR_FLUSH_ERR, not REM_ACCESS_ERR: siw_recv_terminate() returns -ECONNRESET, siw_qp_rx.c)"

# Upstream siw's other known limitation: siw_connect() binds the port
# rdma_cm chose with only SO_REUSEADDR (kernel_bindconnect() in
# drivers/infiniband/sw/siw/siw_cm.c), so it fails with EADDRINUSE while
# any TCP socket without it holds that port; rdma_cm does not look at
# TCP's ports when it chooses.  swiwarp forces the bind (robustness.md,
# known bug 6).  The module connects again and says so on a CLASH: line:
# a SKIP on siw, a FAIL on swiwarp.
kapi_siw_clash="siw's bind of rdma_cm's port clashed with a TCP socket (siw_cm.c kernel_bindconnect(), robustness.md known bug 6), connected again"

# kapi_fail_line "NAME [WHY]": one of the module's FAIL lines, under
# kapi/TAG/ (TAG of the kapi_check calling it), the brackets dropped.
kapi_fail_line() {
	lab_fail "kapi/$tag/${1%% *}" "$(echo "${1#* }" | sed 's/^\[//; s/\]$//')"
}
# kapi_known "NAME [WHY]" DRIVER REASON: a FAIL line that is a known
# deviation of DRIVER: a SKIP with REASON on DRIVER, a FAIL on any other.
kapi_known() {
	if [ "$drv" = "$2" ]; then lab_skip "kapi/$tag/${1%% *}" "$3; ${1#* }"
	else kapi_fail_line "$1"; fi
}

# Most cases start with the server QP sending (its RDMA Reads, Sends with
# Invalidate), on a fresh connection each.  A swiwarp responder in plain
# MPA v2 (its default) sends nothing until the initiator's first FPDU
# arrives or a second has passed (RFC 5044 7.1.2, SWIWARP_RESPONDER_HOLD_MS
# in kernel/swiwarp_cm.c): about 20 such seconds per run, twice on the
# critical path of suite 66.  So swiwarp runs the cases in peer-to-peer
# mode, whose RTR (a zero-length Write or Read from the initiator) ends the
# hold at once, and the kernel's own consumers' path is tested with RTR
# too (the ULPs of suite 66 run in the default mode).

# kapi_check TAG DRIVER: the whole run; the module's own lines land in
# $LAB_OUT/kapi-TAG.txt.
kapi_check() {
	local tag=$1 drv=$2 ko out=$LAB_OUT/kapi-$1.txt line rest n=0 t=$SECONDS t1
	if ! ko=$(_lab_ko_for_me "${KAPI_KO:-$BUILD/kernel/$(uname -r)/kapi/swiwarp_kapi.ko}"); then
		lab_fail "kapi/$tag/load" "swiwarp_kapi.ko not built for $(uname -r) (make kernel)"
		return 1
	fi
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	modprobe -a rdma_cm
	if ! insmod "$ko"; then
		lab_fail "kapi/$tag/load" "insmod $ko failed $(lab_klog)"
		return 1
	fi
	# The write returns when every case has run (each step times out in
	# the module, so this cannot hang on a lost completion).
	t1=$SECONDS
	[ "$drv" = swiwarp ] && lab_param peer_to_peer Y
	if ! echo "$LAB_IP" >"$kapi_dbg/run"; then
		lab_fail "kapi/$tag/run" "the run file refused $LAB_IP $(lab_klog)"
	fi
	[ "$drv" = swiwarp ] && lab_param_restore peer_to_peer
	echo "kapi $tag: the run took $((SECONDS - t1)) s"
	cat "$kapi_dbg/results" >"$out"
	while IFS= read -r line; do
		case $line in
		"PASS: "*) lab_pass "kapi/$tag/${line#PASS: }"; n=$((n + 1)) ;;
		"FAIL: stale-key/rem-access-err "*"WR flushed, not remote access error"*)
			kapi_known "${line#FAIL: }" siw "$kapi_siw_flush"
			n=$((n + 1))
			;;
		"CLASH: "*)
			kapi_known "${line#CLASH: }" siw "$kapi_siw_clash"
			;;
		"FAIL: "*)
			kapi_fail_line "${line#FAIL: }"
			n=$((n + 1))
			;;
		"SKIP: "*) rest=${line#SKIP: }; lab_skip "kapi/$tag/${rest%% *}" "${rest#* }"; n=$((n + 1)) ;;
		*) echo "kapi $tag: $line" ;;
		esac
	done <"$out"
	[ $n -gt 0 ] || lab_fail "kapi/$tag/results" "the module reported nothing $(lab_klog)"
	echo "kapi $tag: $n cases in $((SECONDS - t)) s"
	lab_check "kapi/$tag/unload" rmmod swiwarp_kapi
}
