#!/usr/bin/env python3
"""Run one QMP command on a lab guest's QEMU and print its return value.

  qmp.py SOCKET COMMAND [ARGUMENTS-AS-JSON]

SOCKET is the guest's QMP socket (tests/lab/lab starts every background
guest with one, $sockdir/qmpI).  Exits 0 when QEMU returned, 1 with QEMU's
error text on stderr when it refused, 2 when the socket could not be used.
Example: qmp.py /tmp/lab.abc/qmp1 set_link '{"name": "n0", "up": false}'
"""
import json
import socket
import sys


def reply(f):
    """The next line that answers a command; asynchronous events skipped."""
    while True:
        line = f.readline()
        if not line:
            raise OSError("QEMU closed the QMP socket")
        msg = json.loads(line)
        if "return" in msg or "error" in msg:
            return msg


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    args = json.loads(sys.argv[3]) if len(sys.argv) == 4 else {}
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(sys.argv[1])
        f = s.makefile("rw")
        json.loads(f.readline())  # the greeting
        f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
        f.flush()
        reply(f)
        cmd = {"execute": sys.argv[2]}
        if args:
            cmd["arguments"] = args
        f.write(json.dumps(cmd) + "\n")
        f.flush()
        msg = reply(f)
    except (OSError, ValueError) as e:
        print(f"qmp.py: {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    if "error" in msg:
        print(f"qmp.py: {sys.argv[2]}: {msg['error'].get('desc', msg['error'])}", file=sys.stderr)
        return 1
    print(json.dumps(msg["return"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
