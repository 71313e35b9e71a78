#!/bin/bash
# Guest side of tests/suites/75-flows.sh: DPI flow applications on libdpi, on
# N lab guests (guest I is DPI node I-1; node 0 holds the buffer directory).
# Usage (in a lab guest): lab-guest.sh DRIVER      (siw | rxe | swiwarp)
#   FLOWS_TESTS="join-uniform hint"   only these tests (default: all)
#   FLOWS_ROWS=20000                  rows per join table
#   FLOWS_DELAY_MS=100                netem delay on every guest (siw's race)
#   FLOWS_MPI_TIMEOUT=240             seconds per mpirun or srun (tests mpi, mpi-all, pmix, slurm)
#   FLOWS_SLURM_UP=120                seconds for every guest's slurmd to register (test slurm)
# Result names: flows.DRIVER.TEST[.detail]; each application prints its own
# PASS/FAIL lines, which are copied into $LAB_OUT/results.
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:?usage: lab-guest.sh siw|rxe|swiwarp}
bin=${FLOWS_BIN:-$BUILD/userspace/flows}
t=flows.$drv
work=/tmp/flows
out=$LAB_OUT/flows-$drv
mkdir -p "$work" "$out"
me=$((LAB_ID - 1))

"lab_load_$drv"
rc=$?
if [ $rc -ne 0 ]; then
	if [ "$LAB_ID" = 1 ]; then
		if [ $rc -eq 2 ]; then lab_skip "$t" "driver $drv not built"; else lab_fail "$t.load" "lab_load_$drv returned $rc"; fi
	fi
	lab_barrier loaded 300
	[ $rc -eq 2 ] && exit 0
	lab_finish
fi
# FLOWS_DELAY_MS=N: netem-delay everything this guest sends by N ms.  On
# upstream siw every guest of the mesh is the passive side of some
# connection, and its MPA Reply must reach the peer only after its QP owns
# the socket (see lab_delay_connect), so the delay goes on every guest.
if [ "${FLOWS_DELAY_MS:-0}" != 0 ]; then
	lab_delay_connect "$FLOWS_DELAY_MS" || lab_fail "$t.netem-g$LAB_ID" "could not add the netem delay"
fi
lab_barrier loaded 300 || { lab_fail "$t.barrier-loaded-g$LAB_ID" "$LAB_BARRIER_WHY"; lab_finish; }

# spec PORT NODES: node i = guest i+1; each test has its own port so no
# listener is ever reused.
spec() {
	local f=$work/spec.$1 i
	: >"$f"
	for i in $(seq 0 $(($2 - 1))); do
		echo "node $i 192.0.2.$((i + 1)):$1" >>"$f"
	done
	echo "$f"
}

want() { [ -z "${FLOWS_TESTS:-}" ] || [[ " $FLOWS_TESTS " == *" $1 "* ]]; }

