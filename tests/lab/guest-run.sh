#!/bin/bash
# Runs as PID 1 inside every lab guest, after the initramfs has switched into
# the overlay root.  The host wrote our settings to /lab/out/g<ID>/env (already
# sourced by the initramfs).  We set up the machine the way the lab API
# promises (see README.md), run the guest command, save its exit status and
# dmesg to $LAB_OUT, and power off.  Never returns.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux} LANG=C.UTF-8
# No set -e/-u here: PID 1 exiting panics the guest.

log() { echo "lab-guest[$LAB_ID]: $*"; }
# uptime_s: seconds since the guest kernel started (for the set-up timings
# in the console log: where a boot's time goes).
uptime_s() { local u _; read -r u _ </proc/uptime; echo "$u"; }
log "set-up starts at $(uptime_s) s"

# kmemleak_check: on a kernel with kmemleak (the debug kernel, issue 15),
# scan for unreferenced objects and keep the report in $LAB_OUT/kmemleak.
# Leaks whose allocation stack passes through the RDMA stack or our module
# become a "BUG: kmemleak:" kernel line, which the host's dmesg check fails
# on; other boot-time reports of the kernel itself are only kept.  kmemleak
# reports an object once it is 5 s old: the second scan catches what was
# freed-but-lost at the very end (rmmod).
kmemleak_check() {
	local k=/sys/kernel/debug/kmemleak n
	[ -w "$k" ] || return 0
	echo scan >"$k" 2>/dev/null
	sleep 6
	echo scan >"$k" 2>/dev/null
	cat "$k" >"$LAB_OUT/kmemleak" 2>/dev/null
	n=$(awk '/^unreferenced object/ { o = 1; hit = 0; next }
		o && /(swiwarp|siw_|ib_core|iw_cm|rdma_cm|ib_uverbs)/ && !hit { hit = 1; n++ }
		END { print n + 0 }' "$LAB_OUT/kmemleak")
	[ "$n" -eq 0 ] || echo "BUG: kmemleak: $n unreferenced object(s) allocated through the RDMA stack, see $LAB_OUT/kmemleak" >/dev/kmsg
}

finish() {
	local rc=$1
	kmemleak_check
	dmesg >"$LAB_OUT/dmesg" 2>&1
	echo "$rc" >"$LAB_OUT/status.tmp" && mv "$LAB_OUT/status.tmp" "$LAB_OUT/status"
	sync
	log "done, status $rc; powering off"
	poweroff -f
	sleep 10
	echo o >/proc/sysrq-trigger
}

# The initramfs mounted /dev/pts, /dev/shm, /run, debugfs and configfs
# (initramfs-init.sh).  From here on, builtins where they do: every program
# started is read over 9p.
echo "lab$LAB_ID" >/proc/sys/kernel/hostname
echo "lab$LAB_ID" >/etc/hostname
echo "127.0.0.1 localhost" >/etc/hosts
for ip in $LAB_IPS; do echo "$ip lab${ip##*.}" >>/etc/hosts; done
# Don't let a crashed systemd-era config get in the way: nothing else runs.
: >/etc/fstab

fail_setup() {
	log "setup failed: $*"
	echo "FAIL: lab guest $LAB_ID setup: $*" >>"$LAB_OUT/results"
	finish 125
}

# The initramfs loaded these (mkinitramfs.sh); modprobe only what it did not.
lab_modprobe() { [ -d "/sys/module/$1" ] || modprobe "$1" || fail_setup "modprobe $1"; }
lab_modprobe virtio_net
log "virtio_net at $(uptime_s) s"
for _ in {1..100}; do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
[ -e /sys/class/net/eth0 ] || fail_setup "no eth0"
ip -batch - <<EOF || fail_setup "ip: lo up, $LAB_IP/24 on eth0, eth0 up"
link set lo up
addr add $LAB_IP/24 dev eth0
link set eth0 up
EOF
for m in ib_core ib_uverbs iw_cm rdma_cm rdma_ucm; do
	lab_modprobe "$m"
done
log "RDMA core modules at $(uptime_s) s"
ulimit -l unlimited
ulimit -c 0

cd "$LAB_TOP" || fail_setup "no checkout at $LAB_TOP"

if [ "${LAB_MODE:-run}" = shell ] && [ "$LAB_ID" = 1 ]; then
	log "interactive shell; 'exit' or Ctrl-D powers the guest off"
	stty -F /dev/ttyS0 sane 2>/dev/null
	setsid -c bash -il </dev/ttyS0 >/dev/ttyS0 2>&1
	finish $?
fi

# The hang report: shortly before the host's timeout kills us, write what
# every process is waiting for, and the kernel stacks of the blocked ones, to
# $LAB_OUT/hang-report (the host prints it with the timeout's failure); the
# kernel's list of blocked tasks goes to the console.  Without it a hung
# guest in CI leaves nothing but "timed out".
hang_report() {
	local pid
	{
		echo "# hang report at $(cut -d' ' -f1 /proc/uptime) s uptime: STAT WCHAN COMM ARGS"
		# User processes, and kernel threads only when blocked.
		timeout 10 ps -eo stat=,pid=,wchan:32=,comm=,args= |
			awk '{ st = substr($1, 1, 1); if (st != "D" && $5 ~ /^\[/) next
			       line = st " " $2 " " $3 " " $4; for (i = 5; i <= NF && i < 12; i++) line = line " " $i
			       print line }' | sort -k1,1 | head -n 80
		for pid in $(timeout 10 ps -eo stat=,pid= | awk '$1 ~ /^D/ { print $2 }'); do
			echo "# kernel stack of $pid ($(cat /proc/$pid/comm 2>/dev/null))"
			cat "/proc/$pid/stack" 2>/dev/null | head -n 20
		done
	} >"$LAB_OUT/hang-report.tmp" 2>&1 && mv "$LAB_OUT/hang-report.tmp" "$LAB_OUT/hang-report"
	echo w >/proc/sysrq-trigger 2>/dev/null
}
# 100 s before the end: the host's clock also counted our boot.
if [ "${LAB_TIMEOUT:-0}" -ge 200 ]; then
	(sleep $((LAB_TIMEOUT - 100)) && hang_report) </dev/null >/dev/null 2>&1 &
fi

log "set-up done at $(uptime_s) s"
log "running: $LAB_CMD"
# The command's output goes to the serial console and to $LAB_OUT/output.
# Not a plain pipe: background processes the command leaves behind would
# keep it open and we would never get to power off.
exec {tee_fd}> >(tee "$LAB_OUT/output")
teepid=$!
bash -c "$LAB_CMD" </dev/null >&$tee_fd 2>&1
rc=$?
exec {tee_fd}>&-
# Let tee drain what the command wrote (it only lingers past this if a
# leftover process still holds the pipe).
for _ in $(seq 50); do kill -0 "$teepid" 2>/dev/null || break; sleep 0.1; done
finish "$rc"
