# shellcheck shell=bash
# Helpers for lab guest commands:  source "$LAB_TOP/tests/lab/lib.sh"
# See tests/lab/README.md for the full list.  Functions return non-zero on
# failure and say why on stderr; none of them exits the caller's shell.

: "${LAB_OUT:?lib.sh is meant for lab guests (LAB_OUT unset)}"

# --- results -------------------------------------------------------------
# Lines appended to $LAB_OUT/results are printed by `lab run` on the host.
LAB_FAILURES=0
lab_result() { echo "$*" | tee -a "$LAB_OUT/results"; }
# LAB_RESULT_PREFIX (e.g. "k612/") goes in front of every test name, so a
# suite can run another suite's scenario (on another kernel, say) under
# names of its own.
lab_pass() { lab_result "PASS: ${LAB_RESULT_PREFIX:-}$1"; }
lab_fail() { LAB_FAILURES=$((LAB_FAILURES + 1)); lab_result "FAIL: ${LAB_RESULT_PREFIX:-}$1${2:+ [$2]}"; }
lab_skip() { lab_result "SKIP: ${LAB_RESULT_PREFIX:-}$1 ${2:-}"; }
# lab_verdict NAME WHY: PASS NAME when WHY (what went wrong) is empty,
# else FAIL NAME [WHY].
lab_verdict() { if [ -z "$2" ]; then lab_pass "$1"; else lab_fail "$1" "$2"; fi; }
# lab_check NAME CMD...: run CMD, PASS or FAIL NAME on its exit status.
lab_check() {
	local name=$1 rc
	shift
	"$@"
	rc=$?
	if [ $rc -eq 0 ]; then lab_pass "$name"; else lab_fail "$name" "exit $rc: $*"; fi
	return $rc
}

# lab_klog [N]: the last N (default 2) kernel messages of swiwarp and siw
# other than their load banners, on one line, for a FAIL reason: CI shows
# only the result lines, and why a connection went down (a Terminate, an
# RX error, an MPA timeout) is in the guest's kernel log.
lab_klog() {
	local l
	l=$(dmesg 2>/dev/null | grep -E '(swiwarp|siw)[: ]' |
		grep -vE 'taints kernel|verification failed|MPA CRC with|loaded \(ABI|siw: device registered' |
		tail -n "${1:-2}" | sed 's/^\[ *[0-9.]*\] //' | tr '\n' ' ' | cut -c1-300)
	echo "kernel: ${l:-nothing from swiwarp/siw}"
}

# lab_finish: exit 1 if any lab_fail was reported in this shell, else 0.
lab_finish() { [ "$LAB_FAILURES" -eq 0 ]; exit $?; }

# --- synchronisation -----------------------------------------------------
# The TIMEOUTs of the waits below and of lab_pair's commands are given for
# Debian's kernels; they stretch by $LAB_SLOWDOWN, which tests/lab/lab sets
# (LAB_DEBUG_SLOWDOWN, 4, on a KASAN debug kernel; 1 otherwise), as the
# verbs test programs' waits do (lab_scaled_ms() in tests/robust/lab-verbs.h).
# lab_nap SECONDS: sleep without starting a process: read, with a timeout,
# from a pipe that nobody writes (both of its ends are ours, on one fd).
exec {_lab_nap_fd}<> <(:)
lab_nap() { read -r -t "$1" -u "$_lab_nap_fd" _; }

# lab_wait_until TIMEOUT CMD [ARG...]: run CMD every 0.2 s until it
# succeeds; 0 then.  CMD's exit status 3 or more stops the wait at once
# with that status (a predicate that found something wrong, not something
# missing); 1 and 2 (grep's "no such file" too) mean "not yet".  1 after
# TIMEOUT seconds.  CMD's output passes through, so a predicate can print
# what it found.  Every wait-until loop of the lab goes through here: one
# poll step, one LAB_SLOWDOWN stretch, and no process started between
# polls (lab_nap) unless CMD starts one.
lab_wait_until() {
	local end=$((SECONDS + $1 * ${LAB_SLOWDOWN:-1})) rc
	shift
	while :; do
		"$@"
		rc=$?
		[ $rc -eq 0 ] || [ $rc -ge 3 ] && return $rc
		[ $SECONDS -lt $end ] || return 1
		lab_nap 0.2
	done
}

# lab_not CMD [ARG...]: CMD's status inverted (0 if CMD failed, else 1),
# its output discarded; for waits on something to end, e.g.
# `lab_wait_until 5 lab_not pgrep -x iscsid`.
lab_not() { ! "$@" >/dev/null 2>&1; }

# lab_tcp_quiet [SS-FILTER...]: true when no TCP socket here (of those
# matching the ss filter) is in a state but TIME-WAIT, the state a closed
# connection keeps for a minute; for `lab_wait_until T lab_tcp_quiet`.
lab_tcp_quiet() { ! ss -Htan "$@" | grep -qv TIME-WAIT; }

