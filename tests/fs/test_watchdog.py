#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""With WATCHDOG_USEC set (systemd's WatchdogSec=), rpmafs sends WATCHDOG=1
from its loop thread at half the interval, each with a one-line STATUS=
that counts the peers connected and the messages sent. Null peers."""
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
    sock.settimeout(60)  # a safety net: the datagrams are the events
    os.environ["NOTIFY_SOCKET"] = sock_path
    os.environ["WATCHDOG_USEC"] = "200000"  # a ping every 100 ms
    try:
        spool = Spool(work, {"rpmafs": {"slots": 2}, "alpha": {"type": "null"}})
        logf = open(spool.log, "a")
        spool.proc = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", spool.config,
                                       spool.mnt], stdout=logf, stderr=logf)
        work.procs.append(spool.proc)
    finally:
        del os.environ["NOTIFY_SOCKET"]
        del os.environ["WATCHDOG_USEC"]
    msg = sock.recv(4096).decode()
    check(msg.startswith("READY=1\n"), "first notification: %r" % msg)
    head = "WATCHDOG=1\nSTATUS=mounted %s: 1 of 1 peers connected, " % spool.mnt
    msg = sock.recv(4096).decode()
    check(msg == head + "0 messages sent, 0 failed", "first ping: %r" % msg)
    check(spool.write("alpha", b"hello") == 0, "a write failed")
    # the pings go on, and the next ones count the message
    for _ in range(100):
        msg = sock.recv(4096).decode()
        check(msg.startswith(head), "ping: %r" % msg)
        if msg == head + "1 messages sent, 0 failed":
            break
    else:
        fail("100 pings and none counts the message: %r" % msg)
    subprocess.run(["fusermount3", "-u", spool.mnt], check=True)
    # pings may still come while it drains; then STOPPING=1
    for _ in range(100):
        msg = sock.recv(4096).decode()
        if not msg.startswith("WATCHDOG=1\n"):
            break
    check(msg == "STOPPING=1", "after the unmount: %r" % msg)
    check(spool.proc.wait(60) == 0, "rpmafs exit status")


sys.exit(run("watchdog", body))
