# shellcheck shell=bash
# The kernel verbs API test module (tests/kapi/swiwarp_kapi.c, issue 14
# item 4) in a lab guest: load the build for this guest's kernel, run every
# case on the guest's own address (a client and a server QP of this
# guest's RDMA device, connected through the kernel RDMA CM), turn the
# module's result lines into lab results kapi/TAG/CASE, unload.  Sourced by
# tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh.  Works on any RDMA
# device: suite 66 runs it on swiwarp (6.12 and 6.1) and on upstream siw.

kapi_dbg=/sys/kernel/debug/swiwarp_kapi

# kapi_check TAG: the whole run; the module's own lines land in
# $LAB_OUT/kapi-TAG.txt.
kapi_check() {
	local tag=$1 ko out=$LAB_OUT/kapi-$1.txt line rest n=0 t=$SECONDS
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
	if ! echo "$LAB_IP" >"$kapi_dbg/run"; then
		lab_fail "kapi/$tag/run" "the run file refused $LAB_IP $(lab_klog)"
	fi
	cat "$kapi_dbg/results" >"$out"
	while IFS= read -r line; do
		case $line in
		"PASS: "*) lab_pass "kapi/$tag/${line#PASS: }"; n=$((n + 1)) ;;
		"FAIL: "*)
			rest=${line#FAIL: }
			lab_fail "kapi/$tag/${rest%% *}" "$(echo "${rest#* }" | sed 's/^\[//; s/\]$//')"
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
