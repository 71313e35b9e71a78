#!/bin/bash
# A Slurm cluster across lab guests, for tests/flows/lab-guest.sh (libdpi
# started by srun --mpi=pmix).  Source after tests/lab/lib.sh.  The guests
# run no systemd, so the daemons are started here, as root, with every file
# they write under $SLURM_LAB_DIR (guest tmpfs) and their logs in $LAB_OUT:
#   slurm_key                  (guest 1, before a barrier) one munge key for all
#   slurm_conf                 write $SLURM_CONF: guests lab1..labN, 192.0.2.I
#   slurm_start                (every guest, after the key) munged, slurmd;
#                              on guest 1 slurmctld first
#   slurm_wait_idle N SECS     (guest 1) until N nodes are idle
#   slurm_stop                 (every guest) stop what slurm_start started
# Slurm and munge come from Debian (tools/setup-host.sh installs them with
# their daemons neither started nor enabled on the host).
SLURM_LAB_DIR=/run/slurm-lab
export SLURM_CONF=$SLURM_LAB_DIR/slurm.conf
SLURM_KEY=$LAB_SHARED/slurm/munge.key
SLURM_LOGS=$LAB_OUT/slurm
mkdir -p "$SLURM_LOGS"

slurm_key() {
	mkdir -p "$(dirname "$SLURM_KEY")"
	dd if=/dev/urandom of="$SLURM_KEY.tmp" bs=1024 count=1 status=none && mv "$SLURM_KEY.tmp" "$SLURM_KEY"
}

# slurm_conf: the essentials for a root-run lab cluster (Documentation/flows.md,
# "Launching with Slurm").  No cgroups (proctrack/linuxproc, task/none), no
# accounting; MpiDefault=none, so only srun --mpi=pmix gives a step PMIx.
slurm_conf() {
	local i cpus
	cpus=$(nproc)
	mkdir -p "$SLURM_LAB_DIR/ctld" "$SLURM_LAB_DIR/spool"
	{
		cat <<EOF
ClusterName=swiwarplab
SlurmctldHost=lab1(192.0.2.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_LAB_DIR/munge.socket
StateSaveLocation=$SLURM_LAB_DIR/ctld
SlurmdSpoolDir=$SLURM_LAB_DIR/spool
SlurmctldPidFile=$SLURM_LAB_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_LAB_DIR/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmdParameters=config_overrides
EOF
		for i in $(seq 1 "$LAB_N"); do
			echo "NodeName=lab$i NodeAddr=192.0.2.$i CPUs=$cpus State=UNKNOWN"
		done
		echo "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
	} >"$SLURM_CONF"
}

# munged insists on a socket directory everyone may enter and on a key only
# its own user (root here) can read.  slurmd loads a cgroup plugin even with
# proctrack/linuxproc and task/none, and fails without a cgroup file system
# ("No filesystem mounted on /sys/fs/cgroup"; the guests mount none); a
# tmpfs there makes it pick cgroup/v1, which wants the named hierarchy
# "systemd" mounted too ("can't stat /sys/fs/cgroup/systemd/"), and then
# uses neither.
# On failure SLURM_WHY says which step failed.
slurm_start() {
	local k=$SLURM_LAB_DIR/munge.key c=/sys/fs/cgroup
	SLURM_WHY="cgroup mounts on $c"
	if ! mountpoint -q $c; then
		mount -t tmpfs cgroup_root $c && mkdir $c/systemd &&
			mount -t cgroup -o none,name=systemd cgroup $c/systemd || return 1
	fi
	mkdir -p "$SLURM_LAB_DIR"
	chmod 0755 "$SLURM_LAB_DIR"
	slurm_conf
	SLURM_WHY="no munge key $SLURM_KEY"
	cp "$SLURM_KEY" "$k" && chmod 0400 "$k" || return 1
	SLURM_WHY="munged failed (its log: $SLURM_LOGS/munged.g$LAB_ID.log)"
	munged --socket="$SLURM_LAB_DIR/munge.socket" --key-file="$k" --log-file="$SLURM_LOGS/munged.g$LAB_ID.log" \
		--pid-file="$SLURM_LAB_DIR/munged.pid" --seed-file="$SLURM_LAB_DIR/munged.seed" || return 1
	SLURM_WHY="slurmctld failed (its log: $SLURM_LOGS/slurmctld.log)"
	if [ "$LAB_ID" = 1 ]; then
		slurmctld -L "$SLURM_LOGS/slurmctld.log" || return 1
	fi
	SLURM_WHY="slurmd failed (its log: $SLURM_LOGS/slurmd.g$LAB_ID.log)"
	slurmd -N "lab$LAB_ID" -L "$SLURM_LOGS/slurmd.g$LAB_ID.log"
}

# slurm_wait_idle N SECS: true once sinfo counts N idle nodes.
slurm_wait_idle() { lab_wait_until "$2" slurm_idle_at_least "$1"; }
slurm_idle_at_least() { # N
	local idle
	idle=$(sinfo -h -t idle -o '%D' 2>/dev/null)
	[ "${idle:-0}" -ge "$1" ]
}

slurm_stop() {
	local p
	for p in slurmd slurmctld munged; do
		[ -s "$SLURM_LAB_DIR/$p.pid" ] && kill "$(cat "$SLURM_LAB_DIR/$p.pid")" 2>/dev/null
	done
}
