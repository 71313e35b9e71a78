# shellcheck shell=bash
# Client/server steps between the two guests of a lab run, shared by the
# guest scripts tests/swiwarp/matrix-guest.sh and netconf-scenario.sh.
# Source it after tests/lab/lib.sh with these set: step_prefix (result
# names are "$step_prefix/NAME"), work (this guest's output directory),
# T (client timeout, seconds) and step_no (a counter, starts at 0).
# shellcheck disable=SC2154  # step_prefix, work: set by the caller

# check_perf LOG: a result line with a positive number in column 4 (BW
# average; t_max for latency tests).
check_perf() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $4 + 0 > 0 { ok = 1 } END { if (!ok) print "no result line" }' "$1"
}

# step NAME SERVER_ID PORT KIND 'SERVER ARGS' 'CLIENT ARGS'
#   KIND: rping:COUNT:SIZE | perf | plain | reject (the client must see
#   its connection refused; the server never gets a request and is
#   stopped once the client is done).  The server runs on guest
#   SERVER_ID, the client on the other (lab_pair, which runs a perftest
#   pair once more after a clock calibration failure).  The client's
#   result line is the step's; the server's status is folded into it.
step() {
	local name=$1 sid=$2 port=$3 kind=$4 sargs=$5 cargs=$6
	local cid=$((3 - sid)) tag rc srv why="" end=0 r
	step_no=$((step_no + 1))
	tag=s$step_no
	[ "$kind" = reject ] && end=1
	# stderr apart: rping's block-buffered stdout would otherwise get its
	# DISCONNECT message in the middle of a long ping line.  The server's
	# logs are in $LAB_SHARED: the client guest reports its failures.
	# shellcheck disable=SC2086  # the ARGS strings are split into words
	LAB_PAIR_END_SERVER=$end LAB_PAIR_LISTEN=30 lab_pair "$tag" "$sid" "$cid" "$T" "$port" \
		"$LAB_SHARED/$tag-server" "$work/$tag-client" -- $sargs -- $cargs
	rc=$lab_rc_c srv=$lab_rc_s r=${lab_pair_note:+ ($lab_pair_note)}
	if [ "$LAB_ID" = "$cid" ]; then
		if [ "$kind" = reject ]; then
			if [ $rc -eq 0 ] || ! grep -q REJECTED "$work/$tag-client.log" "$work/$tag-client.err"; then
				why="client exit $rc, want a refused connection: $(cat "$work/$tag-client.log" "$work/$tag-client.err" | tail -n 2 | tr '\n' ' ' | cut -c1-150)"
			fi
		elif [ "$kind" = siwrev1 ]; then
			:	# judged below, with the server's status
		elif [ $rc -ne 0 ]; then
			why="client exit $rc: $(cat "$work/$tag-client.log" "$work/$tag-client.err" | grep -v 'ping data' | tail -n 2 | tr '\n' ' ' | cut -c1-150)"
		fi
	fi
	if [ "$LAB_ID" = "$cid" ]; then
		if [ "$kind" = siwrev1 ]; then
			# The documented failure: the server's RDMA Read is
			# refused at post time (QP ORD 0).
			if [ $rc -eq 0 ] && [ "$srv" = 0 ]; then
				why="siw<->siw MPA rev 1 worked (client and server exit 0): the documented siw bug is not there, so the interop SKIP of wire/mpa-rev1-g1-serves is wrong"
			elif ! grep -q 'post send error' "$LAB_SHARED/$tag-server.err" "$LAB_SHARED/$tag-server.log"; then
				why="failed, but not as documented (no 'post send error' from the rping server; client exit $rc, server exit $srv): $(cat "$LAB_SHARED/$tag-server.log" "$LAB_SHARED/$tag-server.err" | grep -v 'ping data' | tail -n 2 | tr '\n' ' ' | cut -c1-150)"
			fi
			kind=plain srv=0
		fi
		[ -z "$why" ] && [ "$srv" != 0 ] && [ "$kind" != reject ] &&
			why="server exit $srv: $(cat "$LAB_SHARED/$tag-server.log" "$LAB_SHARED/$tag-server.err" | grep -v 'ping data' | tail -n 2 | tr '\n' ' ' | cut -c1-150); client (exit 0): $(grep -v 'ping data' "$work/$tag-client.err" 2>/dev/null | tail -n 2 | tr '\n' ' ' | cut -c1-150)"
		if [ -z "$why" ]; then
			case $kind in
			rping:*)
				IFS=: read -r _ n sz <<<"$kind"
				why=$(lab_rping_log_why "$work/$tag-client.log" "$n" "$sz" "ping data: ")
				[ -z "$why" ] && why=$(lab_rping_log_why "$LAB_SHARED/$tag-server.log" "$n" "$sz" "server ping data: ")
				;;
			perf)
				why=$(check_perf "$work/$tag-client.log")
				;;
			esac
		fi
		if [ -z "$why" ]; then lab_pass "$step_prefix/$name$r"
		else lab_fail "$step_prefix/$name" "$why$r"; fi
	fi
}