# lab_wait_tcp IP PORT [TIMEOUT]: wait until a TCP connect to IP:PORT works.
# (Don't aim it at an iWARP listener: the connection would look like an
# MPA peer that never speaks.  Use lab_wait_listen on the server side and
# lab_barrier instead.)
lab_wait_tcp() {
	lab_wait_until "${3:-60}" _lab_tcp_accepts "$1" "$2" && return 0
	echo "lab_wait_tcp: nothing accepted on $1:$2 within $((${3:-60} * ${LAB_SLOWDOWN:-1}))s" >&2
	return 1
}
_lab_tcp_accepts() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null || return 1; }

# lab_wait_listen PORT [TIMEOUT]: wait until something here (a user or a
# kernel socket, e.g. an iWARP listener) listens on TCP PORT.  Reads
# /proc/net/tcp{,6} with builtins (state 0A is LISTEN; the local port is
# the hex after the colon): no fork per poll, as in lab_barrier.
lab_wait_listen() {
	local hex
	printf -v hex '%04X' "$1"
	lab_wait_until "${2:-60}" _lab_listens "$hex" && return 0
	echo "lab_wait_listen: nothing listens on port $1 within $((${2:-60} * ${LAB_SLOWDOWN:-1}))s" >&2
	return 1
}
_lab_listens() { # HEXPORT
	local f _sl laddr _rem st _rest
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		while read -r _sl laddr _rem st _rest; do
			[ "$st" = 0A ] && [ "${laddr##*:}" = "$1" ] && return 0
		done <"$f"
	done
	return 1
}

# lab_wait_output FILE PATTERN PID [TIMEOUT=120]: wait until FILE (the
# output of background process PID) has a line matching PATTERN (grep -E),
# PID has exited, or TIMEOUT seconds have passed.  0 if the line is there.
lab_wait_output() {
	lab_wait_until "${4:-120}" _lab_output_seen "$1" "$2" "$3"
	grep -Eqs -- "$2" "$1"
}
_lab_output_seen() { # FILE PATTERN PID
	grep -Eqs -- "$2" "$1" && return 0
	kill -0 "$3" 2>/dev/null && return 1
	return 3
}

