#!/bin/bash
# Guest side of tests/suites/70-dpi.sh: libdpi end to end on two lab guests.
# Usage (in a lab guest, N=2): lab-guest.sh DRIVER    (rxe | siw | swiwarp)
# Guest 1 is DPI node 0 (owner, consumer, directory); guest 2 runs the
# sources.  Every test uses its own port so no listener is ever reused.
# Result names: dpi.DRIVER.TEST (reported by guest 1 unless noted).
# shellcheck disable=SC2317  # section calls the sN_g1 and sN_g2 functions
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:?usage: lab-guest.sh rxe|siw|swiwarp}
bin=$BUILD/userspace/dpi
dpi=$bin/dpi
t=dpi.$drv
work=/tmp/dpi
mkdir -p "$work"
out=$LAB_OUT/dpi-$drv
mkdir -p "$out"
# Guest clocks drift (several times too fast under TCG on a busy host), so
# every guest-side wait is effectively unbounded; the host-side `lab run
# --timeout` bounds the whole run instead.
export DPI_TIMEOUT_MS=${DPI_TIMEOUT_MS:-0}
bar() { lab_barrier "$1" 1000000; }

"lab_load_$drv"
rc=$?
if [ "$rc" -ne 0 ]; then
	if [ "$LAB_ID" = 1 ]; then
		if [ "$rc" -eq 2 ]; then lab_skip "$t" "driver $drv not built"; else lab_fail "$t.load" "lab_load_$drv returned $rc"; fi
	fi
	bar loaded
	[ "$rc" -eq 2 ] && exit 0
	lab_finish
fi
bar loaded || { lab_fail "$t.barrier-loaded-g$LAB_ID" "$LAB_BARRIER_WHY"; lab_finish; }
# Upstream siw's passive-side setup race (lab_delay_connect in
# tests/lab/lib.sh): a source's first message can land before siw reads the
# socket, and that connection then hangs for good.  CI saw it once on
# 28 Nov (append-4x250: both guests waited until the lab timeout).  Only
# guest 2 connects (every passive side is node 0 on guest 1), so only its
# frames are delayed.
if [ "$drv" = siw ] && [ "$LAB_ID" = 2 ]; then
	lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" || lab_fail "$t.netem-g2" "could not add the netem delay"
fi

# spec PORT: a spec file for one test (node 0 = guest 1, node 1 = guest 2)
spec() {
	local f=$work/spec.$1
	printf 'node 0 192.0.2.1:%s\nnode 1 192.0.2.2:%s\n' "$1" "$1" >"$f"
	echo "$f"
}

# wait_up LOG: until a dpi process logged that its node listens
wait_up() {
	lab_wait_until 120 grep -qs 'dpi: node 0 up' "$1" && return 0
	echo "node did not come up: $(cat "$1")" >&2
	return 1
}

# field LOG KEY: value of KEY=... in the last cat/gen summary line
field() { grep -o "$2=[^ ]*" "$1" | tail -1 | cut -d= -f2; }

g1() { [ "$LAB_ID" = 1 ]; }

# serve TAG OUT ERR ARGS...: guest 1's consumer, `dpi --id 0 cat ARGS`
# (stdout to OUT, stderr to ERR), listening before the sources start
# (barrier TAG-up) and waited for after they are done (TAG-done); its exit
# status in rc.
serve() {
	local tag=$1 o=$2 e=$3 pid
	shift 3
	"$dpi" --id 0 cat "$@" >"$o" 2>"$e" &
	pid=$!
	wait_up "$e"
	bar "$tag-up"
	bar "$tag-done"
	wait "$pid"
	rc=$?
}
# want N: section N is selected ($DPI_TESTS, e.g. "1 5"; default all)
want() { [ -z "${DPI_TESTS:-}" ] || [[ " $DPI_TESTS " == *" $1 "* ]]; }
# section N PORT [TAG]: section N, if selected, on a cluster of PORT: guest
# 1 runs sN_g1, guest 2 sN_g2, between the barriers TAG-up and TAG-done of
# guest 1's serve TAG when TAG is given.
export DPI_CLUSTER
section() {
	want "$1" || return 0
	DPI_CLUSTER=$(spec "$2")
	if g1; then "s$1_g1"; return; fi
	[ -z "${3:-}" ] || bar "$3-up"
	"s$1_g2"
	[ -z "${3:-}" ] || bar "$3-done"
}

