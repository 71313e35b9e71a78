#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# check: runs-private (it drops privileges; tests/run-private.sh)
# The swiwarp Wireshark plugin (dissector/) against synthetic captures from
# tools/pcapgen and, when present, real siw captures from the lab.
#
# tshark runs as an unprivileged user (tshark ignores personal plugin
# folders when started as root) with a temporary HOME that holds the plugin
# under ~/.local/lib/wireshark/plugins/4.0/epan/.
#
# Every expected value comes from the generator's .meta file, which records
# what it put on the wire (frame numbers, counts); the dissector's decoding
# is independent of it.  The built-in iwarp_mpa/iwarp_ddp_rdmap dissectors
# run on the same captures for the side-by-side table (written to
# $BUILD/dissector-compare.md; informational, not pass/fail).
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$top/tests/swiwarp/suite-lib.sh"
build=$BUILD
plugin=$build/plugins/4.0/epan/swiwarp.so
pcapgen=$build/tools/pcapgen/pcapgen

if ! command -v tshark >/dev/null; then
	skip dissector "tshark is not installed"
	exit 0
fi
if [ ! -f "$plugin" ] || [ ! -x "$pcapgen" ]; then
	skip dissector "plugin or pcapgen not built (make all)"
	exit 0
fi

work=$(mktemp -d /tmp/swiwarp-dissector.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
home=$work/home
caps=$work/caps
mkdir -p "$home/.local/lib/wireshark/plugins/4.0/epan" "$caps"
install -m 644 "$plugin" "$home/.local/lib/wireshark/plugins/4.0/epan/"
chmod -R a+rX "$home"

# An unprivileged identity for tshark.
if [ "$(id -u)" -eq 0 ]; then
	runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
	runas=()
fi

# ours: plugin loaded (HOME has it).  builtin: plugin not visible.
#
# Nearly all of this suite's time is tshark starting up (~0.7 s of CPU per
# run, a few hundred runs), one run after the other.  Every run is a pure
# function of its command line and of captures that exist before it, so the
# checks below run twice: a first pass only records each distinct tshark
# command line (phase=record, output discarded), those run DISSECTOR_JOBS at
# a time (default 2) into $work/cache, and the second pass, which prints the
# verdicts, reads each run's stdout, stderr and exit status from there.  A
# command line the first pass did not see runs live, as before.
phase=live
cache=$work/cache
mkdir -p "$cache"
tsx() { # errmode(> or >>) HOME args...: one tshark run, through the cache
	local mode=$1 h=$2 key
	shift 2
	local argv=("${runas[@]}" env HOME="$h" tshark "$@")
	key=$(printf '%s\0' "${argv[@]}" | md5sum | cut -c1-32)
	if [ "$phase" = record ]; then
		[ -f "$cache/$key.args" ] || printf '%s\0' "${argv[@]}" >"$cache/$key.args"
		[ "$mode" = '>' ] && : >"$work/ts.err"
		return 0
	fi
	if [ ! -f "$cache/$key.rc" ]; then
		(cd / && "${argv[@]}" >"$cache/$key.out" 2>"$cache/$key.err")
		echo $? >"$cache/$key.rc"
	fi
	if [ "$mode" = '>' ]; then
		cat "$cache/$key.err" >"$work/ts.err"
	else
		cat "$cache/$key.err" >>"$work/ts.err"
	fi
	cat "$cache/$key.out"
	return "$(cat "$cache/$key.rc")"
}
ts() { tsx '>' "$home" "$@"; }
ts_builtin() { tsx '>>' "$work/nohome" "$@"; }
# Runs one recorded command line (its .args file) into the cache.
prefetch_one() {
	local a=$1 k=${1%.args} argv
	mapfile -d '' argv <"$a"
	(cd / && "${argv[@]}" >"$k.out" 2>"$k.err")
	echo $? >"$k.rc"
}
export -f prefetch_one

check() { # name condition-description actual expected
	if [ "$3" = "$4" ]; then pass "dissector.$1"; else fail "dissector.$1" "$2: got '$3', want '$4'"; fi
}
meta() { awk -v k="$2" '$1 == k { print $2; exit }' "$caps/$1.meta"; }
# values CAP FIELD [ARGS...]: FIELD's values over all frames, one a line.
values() {
	local cap=$1 field=$2
	shift 2
	ts -r "$caps/$cap.pcap" "$@" -T fields -e "$field" -E occurrence=a | tr ',' '\n' | grep .
}
count_field() { values "$@" | grep -c .; }
# count_value CAP FIELD VALUE [ARGS...]: how many of FIELD's values are VALUE.
count_value() {
	local cap=$1 field=$2 v=$3
	shift 3
	values "$cap" "$field" "$@" | grep -c "^$v\$"
}
# fields_at CAP KEY FIELD...: the FIELDs of the frame the .meta names KEY.
fields_at() {
	local cap=$1 key=$2 f e=()
	shift 2
	for f; do e+=(-e "$f"); done
	ts -r "$caps/$cap.pcap" -Y "frame.number == $(meta "$cap" "$key")" -T fields "${e[@]}" | tr '\t' ' '
}
count_frames() { # cap filter [extra...]
	local cap=$1 filter=$2
	shift 2
	ts -r "$caps/$cap.pcap" "$@" -Y "$filter" -T fields -e frame.number | grep -c .
}

"$pcapgen" "$caps" || {
	fail dissector.pcapgen "generator failed"
	exit 1
}
chmod -R a+rX "$caps"

# All the checks; run twice (see tsx above).
checks() {
	# ---- installation -----------------------------------------------------------
	if ts -G plugins | grep -q 'swiwarp\.so'; then
		pass dissector.plugin_loads_as_user
	else
		fail dissector.plugin_loads_as_user "tshark -G plugins: $(head -c 300 "$work/ts.err")"
	fi
	protos=$(ts -G protocols | awk -F'\t' '$3 == "mpa" || $3 == "rddp" || $3 == "rdmap" { print $3 }' |
		sort | tr '\n' ' ')
	check protocols_registered "filter names" "$protos" "mpa rddp rdmap "
	nfields=$(ts -G fields | grep -cE $'^F\t[^\t]*\t(mpa|rddp|rdmap)\\.')
	if [ "$nfields" -ge 100 ]; then pass dissector.fields_registered; else fail dissector.fields_registered "$nfields fields"; fi

	# ---- clean captures: no malformed frames, no errors ---------------------------
	crc_caps="rev1_crc rev2_crc opcodes terminate markers markers_oneway markers_wrap segmentation"
	nocrc_caps="rev1_nocrc rev2_nocrc"
	for cap in $crc_caps $nocrc_caps; do
		bad=$(count_frames "$cap" '_ws.malformed || _ws.expert.severity == "Error"')
		check "$cap.no_malformed_or_errors" "frames" "$bad" 0
		n=$(count_field "$cap" mpa.ulpdu_len)
		check "$cap.all_fpdus_decoded" "FPDUs" "$n" "$(meta "$cap" fpdus)"
	done
	for cap in $crc_caps; do
		good=$(count_value "$cap" mpa.crc.status 1)
		check "$cap.crc_good_everywhere" "mpa.crc.status==1" "$good" "$(meta "$cap" fpdus)"
	done
	for cap in $nocrc_caps; do
		unv=$(count_value "$cap" mpa.crc.status 2)
		check "$cap.crc_unverified_when_off" "mpa.crc.status==2" "$unv" "$(meta "$cap" fpdus)"
	done

	# ---- ours decodes by default (built-ins stay registered) -----------------------
	n_ours=$(count_frames rev1_crc mpa)
	n_builtin=$(count_frames rev1_crc iwarp_mpa)
	if [ "$n_ours" -gt 0 ] && [ "$n_builtin" -eq 0 ]; then
		pass dissector.default_decoder_is_ours
	else
		fail dissector.default_decoder_is_ours "mpa frames $n_ours, iwarp_mpa frames $n_builtin"
	fi

	# ---- handshake fields -----------------------------------------------------------
	v=$(fields_at rev2_crc mpa_req_frame mpa.rev mpa.flags.h mpa.flags.c mpa.v2.p2p mpa.v2.ird mpa.v2.ord \
		mpa.v2.rtr_write mpa.v2.rtr_read mpa.v2.rtr_send)
	check rev2.request_fields "rev H C P2P IRD ORD W R S" "$v" "2 1 1 1 16 8 1 1 0"
	v=$(fields_at rev2_crc mpa_rep_frame mpa.rep mpa.v2.rtr_write mpa.v2.rtr_read mpa.v2.rtr)
	check rev2.reply_rtr "rep W R kind" "$v" "1 1 0 zero-length RDMA Write"
	warn=$(count_frames rev2_crc 'mpa.rev.unknown || mpa.flags.res_set')
	check rev2.no_spurious_warnings "frames" "$warn" 0
	v=$(fields_at rev2_crc rtr_frame rdmap.opcode rddp.payload_len)
	check rev2.rtr_is_zero_length_write "opcode len" "$v" "0x00 0"

	v=$(ts -r "$caps/reject.pcap" -Y 'mpa.reject' -T fields -e frame.number -e mpa.flags.r -e mpa.rep |
		tr '\t' ' ')
	check reject.flagged "frame R rep" "$v" "$(meta reject mpa_rep_frame) 1 1"

	# ---- CRC: exactly the corrupted frame --------------------------------------------
	bad_frames=$(ts -r "$caps/badcrc.pcap" -Y 'mpa.crc.status == 0' -T fields -e frame.number | tr '\n' ' ')
	check badcrc.only_that_frame "frames with mpa.crc.status==0" "$bad_frames" "$(meta badcrc badcrc_frame) "
	exp_frames=$(ts -r "$caps/badcrc.pcap" -Y 'mpa.crc.bad' -T fields -e frame.number | tr '\n' ' ')
	check badcrc.expert_error "frames with expert mpa.crc.bad" "$exp_frames" "$(meta badcrc badcrc_frame) "
	good=$(count_value badcrc mpa.crc.status 1)
	check badcrc.others_good "good FPDUs" "$good" "$(($(meta badcrc fpdus) - 1))"
	nerr=$(ts -r "$caps/badcrc.pcap" -q -z expert,error | grep -c 'Bad MPA CRC32c')
	check badcrc.in_z_expert "lines in -z expert,error" "$nerr" 1
	bad_off=$(count_frames badcrc 'mpa.crc.status == 0' -o mpa.verify_crc:FALSE)
	check badcrc.pref_disables_check "bad frames with verify_crc off" "$bad_off" 0

	# ---- markers --------------------------------------------------------------------
	for cap in markers markers_oneway markers_wrap; do
		offs=$(values "$cap" mpa.marker.stream_offset)
		check "$cap.marker_count" "markers" "$(echo "$offs" | grep -c .)" "$(meta "$cap" markers)"
		check "$cap.markers_every_512" "offsets not a multiple of 512" \
			"$(echo "$offs" | awk '$1 % 512' | wc -l)" 0
		check "$cap.marker_pointers" "frames with a bad FPDUPTR" \
			"$(count_frames "$cap" 'mpa.marker.bad_fpduptr || mpa.marker.res_set')" 0
		# Markers land in front of and inside the ULPDU length + DDP header too;
		# a wrong removal there garbles headers, which raises warnings/errors.
		inside=$(meta "$cap" markers_inside_header)
		before=$(meta "$cap" markers_before_header)
		warn=$(count_frames "$cap" '_ws.expert.severity == "Warning" || _ws.expert.severity == "Error"')
		if [ "${inside:-0}" -gt 0 ] && [ "${before:-0}" -gt 0 ] && [ "$warn" -eq 0 ]; then
			pass "dissector.$cap.markers_in_headers"
		else
			fail "dissector.$cap.markers_in_headers" "$before before / $inside inside headers, $warn frames with warnings"
		fi
	done
	check markers_wrap.wraps "sequence wrap in the capture" "$(meta markers_wrap wrap)" 1
	good=$(count_value markers_wrap mpa.crc.status 1 -o tcp.relative_sequence_numbers:FALSE)
	check markers_wrap.absolute_seq "good FPDUs with absolute sequence numbers" "$good" \
		"$(meta markers_wrap fpdus)"
	# one direction only: markers only from the responder
	dirs=$(ts -r "$caps/markers_oneway.pcap" -Y mpa.marker -T fields -e tcp.srcport | sort -u | tr '\n' ' ')
	check markers_oneway.per_direction "marker sources" "$dirs" "7174 "

	# ---- segmentation and reassembly -----------------------------------------------------
	v=$(count_field segmentation mpa.ulpdu_len -Y "frame.number == $(meta segmentation many_frame)")
	check segmentation.many_fpdus_per_segment "FPDUs in one segment" "$v" "$(meta segmentation many_count)"
	v=$(fields_at segmentation split_frame mpa.crc.status rddp.payload_len)
	check segmentation.fpdu_across_segments "CRC and payload of the split FPDU" "$v" "1 5000"
	v=$(fields_at segmentation send_reasm_frame rdmap.msg_len)
	check segmentation.send_reassembled "message length" "$v" "$(meta segmentation send_reasm_len)"
	v=$(fields_at segmentation write_reasm_frame rdmap.msg_len)
	check segmentation.write_reassembled "message length" "$v" "$(meta segmentation write_reasm_len)"

	# tagged Writes tracked per STag: the 8-segment Write's STag counts 8
	# segments and 10000 bytes at its last segment, and only its first segment
	# opens the message
	v=$(ts -r "$caps/segmentation.pcap" -Y "frame.number == $(meta segmentation write_reasm_frame)" \
		-T fields -e rdmap.stag.segments -e rdmap.stag.bytes -e rddp.msg_first -E occurrence=l |
		tr '\t' ' ')
	check segmentation.write_tracked_per_stag "segments bytes first (last segment)" "$v" "8 10000 0"
	v=$(count_value segmentation rddp.msg_first 1)
	check segmentation.tagged_messages "tagged messages opened" "$v" 2

	# ---- Read Request <-> Response --------------------------------------------------------
	for cap in rev1_crc rev2_nocrc segmentation; do
		rq=$(meta $cap read_req_frame)
		rs=$(meta $cap read_resp_frame)
		v=$(ts -2 -r "$caps/$cap.pcap" -Y "frame.number == $rq" -T fields -e rdmap.read.response_in)
		check "$cap.read_response_in" "response_in of frame $rq" "$v" "$rs"
		v=$(ts -2 -r "$caps/$cap.pcap" -Y "frame.number == $rs" -T fields -e rdmap.read.request_in \
			-E occurrence=l)
		check "$cap.read_request_in" "request_in of frame $rs" "$v" "$rq"
		v=$(ts -2 -r "$caps/$cap.pcap" -Y "frame.number == $rs && rdmap.read.time" -T fields \
			-e frame.number)
		check "$cap.read_time" "frame with rdmap.read.time" "$v" "$rs"
	done

	# ---- every opcode, every Terminate code ------------------------------------------------
	ops=$(values opcodes rdmap.opcode | sort -u | tr '\n' ' ')
	check opcodes.all_twelve "opcodes seen" "$ops" \
		"0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08 0x09 0x0a 0x0b "
	aops=$(values opcodes rdmap.atomic.op | sort -u | tr '\n' ' ')
	check opcodes.atomic_ops "atomic operations" "$aops" "0 2 "
	v=$(values opcodes rdmap.imm | tr '\n' ' ')
	check opcodes.immediate_data "immediate data" "$v" \
		"0102030405060708 1112131415161718 2122232400000001 "
	# swiwarp's Send with Immediate: only the third carries the flag
	v=$(values opcodes rdmap.imm.send_follows | sed 's/^True$/1/; s/^False$/0/' | tr '\n' ' ')
	check opcodes.imm_send_follows "Send follows flags" "$v" "0 0 1 "
	v=$(values opcodes rdmap.imm.value | tr '\n' ' ')
	check opcodes.imm_value "immediate values" "$v" "0x01020304 0x11121314 0x21222324 "
	n=$(count_field terminate rdmap.term.ctrl)
	check terminate.all_decoded "Terminates" "$n" "$(meta terminate terminates)"
	unk=$(values terminate rdmap.term.error | grep -c 'Unknown')
	check terminate.all_codes_named "unnamed codes" "$unk" 0
	n=$(count_field terminate rdmap.term.rdmap_hdr)
	if [ "$n" -gt 0 ]; then pass dissector.terminate.terminated_headers; else fail dissector.terminate.terminated_headers "none"; fi
	v=$(ts -r "$caps/rev1_crc.pcap" -Y "frame.number == $(meta rev1_crc terminate_frame)" -T fields \
		-e rdmap.term.layer -e rdmap.term.etype -e rdmap.term.ecode -e rdmap.term.seglen -e rddp.qn \
		-e rdmap.rdmardsz -E occurrence=a | tr '\t' ' ')
	check terminate.fields "layer etype ecode seglen qn(s) rdmardsz" "$v" "0x00 0x02 0x06 46 2,1 64"

	# ---- mid-stream pickup -----------------------------------------------------------------
	n=$(count_value midstream mpa.crc.status 1 -Y 'tcp.port == 7174')
	check midstream.crc_streams_decoded "good FPDUs after pickup" "$n" \
		"$(($(meta midstream conn1_fpdus) + $(meta midstream conn2_fpdus)))"
	check midstream.no_bad_crc "bad CRCs" "$(count_frames midstream 'mpa.crc.status == 0')" 0
	n=$(count_frames midstream 'mpa.resync')
	if [ "$n" -ge 2 ]; then pass dissector.midstream.resync_marked; else fail dissector.midstream.resync_marked "$n resynchronised frames, want 2 or more"; fi
	n=$(count_field midstream mpa.marker.stream_offset -Y 'tcp.port == 7174')
	if [ "$n" -gt 0 ]; then pass dissector.midstream.markers_found; else fail dissector.midstream.markers_found "none"; fi
	port=$(meta midstream conn3_port)
	n=$(count_field midstream rdmap.opcode -Y "tcp.port == $port")
	check midstream.nocrc_needs_port "FPDUs without the port preference" "$n" 0
	n=$(count_field midstream rdmap.opcode -Y "tcp.port == $port" -o "mpa.tcp.port:$port")
	check midstream.nocrc_port_pref "FPDUs with mpa.tcp.port" "$n" "$(meta midstream conn3_fpdus)"
	n=$(count_field midstream rdmap.opcode -Y "tcp.port == $port" -d "tcp.port==$port,mpa")
	check midstream.nocrc_decode_as "FPDUs with Decode As" "$n" "$(meta midstream conn3_fpdus)"

	# ---- expert infos for protocol errors ---------------------------------------------------
	exp_at() { # cap filter frame-key
		ts -r "$caps/$1.pcap" -Y "$2" -T fields -e frame.number | tr '\n' ' '
	}
	check errors.msn_gap "frames" "$(exp_at errors rddp.msn.gap)" "$(meta errors msn_gap_frame) "
	check errors.wrong_queue "frames" "$(exp_at errors rdmap.opcode.qn)" "$(meta errors bad_qn_frame) "
	check errors.unknown_opcode "frames" "$(exp_at errors rdmap.opcode.unknown)" "$(meta errors bad_opcode_frame) "
	check errors.unmatched_read_response "frames" "$(exp_at errors rdmap.read.unmatched)" \
		"$(meta errors unmatched_resp_frame) "
	check errors.mo_overlap "frames" "$(exp_at errors rddp.mo.overlap)" "$(meta errors mo_overlap_frame) "
	check errors.mo_gap "frames" "$(exp_at errors rddp.mo.gap)" "$(meta errors mo_gap_frame) "
	check errors.to_overlap "frames" "$(exp_at errors rddp.to.overlap)" "$(meta errors to_overlap_frame) "
	check errors.wrong_buffer_model "frames" "$(exp_at errors rdmap.opcode.model)" \
		"$(meta errors bad_model_frame) "
	check errors.read_size "frames" "$(exp_at errors rdmap.read.size)" "$(meta errors read_size_frame) "
	check errors.term_short "frames" "$(exp_at errors rdmap.term.short)" "$(meta errors term_short_frame) "
	check errors.msn_gap_only_once "frames with rddp.msn.gap" "$(count_frames errors rddp.msn.gap)" 1
	check errors.clean_frame_clean "experts in the good frame" \
		"$(count_frames errors "_ws.expert && frame.number == $(meta errors ok_frame)")" 0

	# ---- -z statistic ----------------------------------------------------------------------
	st=$(ts -q -z rdmap,tree -r "$caps/rev1_crc.pcap")
	v=$(echo "$st" | awk '$1 == "RDMA" && $2 == "Read" && $3 == "Request" { print $4 }')
	check stats.read_requests "RDMA Read Request count" "$v" 1
	v=$(echo "$st" | awk '$1 == "RDMA" && $2 == "Read" && $3 == "Response" { print $4 }')
	check stats.read_response_segments "RDMA Read Response segments" "$v" 3
	v=$(echo "$st" | grep -A1 '^ *RDMA Write  ' | awk '$1 == "payload" { print $3 }')
	check stats.write_bytes "RDMA Write payload bytes" "$v" 100
	v=$(echo "$st" | grep -A1 '^ *RDMA Read Response  ' | awk '$1 == "payload" { print $3 }')
	check stats.read_response_bytes "RDMA Read Response payload bytes" "$v" 3000
	v=$(echo "$st" | grep -c '^ connection 1: .*:7174  ')
	check stats.per_connection "connection rows" "$v" 1
	v=$(echo "$st" | grep -c 'RDMA Read latency (ms), all connections *1 ')
	check stats.read_latency "latency rows with one sample" "$v" 1

	# ---- robustness: mutated captures must not crash tshark ---------------------------------
	# pcapgen's fuzz mode replaces random TCP payload bytes after CRCs and markers
	# were computed (broken lengths, headers, markers, CRCs on intact TCP
	# streams); editcap -E also hits the Ethernet/IP/TCP headers.
	crashed=0
	for seed in 1 2 3; do
		# One directory per seed, made in the first pass, so that the
		# cached runs and the copies below are of the same files.
		fz=$work/fz$seed
		if [ ! -d "$fz" ]; then
			PCAPGEN_FUZZ_SEED=$seed "$pcapgen" "$fz" >/dev/null
			chmod -R a+rX "$fz"
		fi
		for cap in markers segmentation midstream terminate rev2_crc; do
			if ! ts -2 -r "$fz/$cap.pcap" -V -o mpa.tcp.port:7175 >/dev/null ||
				grep -qi 'dissector bug' "$work/ts.err"; then
				crashed=$((crashed + 1))
				cp "$fz/$cap.pcap" "$build/dissector-fuzz-crash-$cap-$seed.pcap" 2>/dev/null
			fi
		done
		fzcap=$work/fuzz$seed.pcap
		if [ ! -f "$fzcap" ]; then
			editcap -E 0.02 --seed "$seed" "$caps/rev1_crc.pcap" "$fzcap"
			chmod a+r "$fzcap"
		fi
		if ! ts -r "$fzcap" -V >/dev/null || grep -qi 'dissector bug' "$work/ts.err"; then
			crashed=$((crashed + 1))
			cp "$fzcap" "$build/dissector-fuzz-crash-editcap-$seed.pcap" 2>/dev/null
		fi
	done
	check fuzz.no_crash "crashing mutated captures" "$crashed" 0

	# Golden captures from the lab: NAME.pcap or NAME.pcap.gz (unpacked here).
	golden_dir=$top/tests/dissector/captures
	golden_names() {
		local g name
		for g in "$golden_dir"/*.pcap "$golden_dir"/*.pcap.gz; do
			[ -f "$g" ] || continue
			name=$(basename "$g")
			name=${name%.gz}
			name=${name%.pcap}
			case $g in
			*.gz) zcat "$g" >"$caps/$name.pcap" ;;
			*) cat "$g" >"$caps/$name.pcap" ;;
			esac
			chmod 644 "$caps/$name.pcap"
			echo "$name"
		done
	}

	# ---- side by side with the built-in dissectors (informational) ----------------------------
	table=$build/dissector-compare.md
	{
		echo "| capture | frames | FPDUs (ours / built-in) | CRC-verified good (ours / built-in) | bad CRC flagged (ours / built-in) | malformed or error frames (ours / built-in) | Read matched (ours / built-in) |"
		echo "|---|---|---|---|---|---|---|"
		goldens=$(golden_names)
		for cap in rev1_crc rev1_nocrc rev2_crc rev2_nocrc opcodes terminate markers markers_oneway \
			markers_wrap segmentation badcrc midstream errors $goldens; do
			# -T fields prints one line per frame
			ts -r "$caps/$cap.pcap" -T fields -e mpa.ulpdu_len -e mpa.crc.status -E occurrence=a \
				>"$work/ours.txt"
			f=$(wc -l <"$work/ours.txt")
			o_fpdu=$(cut -f1 "$work/ours.txt" | tr ',' '\n' | grep -c .)
			o_good=$(cut -f2 "$work/ours.txt" | tr ',' '\n' | grep -c '^1$')
			o_bad=$(cut -f2 "$work/ours.txt" | tr ',' '\n' | grep -c '^0$')
			ts_builtin -r "$caps/$cap.pcap" -V >"$work/builtin.txt"
			b_fpdu=$(grep -c 'ULPDU length:' "$work/builtin.txt")
			b_good=$(grep -c 'Good CRC32' "$work/builtin.txt")
			b_bad=$(grep -c 'Bad CRC32' "$work/builtin.txt")
			o_mal=$(count_frames "$cap" '_ws.malformed || _ws.expert.severity == "Error"')
			b_mal=$(ts_builtin -r "$caps/$cap.pcap" -Y '_ws.malformed || _ws.expert.severity == "Error"' \
				-T fields -e frame.number | grep -c .)
			o_rd=$(ts -2 -r "$caps/$cap.pcap" -Y rdmap.read.response_in -T fields -e frame.number | grep -c .)
			echo "| $cap | $f | $o_fpdu / $b_fpdu | $o_good / $b_good | $o_bad / $b_bad | $o_mal / $b_mal | $o_rd / 0 (no such feature) |"
		done
	} >"$table" 2>/dev/null
	echo "side-by-side table written to $table:"
	cat "$table"

	# ---- real siw traffic from the lab (golden capture) ----------------------------------------
	names=$(golden_names)
	if [ -n "$names" ]; then
		for name in $names; do
			n=$(count_field "$name" mpa.ulpdu_len)
			# Captures with injected faults say "# faults" in their .expect
			# (which pins each fault to its frame); for them only malformed
			# frames are a failure here.
			# Wireshark's rpcordma completes an RPC-over-RDMA write chunk on
			# its second pass only, so one-pass tshark flags such a READ
			# reply malformed (Documentation/dissector.md): captures with
			# write chunks say "# two-pass" in their .expect and are judged
			# on tshark -2 here, as their .expect lines are.
			passes=()
			grep -qx '# two-pass' "$golden_dir/$name.expect" 2>/dev/null && passes=(-2)
			if grep -qx '# faults' "$golden_dir/$name.expect" 2>/dev/null; then
				bad=$(count_frames "$name" '_ws.malformed' "${passes[@]}")
			else
				bad=$(count_frames "$name" '_ws.malformed || _ws.expert.severity == "Error"' \
					"${passes[@]}")
			fi
			if [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]; then
				pass "dissector.golden.$name.decoded"
			else
				fail "dissector.golden.$name.decoded" "$n FPDUs, $bad malformed/error frames"
			fi
			# every Read Request answered, and answered by the frame that names
			# it: request -> response_in and response -> request_in agree
			nreq=$(count_frames "$name" 'rdmap.opcode == 1')
			ts -2 -r "$caps/$name.pcap" -Y 'rdmap.read.response_in' -T fields -e frame.number \
				-e rdmap.read.response_in -E occurrence=l | sort >"$work/fwd.txt"
			ts -2 -r "$caps/$name.pcap" -Y 'rdmap.read.request_in && rdmap.read.time' -T fields \
				-e rdmap.read.request_in -e frame.number -E occurrence=l | sort >"$work/back.txt"
			ok=$(comm -12 "$work/fwd.txt" "$work/back.txt" | grep -c .)
			if [ "$nreq" -gt 0 ] && [ "$ok" -eq "$nreq" ]; then
				pass "dissector.golden.$name.reads_matched"
			elif [ "$nreq" -eq 0 ]; then
				echo "golden $name has no RDMA Read"
			else
				fail "dissector.golden.$name.reads_matched" "$ok of $nreq Read Requests matched both ways"
			fi
			# NAME.expect: "display filter<TAB>frames" lines, all counted in one
			# tshark -2 pass (-z io,stat with one column per filter)
			if [ -f "$golden_dir/$name.expect" ]; then
				filters=()
				wants=()
				while IFS=$'\t' read -r filter want; do
					case $filter in '#'* | '') continue ;; esac
					filters+=("$filter")
					wants+=("$want")
				done <"$golden_dir/$name.expect"
				spec=$(printf ',%s' "${filters[@]}")
				row=$(ts -2 -r "$caps/$name.pcap" -q -z "io,stat,0$spec" | grep -E '^\| +[0-9.]+ <> ')
				for i in "${!filters[@]}"; do
					got=$(echo "$row" | awk -F'|' -v c=$((2 * i + 3)) '{ gsub(/ /, "", $c); print $c }')
					check "golden.$name.expect$((i + 1))" "frames matching '${filters[$i]}'" "$got" \
						"${wants[$i]}"
				done
			fi
		done
	else
		skip dissector.golden "no lab captures in tests/dissector/captures yet"
	fi
}

phase=record
checks >/dev/null 2>&1
t0=$(date +%s)
find "$cache" -name '*.args' -print0 |
	xargs -0 -r -n 1 -P "${DISSECTOR_JOBS:-2}" bash -c 'prefetch_one "$1"' _
nrec=$(find "$cache" -name '*.args' | wc -l)
phase=live
checks
echo "dissector: $nrec distinct tshark runs, ${DISSECTOR_JOBS:-2} at a time, in $(($(date +%s) - t0))s"
exit 0