# lab_barrier NAME [TIMEOUT=600]: returns once all $LAB_N guests have called
# lab_barrier NAME (through files in the shared, uncached 9p directory).
# The wait forks nothing (a glob, lab_nap): a guest waiting here for its
# peer would otherwise spend its CPU starting find, wc and sleep five
# times a second (~0.15 s per fork in a busy TCG guest), CPU that the
# peer, on the same two host cores, needs to get there.
lab_barrier() {
	local name=$1 t=$((${2:-600} * ${LAB_SLOWDOWN:-1})) n arrived
	[[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "lab_barrier: bad name '$name'" >&2; return 2; }
	: >"$LAB_SHARED/barrier.$name.$LAB_ID"
	lab_wait_until "${2:-600}" _lab_all_arrived "$name" && return 0
	arrived=("$LAB_SHARED/barrier.$name".*)
	n=${#arrived[@]}
	local i missing=
	for ((i = 1; i <= LAB_N; i++)); do
		[ -e "$LAB_SHARED/barrier.$name.$i" ] || missing="$missing g$i"
	done
	# LAB_BARRIER_WHY: for the caller's FAIL line.
	LAB_BARRIER_WHY="'$name' timed out after ${t}s ($n of $LAB_N guests arrived; missing:$missing)"
	echo "lab_barrier: $LAB_BARRIER_WHY" >&2
	return 1
}
_lab_all_arrived() { # NAME
	local arrived=("$LAB_SHARED/barrier.$1".*)
	[ ${#arrived[@]} -ge "$LAB_N" ]
}

# lab_pair TAG SERVER_ID CLIENT_ID TIMEOUT PORT SOUT COUT -- SERVER_CMD... -- CLIENT_CMD...
# One server/client exchange between two guests of the run (TAG names
# barriers and files in $LAB_SHARED: unique within the run).  Guest
# SERVER_ID starts SERVER_CMD in the background and waits (up to
# $LAB_PAIR_LISTEN, default 60 s) until something listens on TCP PORT;
# after barrier TAG-listen guest CLIENT_ID runs CLIENT_CMD; all guests meet
# at TAG-done (guests that are neither only take part in the barriers).
# Both commands run under `timeout TIMEOUT`; stdout goes to SOUT.log /
# COUT.log, stderr to SOUT.err / COUT.err.  LAB_PAIR_END_SERVER=1: the
# server is killed once the client is done (a server whose client was
# refused would wait for ever).  Afterwards every guest has the exit
# statuses in lab_rc_s and lab_rc_c, and lab_pair_note is empty or says the
# pair was retried.
#
# The one retry: perftest (ib_*_bw, ib_*_lat) calibrates the CPU clock at
# start with a linear fit of TSC against gettimeofday samples; a TCG vCPU
# preempted between two samples spoils the fit ("Correlation coefficient
# r^2: 0.83 < 0.9"), and perftest then exits 1 after a complete transfer
# ("Can't produce a report"), its peer seeing the final handshake flushed.
# Nothing is wrong with the RDMA device then, so when a side has that line
# in its output and did not time out, the pair runs once more under
# barrier names TAG.try2-*; the first attempt's logs are kept as *.try1.  Any
# other failure, and a failure of the second attempt, is the caller's to
# report as it is.
# shellcheck disable=SC2034  # lab_rc_s, lab_rc_c: for the caller
lab_pair() {
	local tag=$1 sid=$2 cid=$3 t=$4 port=$5 sout=$6 cout=$7 scmd=() ccmd=()
	local pid a=1 b rc f l ts=$(($4 * ${LAB_SLOWDOWN:-1}))
	shift 7
	[ "${1:-}" = -- ] || { echo "lab_pair: usage: TAG SID CID TIMEOUT PORT SOUT COUT -- SERVER_CMD -- CLIENT_CMD" >&2; return 2; }
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	lab_pair_note=
	while :; do
		b=$tag
		if [ $a -gt 1 ]; then b=$tag.try$a; fi
		if [ "$LAB_ID" = "$sid" ]; then
			timeout "$ts" "${scmd[@]}" >"$sout.log" 2>"$sout.err" &
			pid=$!
			lab_wait_listen "$port" "${LAB_PAIR_LISTEN:-60}" || true
		fi
		lab_barrier "$b-listen" 600
		if [ "$LAB_ID" = "$cid" ]; then
			timeout "$ts" "${ccmd[@]}" >"$cout.log" 2>"$cout.err"
			rc=$?
			echo $rc >"$LAB_SHARED/pair.$b.rc_c"
			_lab_pair_calib "$b" $rc "$cout"
		fi
		if [ "${LAB_PAIR_END_SERVER:-0}" = 1 ]; then lab_barrier "$b-cdone" $((t + 300)); fi
		if [ "$LAB_ID" = "$sid" ]; then
			if [ "${LAB_PAIR_END_SERVER:-0}" = 1 ]; then kill "$pid" 2>/dev/null; fi
			wait "$pid"
			rc=$?
			echo $rc >"$LAB_SHARED/pair.$b.rc_s"
			_lab_pair_calib "$b" $rc "$sout"
		fi
		lab_barrier "$b-done" $((t + 300))
		# Builtins only (read, a glob): a fork costs ~0.15 s in a busy
		# TCG guest, and this runs after every pair.
		lab_rc_s=missing lab_rc_c=missing l=
		read -r lab_rc_s 2>/dev/null <"$LAB_SHARED/pair.$b.rc_s"
		read -r lab_rc_c 2>/dev/null <"$LAB_SHARED/pair.$b.rc_c"
		# Every guest reads the same flag files after the same barrier,
		# so all of them decide the same way.
		if [ $a -gt 1 ]; then break; fi
		for f in "$LAB_SHARED/pair.$b.calib".*; do
			[ -e "$f" ] && read -r l <"$f"
			break
		done
		if [ -z "$l" ]; then break; fi
		lab_pair_note="retried after perftest clock calibration failure ($l)"
		echo "lab_pair $tag: $lab_pair_note"
		for f in log err; do
			if [ "$LAB_ID" = "$sid" ]; then mv -f "$sout.$f" "$sout.$f.try1"; fi
			if [ "$LAB_ID" = "$cid" ]; then mv -f "$cout.$f" "$cout.$f.try1"; fi
		done
		a=2
	done
}

# _lab_pair_calib B RC OUT: flag attempt B for a retry if OUT.log or
# OUT.err has perftest's clock calibration complaint and this side did not
# time out (124: a hang, not a calibration).  Whatever the exit status:
# ib_read_bw has also exited 0 after the complaint, reporting 0.000000
# Gb/s (suite 63, 25 Nov), which the caller's bandwidth check then failed.
# The flag holds "r^2 VALUE < 0.9 on gID" for the result line.
_lab_pair_calib() {
	local b=$1 rc=$2 l
	if [ "$rc" = 124 ]; then return 0; fi
	# No pipe: under a caller's pipefail, grep -m 1 stopping early would
	# fail the pipe with cat's SIGPIPE.
	l=$(grep -h -s -F -m 1 'Correlation coefficient r^2' "$3.log" "$3.err") || return 0
	l=${l%%$'\n'*}
	echo "r^2 ${l##*r^2: } on g$LAB_ID" >"$LAB_SHARED/pair.$b.calib.$LAB_ID"
}

# lab_rping_log_why LOG COUNT SIZE PREFIX: why rping -v's LOG is wrong, or
# nothing: the lines after PREFIX ("ping data: " on the client, "server ping
# data: " on the server) are COUNT pings in order, ping K being SIZE-1
# bytes: "rdma-ping-K: " and letters cycling through ASCII 65..122 from
# 65 + K mod 58; and no line says "error" or "mismatch".
lab_rping_log_why() {
	awk -v n="$2" -v sz="$3" -v pre="$4" '
		BEGIN { for (i = 0; i < 58; i++) chr[i] = sprintf("%c", 65 + i) }
		tolower($0) ~ /error|mismatch/ { print "rping said: " $0; bad = 1; exit }
		index($0, pre) == 1 {
			s = substr($0, length(pre) + 1)
			h = "rdma-ping-" k + 0 ": "
			if (index(s, h) != 1) { print "ping " k + 0 " missing or out of order"; bad = 1; exit }
			if (length(s) != sz - 1) { print "ping " k + 0 ": " length(s) + 1 " bytes, want " sz; bad = 1; exit }
			body = substr(s, length(h) + 1)
			c = k % 58
			for (i = 1; i <= length(body); i++) {
				if (substr(body, i, 1) != chr[c]) {
					print "ping " k + 0 ": byte " length(h) + i - 1 " is \"" substr(body, i, 1) "\", want \"" chr[c] "\""
					bad = 1; exit
				}
				c = (c + 1) % 58
			}
			k++
		}
		END { if (!bad && k != n) print "saw " k + 0 " pings, want " n }' "$1"
}

# lab_rping_verdict NAME OUT RC COUNT SIZE PREFIX: PASS or FAIL NAME for
# one side of an rping -v exchange whose stdout is OUT.log and stderr
# OUT.err (kept apart: rping's DISCONNECT message would otherwise land in
# the middle of a long ping line) and exit status RC: RC 0, nothing about
# an error on stderr, and lab_rping_log_why content with it.
lab_rping_verdict() {
	local why
	if [ "$3" -ne 0 ]; then
		why="rping exited $3: $(cat "$2.err" "$2.log" 2>/dev/null | grep -v 'ping data' | tail -n 2 | tr '\n' ' ' | cut -c1-160)"
	elif grep -qiE 'mismatch|error' "$2.err" 2>/dev/null; then
		why="rping said: $(grep -m 1 -iE 'mismatch|error' "$2.err")"
	else
		why=$(lab_rping_log_why "$2.log" "$4" "$5" "$6")
	fi
	lab_verdict "$1" "${why:+$why; $(lab_klog 2)}"
}

# lab_rping_pair NAME SERVER_ID CLIENT_ID COUNT SIZE PORT [TIMEOUT=120]:
# rping -v between two guests through lab_pair (the client also checks
# every ping itself, -V; TIMEOUT is also the server's time to listen), logs in $LAB_OUT/rping.TAG-[sc].{log,err} (TAG:
# NAME with / as .); the client reports NAME-client-gN, the server
# NAME-server-gN (lab_rping_verdict).
lab_rping_pair() {
	local name=$1 sid=$2 cid=$3 n=$4 sz=$5 port=$6 t=${7:-120} tag out
	local args=(-a "192.0.2.$2" -C "$4" -S "$5" -v -p "$6")
	tag=${name//\//.}
	out=$LAB_OUT/rping.$tag
	LAB_PAIR_LISTEN=${LAB_PAIR_LISTEN:-$t} lab_pair "$tag" "$sid" "$cid" "$t" "$port" "$out-s" "$out-c" -- \
		rping -s "${args[@]}" -- rping -c "${args[@]}" -V
	[ "$LAB_ID" = "$cid" ] && lab_rping_verdict "$name-client-g$LAB_ID" "$out-c" "$lab_rc_c" "$n" "$sz" "ping data: "
	[ "$LAB_ID" = "$sid" ] && lab_rping_verdict "$name-server-g$LAB_ID" "$out-s" "$lab_rc_s" "$n" "$sz" "server ping data: "
	return 0
}

# lab_perf_pair NAME SERVER_ID CLIENT_ID TIMEOUT PORT ROW TOOL ARGS...:
# unmodified perftest TOOL ARGS -p PORT between two guests through lab_pair
# (the client also gets the server's address), logs in
# $LAB_OUT/perf.TAG-[sc].{log,err} (TAG: NAME with / as .).  The server
# reports NAME-server-gN on its exit status; the client NAME-client-gN on
# its exit status and its result row: the awk program ROW prints the row's
# value (an average, say) when the row is there and good, which the PASS
# shows and lab_perf_value keeps.
# shellcheck disable=SC2034  # lab_perf_value: for the caller
lab_perf_pair() {
	local name=$1 sid=$2 cid=$3 t=$4 port=$5 row=$6 tool=$7 tag out note
	shift 7
	tag=${name//\//.}
	out=$LAB_OUT/perf.$tag
	lab_pair "$tag" "$sid" "$cid" "$t" "$port" "$out-s" "$out-c" -- \
		"$tool" "$@" -p "$port" -- "$tool" "$@" -p "$port" "192.0.2.$sid"
	note=${lab_pair_note:+ ($lab_pair_note)} lab_perf_value=
	if [ "$LAB_ID" = "$cid" ]; then
		lab_perf_value=$(awk "$row" "$out-c.log")
		if [ "$lab_rc_c" = 0 ] && [ -n "$lab_perf_value" ]; then
			lab_pass "$name-client-g$LAB_ID$note"
			echo "$tool: $lab_perf_value (TCG guest, not a benchmark)"
		else
			lab_fail "$name-client-g$LAB_ID" "exit $lab_rc_c, no good result row: $(cat "$out-c.log" "$out-c.err" | tail -n 3 | tr '\n' ' ' | cut -c1-160); $(lab_klog 2)$note"
		fi
	fi
	if [ "$LAB_ID" = "$sid" ]; then
		if [ "$lab_rc_s" = 0 ]; then
			lab_pass "$name-server-g$LAB_ID$note"
		else
			lab_fail "$name-server-g$LAB_ID" "exit $lab_rc_s: $(cat "$out-s.log" "$out-s.err" | tail -n 3 | tr '\n' ' ' | cut -c1-160); $(lab_klog 2)$note"
		fi
	fi
	return 0
}

# lab_cable NIC up|down [TIMEOUT=30]: plug or pull the cable of this
# guest's NIC (eth0, or eth1 with lab run --nics 2).  The host's lab run
# does it (serve_cables in tests/lab/lab) with QEMU's set_link: the NIC
# loses or regains its carrier as with a real cable, which is what a bond's
# miimon watches.  With two guests the cable joins both, so both ends go;
# with one or three and more, only this guest's NIC.  Returns once the host
# has done it (the guests' carrier follows within a moment; wait for what
# you need to see); non-zero with the reason on stderr otherwise.
lab_cable() {
	local nic=$1 state=$2 t=${3:-30} id ans end
	_lab_cable_seq=$((${_lab_cable_seq:-0} + 1))
	id=$LAB_ID.$_lab_cable_seq
	echo "$nic $state" >"$LAB_SHARED/.cable.req.$id" &&
		mv -f "$LAB_SHARED/.cable.req.$id" "$LAB_SHARED/cable.req.$id" || return 1
	end=$((SECONDS + t))
	while [ ! -e "$LAB_SHARED/cable.done.$id" ]; do
		if [ $SECONDS -ge "$end" ]; then
			echo "lab_cable $nic $state: no answer from the host within ${t}s" >&2
			return 1
		fi
		lab_nap 0.2
	done
	read -r ans <"$LAB_SHARED/cable.done.$id"
	[ "$ans" = ok ] && return 0
	echo "lab_cable $nic $state: $ans" >&2
	return 1
}

# --- RDMA devices ----------------------------------------------------------
# Each loader makes one device on eth0 (or on $2 / the netdev given) and
# waits until it shows up in `rdma link`.  They return 2 when the driver is
# not available at all (not built), so callers can SKIP rather than FAIL.

_lab_rdma_link_add() { # name type netdev
	local name=$1 type=$2 dev=$3
	rdma link add "$name" type "$type" netdev "$dev" || {
		echo "lab: rdma link add $name type $type netdev $dev failed" >&2
		return 1
	}
	lab_wait_until 5 test -e "/sys/class/infiniband/$name" && return 0
	echo "lab: $name did not appear in /sys/class/infiniband" >&2
	return 1
}

# _lab_ko_for_me KO...: the first KO built for the running kernel (its
# vermagic starts with `uname -r`), or nothing.  Modules for every installed
# kernel sit side by side (kernel/Makefile, build-siw.sh); a guest of a mixed
# pair must load the ones built for its own kernel.
_lab_ko_for_me() {
	local k rel
	rel=$(uname -r)
	for k in "$@"; do
		[ -n "$k" ] && [ -f "$k" ] || continue
		modinfo -F vermagic "$k" 2>/dev/null | grep -q "^$rel " && { echo "$k"; return 0; }
	done
	return 1
}

# lab_load_siw [NETDEV] [NAME]: upstream siw, built out of tree on the host
# by tests/lab/build-siw.sh (lab run does that) into $BUILD/siw/siw.ko for
# the lab's default kernel and $BUILD/siw-<release>/siw.ko for the others;
# SIW_KO overrides (it must be built for this guest's kernel).
lab_load_siw() {
	local dev=${1:-eth0} name=${2:-siw0} ko
	if [ ! -e /sys/module/siw ]; then
		if ! ko=$(_lab_ko_for_me ${SIW_KO:-"$BUILD/siw-$(uname -r)/siw.ko" "$BUILD/siw/siw.ko"}); then
			echo "lab_load_siw: ${SIW_KO:-siw.ko} not built for $(uname -r) (tests/lab/build-siw.sh)" >&2
			return 2
		fi
		modprobe -a libcrc32c crc32c_generic ib_core iw_cm ib_uverbs >/dev/null 2>&1
		insmod "$ko" || { echo "lab_load_siw: insmod $ko failed" >&2; return 1; }
	fi
	_lab_rdma_link_add "$name" siw "$dev"
}

# lab_load_rxe [NETDEV] [NAME]: Soft-RoCE from Debian's kernel.
lab_load_rxe() {
	local dev=${1:-eth0} name=${2:-rxe0}
	modprobe rdma_rxe || { echo "lab_load_rxe: modprobe rdma_rxe failed" >&2; return 2; }
	_lab_rdma_link_add "$name" rxe "$dev"
}

# lab_load_swiwarp [NETDEV] [NAME]: our module and our libibverbs provider.
lab_load_swiwarp() {
	local dev=${1:-eth0} name=${2:-swiwarp0} ko so drv rel
	rel=$(uname -r)
	# kernel/swiwarp.ko is built for the default kernel, the others in
	# $BUILD/kernel/<release>/kernel/ (kernel/Makefile); SWIWARP_KO overrides.
	if ! ko=$(_lab_ko_for_me ${SWIWARP_KO:-"$LAB_TOP/kernel/swiwarp.ko" \
		"$BUILD/kernel/$rel/kernel/swiwarp.ko" "$BUILD/kernel/swiwarp.ko"}); then
		echo "lab_load_swiwarp: ${SWIWARP_KO:-swiwarp.ko} not built for $rel (make kernel)" >&2
		return 2
	fi
	if [ ! -e /sys/module/swiwarp ]; then
		modprobe -a libcrc32c crc32c_generic ib_core iw_cm ib_uverbs >/dev/null 2>&1
		insmod "$ko" ${SWIWARP_MODPARAMS:-} || { echo "lab_load_swiwarp: insmod $ko failed" >&2; return 1; }
	fi
	# The provider: libibverbs reads /etc/libibverbs.d/*.driver ("driver
	# NAME") and dlopens libNAME-rdmav34.so from its provider directory.  The
	# guest root is a throw-away overlay, so we can install it in place.
	so=$BUILD/userspace/provider/libswiwarp-rdmav34.so
	if [ -f "$so" ]; then
		drv=/usr/lib/x86_64-linux-gnu/libibverbs
		mkdir -p "$drv" /etc/libibverbs.d
		# A copy, not a link: the checkout may sit in a private (0700)
		# directory that an unprivileged test user cannot traverse.
		install -m 0644 "$so" "$drv/libswiwarp-rdmav34.so"
		echo "driver swiwarp" >/etc/libibverbs.d/swiwarp.driver
	else
		echo "lab_load_swiwarp: no provider at $so; verbs programs will not find swiwarp" >&2
	fi
	_lab_rdma_link_add "$name" swiwarp "$dev"
}

# lab_load_or_finish DRIVER NAME [BARRIER_TIMEOUT=600]: load DRIVER (siw,
# rxe or swiwarp, on eth0, as swiwarp0); if that fails, FAIL NAME, meet the
# other guests at barrier "loaded" (where they wait after loading theirs)
# and end this guest's part of the run.
lab_load_or_finish() {
	local rc
	case $1 in
	siw) lab_load_siw ;;
	rxe) lab_load_rxe ;;
	*) lab_load_swiwarp eth0 swiwarp0 ;;
	esac
	rc=$?
	[ $rc -eq 0 ] && return 0
	lab_fail "$2" "loader returned $rc"
	lab_barrier loaded "${3:-600}"
	lab_finish
}

# lab_world_copy FILE: print the path of a world-readable copy of FILE in
# the guest's own filesystem.  Tests that drop privileges run that copy: the
# checkout (and its build tree) may live under a private 0700 directory, such
# as a Debian home, which an unprivileged user cannot traverse.
lab_world_copy() {
	local dir=/run/lab-world
	mkdir -p "$dir" && chmod 0755 "$dir" &&
		install -m 0755 "$1" "$dir/$(basename "$1")" && echo "$dir/$(basename "$1")"
}

# lab_verbs_up DEV NAME [BIN...]: the common start of a verbs test guest:
# every BIN must be executable, then DEV (swiwarp, loaded with
# $SWIWARP_MODPARAMS if set, or siw) comes up as DEV0 on eth0.  A missing
# program or a module not built for this kernel: guest 1 reports "SKIP:
# NAME.all (why)" (once for the whole run).  A module that is there but does
# not load, or a link that cannot be added, is a failure of what we test:
# "FAIL: NAME.up.gN".  Either way it returns 1: the caller then exits 0,
# there is nothing to test.
lab_verbs_up() {
	local dev=$1 name=$2 f rc
	shift 2
	for f in "$@"; do
		[ -x "$f" ] && continue
		[ "$LAB_ID" = 1 ] && lab_skip "$name.all" "(not built: $f)"
		return 1
	done
	if [ "$dev" = siw ]; then
		lab_load_siw eth0 siw0
	else
		lab_load_swiwarp eth0 swiwarp0
	fi
	rc=$?
	[ $rc -eq 0 ] && return 0
	if [ $rc -eq 2 ]; then
		[ "$LAB_ID" = 1 ] && lab_skip "$name.all" "($dev not available for $(uname -r))"
	else
		lab_fail "$name.up.g$LAB_ID" "$dev did not come up (rc $rc; the guest's console log says why)"
	fi
	return 1
}

# Egress delays and loss.  lab_delay_egress, lab_delay_connect,
# lab_delay_syn and lab_loss_egress compose: each keeps its setting in
# /run/lab-delay.DEV.{egress,connect,syn,loss} and rebuilds one tree
#   root 1: prio, 5 bands; the priomap only uses bands 1:1..1:3
#     1:1, 1:2, 1:3  netem EGRESS ms, LOSS %  (every other frame)
#     1:4            netem EGRESS+CONNECT+SYN, LOSS  (u32 filter: TCP SYN,
#                    no ACK)
#     1:5            netem EGRESS+CONNECT, LOSS  (fw filter: the mark that
#                    nft's table inet lab_delay puts on the first
#                    $lab_connect_frames frames of each TCP connection)
# Bands with neither delay nor loss get no netem (prio's default pfifo).
# Check it in a guest with `tc -s qdisc show dev eth0`, `tc filter show
# dev eth0` and `nft list ruleset`.
lab_connect_frames=20
lab_connect_mark=0x1ab
_lab_delay_apply() { # DEV
	local dev=$1 eg syn conn loss b st=/run/lab-delay.$1 lossarg=()
	eg=$(cat "$st.egress" 2>/dev/null || echo 0)
	conn=$(cat "$st.connect" 2>/dev/null || echo 0)
	syn=$(cat "$st.syn" 2>/dev/null || echo 0)
	loss=$(cat "$st.loss" 2>/dev/null || echo 0)
	[ "$loss" != 0 ] && lossarg=(loss "$loss%")
	modprobe -a sch_prio sch_netem cls_u32 cls_fw || return 1
	tc qdisc del dev "$dev" root 2>/dev/null
	tc qdisc add dev "$dev" root handle 1: prio bands 5 \
		priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 || return 1
	if [ "$eg" -gt 0 ] || [ "$loss" != 0 ]; then
		for b in 1 2 3; do
			tc qdisc add dev "$dev" parent 1:$b handle ${b}0: netem \
				delay "${eg}ms" "${lossarg[@]}" limit 100000 || return 1
		done
	fi
	_lab_delay_connect_rule "$dev" "$conn" || return 1
	if [ "$conn" -gt 0 ]; then
		tc qdisc add dev "$dev" parent 1:5 handle 50: netem \
			delay "$((eg + conn))ms" "${lossarg[@]}" limit 100000 || return 1
		tc filter add dev "$dev" parent 1: protocol ip prio 2 \
			handle "$lab_connect_mark" fw flowid 1:5 || return 1
	fi
	[ "$syn" -gt 0 ] || return 0
	tc qdisc add dev "$dev" parent 1:4 handle 40: netem \
		delay "$((eg + conn + syn))ms" "${lossarg[@]}" limit 100000 || return 1
	# IPv4 without options: the TCP flags are octet 33 of the packet;
	# SYN set, ACK clear (a SYN-ACK is not delayed).
	tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
		match ip protocol 6 0xff match u8 0x02 0x12 at 33 flowid 1:4
}

# _lab_delay_connect_rule DEV MS: with MS > 0, nft marks the frames DEV
# sends while their TCP connection has carried at most
# $lab_connect_frames frames (both directions, conntrack's accounting);
# with 0 the rule goes.  One chain per DEV in table inet lab_delay.
_lab_delay_connect_rule() {
	local dev=$1 ms=$2 chain=out_$1
	nft delete chain inet lab_delay "$chain" 2>/dev/null
	[ "$ms" -gt 0 ] || return 0
	modprobe -a nf_conntrack nft_ct nf_tables || return 1
	# Counted only for connections made after this: set before any.
	sysctl -qw net.netfilter.nf_conntrack_acct=1 || return 1
	nft -f - <<-EOF
		table inet lab_delay {
			chain $chain {
				type filter hook output priority 0; policy accept;
				oifname "$dev" meta l4proto tcp ct packets <= $lab_connect_frames counter meta mark set $lab_connect_mark
			}
		}
	EOF
}

# _lab_delay_set KIND VALUE [NETDEV=eth0]: record one of NETDEV's netem
# and nft settings (egress, connect, syn, loss) and apply them all.
_lab_delay_set() {
	echo "$2" >"/run/lab-delay.${3:-eth0}.$1" && _lab_delay_apply "${3:-eth0}"
}

# lab_delay_egress MS [NETDEV]: delay every frame this guest sends by MS ms
# (netem), to test what a slow or distant peer does.
lab_delay_egress() { _lab_delay_set egress "$@"; }

# lab_delay_connect MS [NETDEV]: delay the frames this guest sends by MS ms
# while their TCP connection is young (its first $lab_connect_frames
# frames, counted both ways), and no others.  For every guest that opens
# connections to upstream siw: siw (6.1) has a race on the passive side of
# a connection.  It sends the MPA Reply and only then hands the socket's
# data_ready upcall to the QP, and an FPDU that lands in between is left
# unread in the socket, so the connection hangs.  On slow TCG guests a
# client's first Send often lands there.  Delaying the client's first
# frames keeps them out of that window; its first FPDU is at most the
# eighth frame of the connection.  Delaying all its frames (as the lab did
# first) made every round trip 100 ms longer: latency tests and NFS took
# minutes more.
lab_delay_connect() { _lab_delay_set connect "$@"; }

# lab_delay_connect_frames [DEV]: how many frames lab_delay_connect has
# delayed on DEV so far (its nft rule's counter).
lab_delay_connect_frames() {
	nft list chain inet lab_delay "out_${1:-eth0}" 2>/dev/null |
		sed -n 's/.*counter packets \([0-9]*\).*/\1/p'
}

# lab_delay_syn MS [DEV]: delay the TCP SYNs that open connections from
# this guest by MS more than its other frames.  Works around a race in
# Debian's perftest 4.5 with -R: its server destroys the listener of the
# first (control) connection and only then listens again on the same port
# for the data connection, while the client connects again at once.  A SYN
# that falls into that gap gets a RST, the client fails
# (RDMA_CM_EVENT_REJECTED, -111) and then crashes inside librdmacm (seen in
# 65-swiwarp-markers: 13 ms between the server's last control message and
# the client's SYN).  Upstream perftest later added a connect retry
# (retry_rdma_connect) for exactly this.  Use it on every guest that runs a
# perftest client with -R.  Every connect from the guest pays MS once.
lab_delay_syn() { _lab_delay_set syn "$@"; }

# lab_loss_egress PCT [DEV]: drop PCT percent of the frames this guest
# sends (netem; 0 ends it), so TCP has to retransmit.
lab_loss_egress() { _lab_delay_set loss "$@"; }

# lab_tcg_window_start NAME / lab_tcg_window_end NAME: in a run with
# LAB_TCG_PROFILE=1 (tests/lab/lab), the TCG profiler writes the
# instructions this guest has executed so far, per translated block, to
# $LAB_OUT/tcgprof.NAME.before and .after (NAME: letters, digits, - _ .),
# and the start keeps the guest's symbols, modules included, in
# $LAB_OUT/kallsyms.NAME, outside the window;
# tools/tcg-profile/report.py turns the three into a profile of the
# window.  Both do nothing in an ordinary run.
lab_tcg_window_start() {
	[ "${LAB_TCG_PROFILE:-0}" = 1 ] || return 0
	cat /proc/kallsyms >"$LAB_OUT/kallsyms.$1"
	_lab_tcg_snapshot "$1.before"
}
lab_tcg_window_end() {
	[ "${LAB_TCG_PROFILE:-0}" = 1 ] || return 0
	_lab_tcg_snapshot "$1.after"
}
_lab_tcg_snapshot() {
	local req=$LAB_OUT/tcgprof.req
	printf '%s' "$1" >"$req.tmp" && mv "$req.tmp" "$req" || return 1
	# The profiler polls every 100 ms and removes the request when done.
	lab_wait_until 30 test ! -e "$req" && return 0
	echo "lab_tcg snapshot $1: the profiler did not answer" >&2
	return 1
}

# lab_rdma_dev: name of the first RDMA device (for -d options).
lab_rdma_dev() { ls /sys/class/infiniband 2>/dev/null | head -n 1; }

# lab_hw_counters [DEV]: the device's counters (swiwarp's hw counters of
# port 1, Documentation/kernel.md "Counters") as "name value" lines, read
# through the RDMA core's netlink statistics (rdma statistic show link),
# which is where users look; nothing when the device has none.
lab_hw_counters() {
	local dev=${1:-$(lab_rdma_dev)}
	rdma statistic show link "$dev/1" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[a-z_]+$/ && $(i + 1) ~ /^[0-9]+$/) print $i, $(i + 1) }'
}

# lab_hw_counter NAME [DEV]: one counter, from sysfs (hw_counters/NAME);
# empty when there is no such counter.
lab_hw_counter() {
	local dev=${2:-$(lab_rdma_dev)}
	cat "/sys/class/infiniband/$dev/ports/1/hw_counters/$1" 2>/dev/null
}

# lab_ctr_delta BEFORE AFTER NAME: a counter's rise between two
# lab_hw_counters snapshots (files); empty if either lacks it.
lab_ctr_delta() {
	awk -v n="$3" '$1 == n { v[FILENAME == ARGV[1] ? 1 : 2] = $2 }
		END { if ((1 in v) && (2 in v)) print v[2] - v[1] }' "$1" "$2"
}

# lab_param NAME VALUE: set swiwarp's module parameter NAME for this run
# (any that is writable at run time: Documentation/kernel.md), or a FAIL
# param/NAME saying why not, and status 1.  The value NAME had before the
# first lab_param of it is kept for lab_param_restore.
declare -gA _lab_param_saved=()
lab_param() {
	local f=/sys/module/swiwarp/parameters/$1 old
	if [ -z "${_lab_param_saved[$1]+set}" ]; then
		if ! old=$(cat "$f" 2>/dev/null); then
			lab_fail "param/$1" "no parameter $f (swiwarp not loaded?)"
			return 1
		fi
		_lab_param_saved[$1]=$old
	fi
	if ! echo "$2" 2>/dev/null >"$f"; then
		lab_fail "param/$1" "$f refused '$2'"
		return 1
	fi
}

# lab_param_restore [NAME...]: put back what lab_param found in each NAME
# (all of them by default), so the steps after see the module as loaded.
lab_param_restore() {
	local n
	[ $# -gt 0 ] || set -- "${!_lab_param_saved[@]}"
	for n; do
		[ -n "${_lab_param_saved[$n]+set}" ] || continue
		lab_param "$n" "${_lab_param_saved[$n]}" && unset "_lab_param_saved[$n]"
	done
}
