#!/bin/bash
# A remote-shell agent for Open MPI's rsh launcher inside the lab (guests have
# no ssh): `rsh.sh HOST COMMAND...` drops COMMAND into the run's shared 9p
# directory for guest HOST, whose rsh-server loop (guest.sh) runs it with
# bash -c (as ssh would) and leaves its exit status; we wait and return it.
host=$1
shift
d=${FLOWS_RSH_DIR:?}
id=$(date +%s%N).$$
printf '%s\n' "$*" >"$d/$host.$id.tmp"
mv "$d/$host.$id.tmp" "$d/$host.$id.cmd"
while [ ! -e "$d/$host.$id.rc" ]; do sleep 0.1; done
cat "$d/$host.$id.out" >&2
exit "$(cat "$d/$host.$id.rc")"
