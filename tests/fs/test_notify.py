#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The service manager hears READY=1 once the spool directory is mounted
and takes writes, and STOPPING=1 when it unmounts (sd_notify's protocol,
as systemd's Type=notify reads it; docs/design.md §4.5). Null peers."""
import socket
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402


def body(work):
    need_fuse()
    sock_path = work.path("notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.settimeout(60)  # a safety net: the datagram is the event
    os.environ["NOTIFY_SOCKET"] = sock_path
    try:
        spool = Spool(work, {"rpmafs": {"slots": 2}, "alpha": {"type": "null"}})
        logf = open(spool.log, "a")
        spool.proc = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", spool.config,
                                       spool.mnt], stdout=logf, stderr=logf)
        work.procs.append(spool.proc)
    finally:
        del os.environ["NOTIFY_SOCKET"]
    msg = sock.recv(4096).decode()
    check(msg.startswith("READY=1\n") and "STATUS=mounted %s: 1 peers" % spool.mnt in msg,
          "first notification: %r" % msg)
    # at READY the mount is there and a write goes through at once
    check(os.path.ismount(spool.mnt), "READY=1 before the mount")
    check(spool.write("alpha", b"hello") == 0, "a write right after READY=1 failed")
    subprocess.run(["fusermount3", "-u", spool.mnt], check=True)
    msg = sock.recv(4096).decode()
    check(msg == "STOPPING=1", "second notification: %r" % msg)
    check(spool.proc.wait(60) == 0, "rpmafs exit status")


sys.exit(run("notify", body))