# ---------------------------------------------------------------------------
# 1. Listing 1 of the paper, as printed, against a consumer on node 0.
s1_g1() {
	serve l1 "$out/listing1.out" "$out/listing1.err" buffer --sources 1 --wait-ms 100000000
	if [ "$rc" -eq 0 ] && cmp -s "$out/listing1.out" <(printf 'Hello \0World!\0'); then
		lab_pass "$t.listing1"
	else
		lab_fail "$t.listing1" "cat rc=$rc got '$(od -c "$out/listing1.out" | head -3 | tr '\n' ' ')' $(tail -2 "$out/listing1.err" | tr '\n' ' ')"
	fi
}
s1_g2() {
	"$bin/dpi-listing1" >"$out/listing1-src.log" 2>&1
	echo "listing1 exit $?" >>"$out/listing1-src.log"
}
section 1 7471 l1

# ---------------------------------------------------------------------------
# 2. k appenders x m random-size appends (1 byte, exactly a segment's worth,
#    random), contents and per-source order verified.  Two source processes:
#    one with the measured copy/register threshold, one forcing registration
#    in place from 2 KiB, so both memory paths carry data.
s2_g1() {
	serve many /dev/null "$out/many.err" many --create --segment-size 16384 --segments 4 --sources 4 --verify --count 250 \
		--wait-ms 100000000
	want=$(cat "$LAB_SHARED/many.bytes" 2>/dev/null)
	got=$(field "$out/many.err" bytes)
	recs=$(field "$out/many.err" records)
	if [ "$rc" -eq 0 ] && [ "$recs" = 1000 ] && [ -n "$want" ] && [ "$got" = "$want" ] &&
		[ "$(grep -c ' closed records=250' "$out/many.err")" = 4 ]; then
		lab_pass "$t.append-4x250-verified"
	else
		lab_fail "$t.append-4x250-verified" "rc=$rc records=$recs bytes=$got want=$want: $(grep -v '^dpi: node' "$out/many.err" | tail -6 | tr '\n' ' ')"
	fi
}
s2_g2() {
	"$dpi" gen many --appenders 2 --count 250 --seed 11 2>"$out/many-a.log" &
	p1=$!
	DPI_CRITICAL_SIZE=2048 "$dpi" gen many --appenders 2 --count 250 --seed 12 2>"$out/many-b.log"
	r2=$?
	wait "$p1"
	r1=$?
	a=$(field "$out/many-a.log" bytes)
	b=$(field "$out/many-b.log" bytes)
	echo $((a + b)) >"$LAB_SHARED/many.bytes"
	zc=$(field "$out/many-b.log" zero_copy)
	if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [ "${zc:-0}" -gt 0 ]; then
		lab_pass "$t.append-sources-g2"
	else
		lab_fail "$t.append-sources-g2" "gen rc=$r1/$r2 zero_copy=$zc: $(tail -1 "$out/many-a.log") $(tail -1 "$out/many-b.log")"
	fi
	# Memory policy: copied appends are coalesced per segment and their
	# Writes go unsignaled; only seg Sends and every 16th control message
	# are signaled, so well under 2/3 of the posted WRs may be signaled.
	sig=$(field "$out/many-a.log" signaled)
	if [ -n "$sig" ] && [ $((${sig%/*} * 3)) -lt $((${sig#*/} * 2)) ]; then
		lab_pass "$t.unsignaled-wrs"
	else
		lab_fail "$t.unsignaled-wrs" "signaled/posted=$sig: $(tail -1 "$out/many-a.log")"
	fi
}
section 2 7472 many