# diag NAME: this guest's network and RDMA state after a failed run, into
# $out/NAME.gN.diag (kept with the lab run's output).  For failures that do
# not say enough by themselves: in session 26 guest 3 could not connect to
# guest 1 over rxe three runs in a row while guests 1 and 2 could.
diag() {
	local f=$out/$1.g$LAB_ID.diag d
	{
		echo "== ip -s neigh"; ip -s neigh show
		echo "== ip -s link"; ip -s link show eth0
		echo "== rdma link"; rdma link show
		echo "== rdma res"; rdma res show; rdma res show cm_id; rdma res show qp
		for d in /sys/class/infiniband/*; do
			echo "== $d gids"
			grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$' "$d"/ports/1/gids/* 2>/dev/null
			echo "== $d counters"
			grep -H . "$d"/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||'
		done
		echo "== dmesg"; dmesg | tail -n 40
	} >"$f" 2>&1
	echo "# $t.$1: this guest's network and RDMA state is in $f"
}

# app NAME PORT NODES PROGRAM ARGS...: run PROGRAM on the first NODES guests
# (the others wait at the barrier), copy its result lines, fail if it exited
# non-zero without saying why.
app() {
	local name=$1 port=$2 nodes=$3 prog=$4 log rc
	shift 4
	log=$out/$name.g$LAB_ID.log
	if [ "$LAB_ID" -le "$nodes" ]; then
		timeout "${FLOWS_APP_TIMEOUT:-300}" "$bin/$prog" --spec "$(spec "$port" "$nodes")" --id "$me" \
			--nodes "$nodes" --name "$t.$name" "$@" >"$log" 2>&1
		rc=$?
		# logship's victim dies by SIGKILL on purpose.
		[ "$name" = logship ] && [ "$LAB_ID" = "$nodes" ] && [ $rc -eq 137 ] && rc=0
		# so does the crashing source of the crash test (node 1).
		[ "$name" = crash ] && [ "$LAB_ID" = 2 ] && [ $rc -eq 137 ] && rc=0
		grep -E '^(PASS|FAIL|SKIP):' "$log" >>"$LAB_OUT/results"
		grep -E '^(PASS|FAIL|SKIP):|^# ' "$log"
		if grep -q '^FAIL:' "$log"; then
			LAB_FAILURES=$((LAB_FAILURES + 1))
			diag "$name"
		elif [ $rc -ne 0 ]; then
			lab_fail "$t.$name.g$LAB_ID" "exit $rc: $(tail -3 "$log" | tr '\n' ' ')"
			diag "$name"
		fi
	fi
	lab_barrier "$name-done" 600 || lab_fail "$t.$name.barrier-g$LAB_ID"
}

rows=${FLOWS_ROWS:-20000}
want join-uniform && app join-uniform 7481 "$LAB_N" flows-join --rows "$rows" --dist uniform --prefix ju
want join-zipf && app join-zipf 7482 "$LAB_N" flows-join --rows "$rows" --dist zipf --theta 1.0 --prefix jz
want hint && app hint 7483 2 flows-hint --tuples 1000
want crash && app crash 7487 2 flows-hint --crash-after 500
want stream && app stream 7484 "$LAB_N" flows-stream
want ps && app ps 7485 "$LAB_N" flows-ps
if want logship; then
	mkdir -p "$LAB_SHARED/logship"
	app logship 7486 "$LAB_N" flows-logship --logdir "$LAB_SHARED/logship" --records "${FLOWS_LOG_RECORDS:-300}" --kill-after "${FLOWS_LOG_KILL:-100}"
fi

# MPI on swiwarp (Documentation/mpi.md): Open MPI's ofi MTL on libfabric's
# verbs;ofi_rxm, one rank per guest, no TCP BTL.  mpirun runs on guest 1; the
# other guests serve its rsh agent.  Test "mpi" puts the ranks on guests
# 2..N; "mpi-all" on every guest, mpirun's own included: three ranks, whose
# barrier's MPI_Ssend hangs on iWARP, siw too (an Open MPI / libfabric bug,
# Documentation/mpi.md; tests/known-bugs).  Proof that MPI really ran on swiwarp:
# every rank's MTL names the domain swiwarp0, and the first rank's guest
# created a swiwarp QP per peer during the run (a kprobe's hit count, read
# there through the rsh agent).
# mpi_results NAME LOG RC SHOW: the result lines of one mpirun into
# $LAB_OUT/results, the lines matching SHOW too on stdout; a FAIL line counts,
# and without one an exit status other than 0 or a missing "PASS: $t.NAME" fails.
mpi_results() {
	local name=$1 log=$2 rc=$3 show=$4
	grep -E '^(PASS|FAIL|SKIP):' "$log" >>"$LAB_OUT/results"
	grep -E "^(PASS|FAIL|SKIP):|$show" "$log"
	if grep -q '^FAIL:' "$log"; then
		LAB_FAILURES=$((LAB_FAILURES + 1))
	elif [ "$rc" -ne 0 ] || ! grep -q "^PASS: $t.$name\$" "$log"; then
		lab_fail "$t.$name" "mpirun exit $rc: $(grep -v '^\[lab' "$log" | tail -4 | tr '\n' ' ')"
	fi
}
mpi_app() { # NAME FIRST-GUEST PROGRAM ARGS...
	local name=$1 first=$2 prog=$3 log qp0 qp1 doms rc n=$((LAB_N - $2 + 1))
	shift 3
	log=$out/$name.log
	qp0=$(mpi_qps "$first")
	timeout "${FLOWS_MPI_TIMEOUT:-240}" mpirun "${MPI_LAUNCH[@]}" "${MPI_SWIWARP[@]}" --mca mtl_base_verbose 30 \
		-np $n --host "$(mpi_hosts "$first" "$LAB_N")" "$bin/$prog" --name "$t.$name" "$@" >"$log" 2>&1
	rc=$?
	qp1=$(mpi_qps "$first")
	mpi_results "$name" "$log" $rc '^# '
	doms=$(grep -c 'mtl:ofi:provider: swiwarp0$' "$log")
	if [ "$doms" = $n ] && [ $((qp1 - qp0)) -ge $((n - 1)) ]; then
		lab_pass "$t.$name.on-swiwarp"
		echo "# $t.$name.on-swiwarp: $doms ranks on domain swiwarp0, $((qp1 - qp0)) swiwarp QPs created on guest $first"
	else
		lab_fail "$t.$name.on-swiwarp" "$doms of $n ranks report domain swiwarp0, $((qp1 - qp0)) swiwarp QPs created on guest $first ($qp0 -> $qp1)"
	fi
}
# mpi_qps GUEST: swiwarp QPs created on GUEST since its probe was set.
mpi_qps() {
	local cmd="awk '\$1 == \"mpi_swiwarp_qp\" { print \$2 }' /sys/kernel/tracing/kprobe_profile"
	if [ "$1" = 1 ]; then
		bash -c "$cmd"
	else
		"$LAB_TOP/tests/bench/flows/rsh.sh" "192.0.2.$1" "$cmd" 2>&1
	fi
}
# mpi_probe: count swiwarp_create_qp calls (kprobe_profile counts while enabled).
mpi_probe() {
	local k=/sys/kernel/tracing
	[ -e $k/kprobe_events ] || mount -t tracefs nodev $k
	{ echo 'p:mpi_swiwarp_qp swiwarp_create_qp' >>$k/kprobe_events &&
		echo 1 >$k/events/kprobes/mpi_swiwarp_qp/enable; } ||
		lab_fail "$t.mpi.probe-g$LAB_ID" "cannot set a kprobe on swiwarp_create_qp"
}
# pmix_app NAME PORT SPEC-TEST LAUNCHER PROGRAM ARGS...: the DPI application
# started by LAUNCHER with one rank per guest and no spec file: libdpi takes
# its node id and every node's address from the launcher's PMIx server
# (Documentation/dpi.md, "Finding the cluster").  LAUNCHER: mpirun, mpirun+
# (mpirun --enable-recovery: a rank that dies, logship's victim, does not end
# the job) or srun (srun --mpi=pmix, Slurm of tests/flows/slurm-lib.sh).
# Checked: the application's own PASS lines (the join: against a single-node
# join), node 0's result line equal to the one of the spec-file run
# SPEC-TEST of this boot (if it ran), every rank saying it got the cluster
# from PMIx on its own guest's swiwarp0, and swiwarp QPs created on guest 1
# during the run.
pmix_app() {
	local name=$1 port=$2 spec_test=$3 launcher=$4 prog=$5 log qp0 qp1 rc n=$LAB_N i bad="" a b t0=$SECONDS
	local -a run
	shift 5
	case $launcher in
	mpirun | mpirun+)
		run=(mpirun "${MPI_LAUNCH[@]}" -x DPI_PORT="$port" -x DPI_VERBOSE=1 -np "$n" --host "$(mpi_hosts "$n")")
		[ "$launcher" = mpirun+ ] && run+=(--enable-recovery)
		;;
	srun) run=(env DPI_PORT="$port" DPI_VERBOSE=1 srun --mpi=pmix -N "$n" -n "$n" --ntasks-per-node=1) ;;
	esac
	log=$out/$name.log
	qp0=$(mpi_qps 1)
	timeout "${FLOWS_MPI_TIMEOUT:-240}" "${run[@]}" "$bin/$prog" --nodes "$n" --name "$t.$name" "$@" >"$log" 2>&1
	rc=$?
	qp1=$(mpi_qps 1)
	mpi_results "$name" "$log" $rc '^# |^dpi: cluster'
	for i in $(seq 0 $((n - 1))); do
		grep -q "^dpi: cluster from PMIx namespace [^ ]*: $n nodes, this is node $i at 192\.0\.2\.$((i + 1)):$port device=swiwarp0\$" "$log" ||
			bad+=" node $i"
	done
	if [ -z "$bad" ] && [ $((qp1 - qp0)) -ge $((n - 1)) ]; then
		lab_pass "$t.$name.via-pmix"
		echo "# $t.$name.via-pmix: $n ranks took the cluster from PMIx, node i on guest i+1's swiwarp0, $((qp1 - qp0)) swiwarp QPs created on guest 1, ${run[0]/env/srun} took $((SECONDS - t0)) s"
	else
		lab_fail "$t.$name.via-pmix" "no PMIx cluster line for${bad:- no node} (want node i at 192.0.2.(i+1):$port device=swiwarp0); $((qp1 - qp0)) swiwarp QPs on guest 1 ($qp0 -> $qp1)"
	fi
	# The join's line ends in its timing-free result; ps prints the model;
	# logship's last field, the watermark seen after record 100, depends on
	# timing, so it is left out.
	a=$(sed -n "s/^# $t.$spec_test: //p" "$out/$spec_test.g1.log" 2>/dev/null | sed 's/, acked after record 100: [0-9]*$//')
	if [ -z "$a" ]; then
		lab_skip "$t.$name.same-as-spec" "the spec-file run $spec_test did not run or printed no result"
	else
		b=$(sed -n "s/^# $t.$name: //p" "$log" | sed 's/, acked after record 100: [0-9]*$//')
		if [ "$a" = "$b" ]; then
			lab_pass "$t.$name.same-as-spec"
			echo "# $t.$name.same-as-spec: $b"
		else
			lab_fail "$t.$name.same-as-spec" "PMIx run: '$b', spec-file run: '$a'"
		fi
	fi
}
# slurm_tests (guest 1, every guest running slurm_start): the join and
# the parameter server started by srun --mpi=pmix, checked as pmix_app checks
# mpirun's runs, and the error of a DPI process that srun starts without
# --mpi=pmix, from every rank.
slurm_tests() {
	local t0=$SECONDS log rc n=$LAB_N got
	if ! slurm_wait_idle "$n" "${FLOWS_SLURM_UP:-120}"; then
		lab_fail "$t.slurm.up" "not $n idle nodes after ${FLOWS_SLURM_UP:-120} s: $(sinfo 2>&1 | tr '\n' ' ') slurmctld: $(tail -3 "$SLURM_LOGS/slurmctld.log" | tr '\n' ' ')"
		return
	fi
	lab_pass "$t.slurm.up"
	echo "# $t.slurm.up: $n nodes idle when asked, +$((SECONDS - slurm_t0)) s from the daemons' start ($((SECONDS - t0)) s waited here)"
	pmix_app slurm-join 7493 join-uniform srun flows-join --rows "$rows" --dist uniform --prefix sj
	pmix_app slurm-ps 7494 ps srun flows-ps
	log=$out/slurm-nopmix.log
	timeout "${FLOWS_MPI_TIMEOUT:-240}" srun -N "$n" -n "$n" --ntasks-per-node=1 "$bin/flows-join" --nodes "$n" \
		--name "$t.slurm-nopmix-run" >"$log" 2>&1
	rc=$?
	# One FAIL line per rank from the application (kept out of the results:
	# failing is what this run must do).
	got=$(grep -c "^FAIL: $t.slurm-nopmix-run \[node error: .*no PMIx server (and DPI_CLUSTER is not set): Slurm job [0-9]* started this process without PMIx: run it with srun --mpi=pmix" "$log")
	if [ $rc -ne 0 ] && [ "$got" = "$n" ]; then
		lab_pass "$t.slurm.no-pmix-error"
		echo "# $t.slurm.no-pmix-error: srun exit $rc, $got of $n ranks: $(grep -o 'Slurm job [0-9]* started.*DPI_CLUSTER' "$log" | head -1)"
	else
		lab_fail "$t.slurm.no-pmix-error" "srun without --mpi=pmix: exit $rc, $got of $n ranks named the missing PMIx: $(tail -3 "$log" | tr '\n' ' ')"
	fi
}
if { want mpi || want mpi-all || want pmix || want slurm; } && [ "$drv" = swiwarp ]; then
	source "$LAB_TOP/tests/flows/mpi-lib.sh"
	mpi_probe
	if want slurm; then
		source "$LAB_TOP/tests/flows/slurm-lib.sh"
		[ "$LAB_ID" = 1 ] && slurm_key
	fi
	lab_barrier mpi-probe 300 || lab_fail "$t.mpi.barrier-g$LAB_ID"
	# The daemons start on every guest now and register while mpirun runs.
	slurm_ok=0
	if want slurm; then
		slurm_t0=$SECONDS
		if ! command -v srun >/dev/null || ! command -v munged >/dev/null; then
			lab_fail "$t.slurm.installed-g$LAB_ID" "no srun or munged (tools/setup-host.sh installs slurm-client, slurmd, slurmctld, munge)"
		elif slurm_start; then
			slurm_ok=1
			echo "# $t.slurm.start-g$LAB_ID: daemons started in $((SECONDS - slurm_t0)) s"
		else
			lab_fail "$t.slurm.start-g$LAB_ID" "$SLURM_WHY"
		fi
	fi
	if [ "$LAB_ID" = 1 ]; then
		if want pmix; then
			pmix_app pmix-join 7491 join-uniform mpirun flows-join --rows "$rows" --dist uniform --prefix pj
			pmix_app pmix-ps 7492 ps mpirun flows-ps
			# logship's victim dies by SIGKILL on purpose: --enable-recovery
			# keeps mpirun from ending the job for it (as a spec-file
			# cluster goes on without the dead backup).
			mkdir -p "$LAB_SHARED/pmix-logship"
			pmix_app pmix-logship 7495 logship mpirun+ flows-logship --logdir "$LAB_SHARED/pmix-logship" \
				--records "${FLOWS_LOG_RECORDS:-300}" --kill-after "${FLOWS_LOG_KILL:-100}"
		fi
		if [ $slurm_ok = 1 ]; then
			t1=$SECONDS
			slurm_tests
			echo "# $t.slurm: daemons started at +0 s, tests from +$((t1 - slurm_t0)) s to +$((SECONDS - slurm_t0)) s on guest 1"
		fi
		for v in mpi mpi-all; do
			want $v || continue
			first=2
			[ $v = mpi-all ] && first=1
			p=${v#mpi}
			mpi_app "mpi-pingpong$p" "$first" flows-mpi-pingpong --max 262144 --iters 3
			mpi_app "mpi-alltoall$p" "$first" flows-mpi-alltoall --max 32768 --rounds 1
			mpi_app "mpi-join$p" "$first" flows-mpi-join --rows "$rows" --dist uniform
			mpi_app "mpi-shuffle$p" "$first" flows-mpi-shuffle --tuple-size 64 --mb 1
		done
		mpi_rsh_stop
	else
		mpi_rsh_serve
	fi
	[ $slurm_ok = 1 ] && slurm_stop
	lab_barrier mpi-done 900 || lab_fail "$t.mpi.barrier-g$LAB_ID"
fi
lab_finish