# ---------------------------------------------------------------------------
# 3. A slow consumer: a 2-segment ring of 4 KiB, the consumer sleeps 3 ms per
#    record.  The source must stall (backpressure) and nothing may be lost or
#    overwritten (contents verified).
s3_g1() {
	serve slow /dev/null "$out/slow.err" slow --create --segment-size 4096 --segments 2 --sources 1 --verify --count 300 \
		--slow-us 3000 --wait-ms 100000000
	stalls=$(cat "$LAB_SHARED/slow.stalls" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$(field "$out/slow.err" records)" = 300 ] && [ "${stalls:-0}" -gt 0 ]; then
		lab_pass "$t.backpressure-slow-consumer"
	else
		lab_fail "$t.backpressure-slow-consumer" "rc=$rc stalls=$stalls: $(tail -3 "$out/slow.err" | tr '\n' ' ')"
	fi
}
s3_g2() {
	"$dpi" gen slow --count 300 --max-size 900 --seed 5 2>"$out/slow-src.log"
	field "$out/slow-src.log" stalls >"$LAB_SHARED/slow.stalls"
}
section 3 7473 slow

# ---------------------------------------------------------------------------
# 4. A source that crashes after flushing 60 records, then restarts as a new
#    source: the owner reports the first as aborted with exactly its flushed
#    records, the second closed with all of its records.  This consumer uses
#    the polling iterator (Consumer::poll, --poll); the others block.
s4_g1() {
	serve rs /dev/null "$out/rs.err" rs --create --segment-size 4096 --sources 2 --verify --count 50 --poll \
		--wait-ms 100000000
	if [ "$rc" -eq 0 ] && grep -q '^dpi: source 0 node -1 aborted records=60 reason: source .*disconnected' "$out/rs.err" &&
		grep -q '^dpi: source 1 node -1 closed records=50$' "$out/rs.err" &&
		grep -q ' errors=0 .*empty_polls=[1-9]' "$out/rs.err"; then
		lab_pass "$t.source-restart"
	else
		lab_fail "$t.source-restart" "rc=$rc: $(grep -v '^dpi: node' "$out/rs.err" | tail -4 | tr '\n' ' ')"
	fi
}
s4_g2() {
	"$dpi" gen rs --count 100 --abort-after 60 --max-size 1000 --seed 3 2>"$out/rs-a.log"
	echo "crashed source exit $?" >>"$out/rs-a.log"
	"$dpi" gen rs --count 50 --max-size 1000 --seed 4 2>"$out/rs-b.log"
}
section 4 7474 rs

# ---------------------------------------------------------------------------
# 5. The owner node restarts under a connected client: the client's old
#    source fails with connection_lost, and the pool reconnects for new work.
# On upstream siw this hung once (session 3's clean check: both guests
# stuck after source-restart until the lab timeout), and was skipped on siw
# since.  The reconnect lands on the restarted owner's passive side, the
# window of siw's setup race; with guest 2's frames delayed (above) it
# passed 3 of 3 runs on 28 Nov, so it runs on every driver again.
s5_g1() {
	"$dpi" --id 0 node 2>"$out/own1.err" &
	pid=$!
	lab_wait_output "$out/own1.err" 'up, critical' "$pid"
	bar own-up
	bar own-appended
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	"$dpi" --id 0 cat pr --sources 1 --newline --wait-ms 100000000 >"$out/own2.out" 2>"$out/own2.err" &
	pid=$!
	wait_up "$out/own2.err"
	bar own-restarted
	bar own-done
	wait "$pid"
	rc=$?
	prc=$(cat "$LAB_SHARED/own.rc" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$prc" = 0 ] && [ "$(cat "$out/own2.out")" = after-restart ]; then
		lab_pass "$t.owner-restart"
	else
		lab_fail "$t.owner-restart" "cat rc=$rc probe rc=$prc out='$(head -c 80 "$out/own2.out")' $(tail -2 "$out/own2.err" | tr '\n' ' ')"
	fi
}
s5_g2() {
	bar own-up
	rm -f "$work/go"
	"$dpi" probe-restart pr --owner 0 --wait-file "$work/go" 2>"$out/probe.log" &
	ppid=$!
	lab_wait_output "$out/probe.log" 'waiting for' "$ppid"
	bar own-appended
	bar own-restarted
	touch "$work/go"
	wait "$ppid"
	echo $? >"$LAB_SHARED/own.rc"
	cat "$out/probe.log" >&2
	bar own-done
}
section 5 7475

# ---------------------------------------------------------------------------
# 6. Bad input gets clear errors; region read/write (DPI_Read/DPI_Write).
#    Reported by guest 2, where the clients run.
# expect NAME WANT_RC PATTERN CMD...: CMD exits WANT_RC and stderr matches
expect() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	cp "$work/$name.err" "$out/$name.err"
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -Eq "$pat" "$work/$name.err"; }; then
		lab_pass "$t.$name"
	else
		lab_fail "$t.$name" "rc=$rc (want $want): $(head -c 300 "$work/$name.err")"
	fi
}
s6_g1() {
	"$dpi" --id 0 node 2>"$out/err-node.err" &
	pid=$!
	lab_wait_output "$out/err-node.err" 'up, critical' "$pid"
	bar err-up
	bar err-done
	kill "$pid"
	wait "$pid"
}
s6_g2() {
	expect error-unknown-buffer 1 "unknown_buffer: unknown buffer: no buffer 'nosuch' in the directory" \
		"$dpi" append nosuch --data x
	head -c 5000 /dev/zero >"$work/big"
	"$dpi" create small --owner 0 --segment-size 4096
	expect error-oversize-append 1 "too_large: append larger than a segment: append of 5000 bytes to 'small' exceeds its maximum of 4088" \
		"$dpi" append small --file "$work/big" --chunk 5000
	printf 'node 0 192.0.2.1:99999\n' >"$work/bad.spec"
	expect error-malformed-spec 1 "spec_error: bad cluster spec: $work/bad.spec:1: port '99999' is not in 1..65535" \
		"$dpi" --spec "$work/bad.spec" append x --data y
	printf 'node 0 192.0.2.1:7476\nnode 5 192.0.2.77:7476\nnode 6 192.0.2.1:7999\n' >"$work/far.spec"
	expect error-unreachable-node 1 "unreachable: node unreachable: node 5 \(192.0.2.77:7476\)" \
		"$dpi" --spec "$work/far.spec" --connect-timeout-ms 4000 create x --owner 5
	expect error-refused-node 1 "unreachable: node unreachable: node 6 \(192.0.2.1:7999\)" \
		"$dpi" --spec "$work/far.spec" --connect-timeout-ms 4000 create x --owner 6
	expect error-unknown-node 1 "invalid_argument: .*owner node 9 is not in the cluster spec" \
		"$dpi" create x --owner 9
	# regions: DPI_Write then DPI_Read over RDMA, and a read past the end
	"$dpi" create reg --owner 0 --region 1048576
	"$dpi" write reg 1000 --data hello
	expect region-read-write 0 "" "$dpi" read reg 998 9
	if ! cmp -s "$work/region-read-write.out" <(printf '\0\0hello\0\0'); then
		lab_fail "$t.region-read-back" "read back '$(od -c "$work/region-read-write.out" | head -2 | tr '\n' ' ')'"
	else
		lab_pass "$t.region-read-back"
	fi
	expect error-out-of-bounds 1 "out_of_bounds: access outside the region: 10 bytes at offset 1048570" \
		"$dpi" read reg 1048570 10
	expect error-wrong-kind 1 "wrong_kind: .*'small' is an append buffer, not a region" \
		"$dpi" read small 0 1
}
section 6 7476 err

# ---------------------------------------------------------------------------
# 7. The C API beyond Listing 1 (DPI_Scatter, DPI_Write/Read/Gather,
#    DPI_Finalize, error codes) from guest 2; the scattered parts arrive at
#    node 0's consumer of both buffers.
s7_g1() {
	serve capi "$out/capi.out" "$out/capi.err" sa,sb --sources 1 --newline --wait-ms 100000000
	if [ "$rc" -eq 0 ] && [ "$(sort "$out/capi.out" | tr '\n' ' ')" = "scatter-A scatter-B " ]; then
		lab_pass "$t.scatter"
	else
		lab_fail "$t.scatter" "rc=$rc out='$(tr '\n' ' ' <"$out/capi.out")' $(tail -2 "$out/capi.err" | tr '\n' ' ')"
	fi
}
s7_g2() {
	"$BUILD/tests/dpi/dpi-capi-check" >"$out/capi-check.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		lab_pass "$t.c-api"
	else
		lab_fail "$t.c-api" "$(grep FAILED "$out/capi-check.log" | head -3 | tr '\n' ' ')"
	fi
}
section 7 7477 capi

# ---------------------------------------------------------------------------
# 8. The critical size (copy below, register above) is measured at init on
#    this guest's device.  Measured three times over on each guest, two of
#    the three must agree within two table steps (4x).  One may be off by
#    more: the lab cannot keep the host quiet, and a measurement taken
#    while the other boot's guests are busy slows registration several
#    times more than copying (session 34, siw: 262144, 4194304, 524288, the
#    middle table 2-10x slower throughout); the medians of its rounds
#    cannot help when the whole measurement is disturbed.
if want 8; then
	vals=()
	for i in 1 2 3; do
		"$dpi" info >"$out/info.$i" 2>&1
		vals+=("$(awk '/critical size/ {print $3}' "$out/info.$i" | head -1)")
	done
	okv=1 agree=0
	for v in "${vals[@]}"; do
		[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || okv=0
	done
	if [ $okv = 1 ]; then
		for pair in "0 1" "0 2" "1 2"; do
			read -r x y <<<"$pair"
			x=${vals[$x]} y=${vals[$y]}
			[ $((x * 4)) -ge "$y" ] && [ $((y * 4)) -ge "$x" ] && agree=1
		done
	fi
	if [ $agree = 1 ]; then
		lab_result "PASS: $t.critical-size-stable-g$LAB_ID (${vals[*]} bytes)"
	else
		lab_fail "$t.critical-size-stable-g$LAB_ID" "three measurements, no two within 4x: ${vals[*]}"
	fi
	bar crit-done
fi

# ---------------------------------------------------------------------------
# 9. Shared-log append (fetch-and-add on the log's tail, Documentation/dpi.md
#    "Append: shared log"): 3 sources x 300 random-size appends into one
#    16 KiB log, so the log wraps many times and pads occur; every byte, each
#    source's order and exactly 300 records per source verified.  Where the
#    devices have no atomics (siw) every source must fall back to a ring,
#    with the same checks, and the sources' log must say why.
s9_g1() {
	serve shlog /dev/null "$out/shlog.err" shlog --create --append-mode shared --segment-size 4096 --segments 4 --sources 3 \
		--verify --count 300 --wait-ms 100000000
	want=$(cat "$LAB_SHARED/shlog.bytes" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$(field "$out/shlog.err" records)" = 900 ] && [ -n "$want" ] &&
		[ "$(field "$out/shlog.err" bytes)" = "$want" ] && [ "$(field "$out/shlog.err" hole_size)" = 0 ] &&
		[ "$(grep -c ' closed records=300$' "$out/shlog.err")" = 3 ]; then
		lab_pass "$t.shared-log-3x300-verified"
	else
		lab_fail "$t.shared-log-3x300-verified" "rc=$rc want=$want: $(grep -v '^dpi: node' "$out/shlog.err" | tail -5 | tr '\n' ' ')"
	fi
}
s9_g2() {
	"$dpi" gen shlog --appenders 3 --count 300 --max-size 1500 --seed 21 2>"$out/shlog-src.log"
	r=$?
	field "$out/shlog-src.log" bytes >"$LAB_SHARED/shlog.bytes"
	sh=$(field "$out/shlog-src.log" shared)
	pads=$(field "$out/shlog-src.log" pads)
	fb=$(field "$out/shlog-src.log" fallbacks)
	if [ "$drv" = siw ]; then
		# siw has no atomics: the owner hands out rings and says why
		if [ "$r" -eq 0 ] && [ "$sh" = 0 ] && [ "$fb" = 3 ] &&
			[ "$(grep -c "uses a ring, not the shared log: the owner's device .* has no remote atomics" "$out/shlog-src.log")" = 3 ]; then
			lab_pass "$t.shared-log-fallback-g2"
		else
			lab_fail "$t.shared-log-fallback-g2" "rc=$r shared=$sh fallbacks=$fb: $(tail -3 "$out/shlog-src.log" | tr '\n' ' ')"
		fi
	elif [ "$r" -eq 0 ] && [ "$sh" = 900 ] && [ "${pads:-0}" -gt 0 ] && [ "$fb" = 0 ]; then
		lab_pass "$t.shared-log-sources-g2"
	else
		lab_fail "$t.shared-log-sources-g2" "rc=$r shared=$sh pads=$pads fallbacks=$fb: $(tail -3 "$out/shlog-src.log" | tr '\n' ' ')"
	fi
}
section 9 7479 shlog

# ---------------------------------------------------------------------------
# 10. A hole in the shared log: source B appends 400 records, paced at 20
#     ms each.  Meanwhile source A flushes 60 records, appends 3 more
#     (reserved and written, never committed) and crashes.  B's later records
#     sit behind A's hole and B soon waits for room (the log is 16 KiB), so
#     the owner must declare the hole while B is still open: 5 s after A
#     aborted (op_timeout is 0 here).  It must report it (stderr, hole_size)
#     and deliver all of B's records.  Drivers with atomics only (siw has
#     none: its sources use rings, section 4 covers that).
s10_g1() {
	serve shhole /dev/null "$out/shhole.err" shhole --create --append-mode shared --segment-size 4096 --segments 4 --sources 2 \
		--verify --count 400 --wait-ms 100000000
	holes=$(field "$out/shhole.err" hole_size)
	# A's count: its 60 flushed records, plus any of the 3 unflushed ones
	# that backpressure committed (an appender waiting for room commits
	# what it holds; gen pauses 1 s first so the consumer can drain, but
	# under load that is not always enough: 61 once in a clean check, 28
	# Nov).  At least one must stay uncommitted: the hole checks below.
	if [ "$rc" -eq 0 ] && grep -q '^dpi: source [01] node -1 aborted records=6[0-2] reason: source .*disconnected' "$out/shhole.err" &&
		grep -q '^dpi: source [01] node -1 closed records=400$' "$out/shhole.err" &&
		grep -q "shared log of 'shhole': skipped a hole of [1-9][0-9]* bytes at position [0-9]* (uncommitted for 5000 ms after a source aborted)" "$out/shhole.err" &&
		[ "${holes:-0}" -gt 0 ]; then
		lab_pass "$t.shared-log-hole"
	else
		lab_fail "$t.shared-log-hole" "rc=$rc hole_size=$holes: $(grep -v '^dpi: node' "$out/shhole.err" | tail -5 | tr '\n' ' ')"
	fi
}
s10_g2() {
	"$dpi" gen shhole --count 400 --max-size 1000 --seed 32 --pace-us 20000 2>"$out/shhole-b.log" &
	pb=$!
	sleep 0.5
	"$dpi" gen shhole --count 100 --abort-after 60 --unflushed 3 --max-size 1000 --seed 31 2>"$out/shhole-a.log"
	echo "crashed source exit $?" >>"$out/shhole-a.log"
	wait "$pb"
}
if [ "$drv" != siw ]; then
	section 10 7480 shhole
elif want 10; then
	g1 && lab_skip "$t.shared-log-hole" "siw has no remote atomics (no shared log)"
fi

lab_finish
