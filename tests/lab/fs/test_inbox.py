#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The inbox (docs/design.md §13, issue 16): a mount with [rpmafs] listen
receives; reading /inbox gives one record per read, blocks (or EAGAIN with
O_NONBLOCK) with nothing waiting, and poll() wakes on arrival; a plain
Debian-librpma sender is accepted; allow rejects; two mounts talk
request/response; unmount with unread messages is clean."""
import select
import stat
import sys
import threading

from fslab import *

SYS_READ = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)


def in_read(thread):
    try:
        with open("/proc/self/task/%d/syscall" % thread.native_id) as f:
            return f.read().split()[0] == str(SYS_READ)
    except (OSError, IndexError):
        return False


def inbox_status(spool):
    st = {}
    with open(os.path.join(spool.mnt, "inbox.status")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(": ")
            st[k] = int(v) if v.isdigit() else v
    return st


def read_record(path):
    """One read(2) of the inbox: exactly one lines record."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536)
    finally:
        os.close(fd)


def body(work):
    a, b = need_lab()
    pa, pb = next_port(), next_port()
    # B only receives at first; A sends to it through spool b
    mb = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb)}, "a": {"address": a, "port": pa}},
               name="b").mount(wait_connected=False)
    inbox_b = os.path.join(mb.mnt, "inbox")
    st = os.stat(inbox_b)
    check(stat.S_IMODE(st.st_mode) == 0o400 and st.st_uid == os.getuid(), "mode %o" % st.st_mode)
    check(inbox_status(mb)["state"] == "listening", "status %s" % inbox_status(mb))
    check(os.getxattr(inbox_b, "user.rpma.state") == b"listening", "xattr state")

    # nothing waiting: O_NONBLOCK read is EAGAIN, poll() times out
    fd = os.open(inbox_b, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.read(fd, 100)
        fail("a read with nothing waiting returned")
    except BlockingIOError:
        pass
    p = select.poll()
    p.register(fd, select.POLLIN)
    check(p.poll(300) == [], "poll reported an empty inbox readable")

    ma = Spool(work, {"rpmafs": {"listen": "%s:%d" % (a, pa)}, "b": {"address": b, "port": pb}},
               name="a").mount(wait_connected=False)
    ma.wait_state("b", "connected")
    # poll wakes on the arrival (no timer: the wait is the safety net only)
    ma.sh("echo hello > b")
    ev = p.poll(SAFETY_S * 1000)
    check(ev and ev[0][1] & select.POLLIN, "poll did not wake: %s" % ev)
    os.close(fd)
    ma.sh(": > b")
    ma.sh("echo world > b")
    wait_until(lambda: inbox_status(mb)["received"] == 3, SAFETY_S, lambda: inbox_status(mb))
    # head -n 1 takes exactly one message and leaves the rest
    r = mb.sh("head -n 1 inbox")
    check(r.stdout == "hello\n", "head got %r" % r.stdout)
    # the 0-byte message is sent at the RELEASE of `: > b`, which close(2) does not
    # wait for: it may come after "world" (the spool's order, not the inbox's)
    two = sorted([read_record(inbox_b), read_record(inbox_b)])
    check(two == [b"\n", b"world\n"], "the 0-byte message and world: %r" % two)
    ma.sh("echo again > b")
    r = subprocess.run(["bash", "-c", "read -r m < inbox; echo \"[$m]\""], cwd=mb.mnt,
                       capture_output=True, text=True)
    check(r.stdout == "[again]\n", "bash read got %r" % r.stdout)
    st = inbox_status(mb)
    check(st["read"] == 4 and st["waiting"] == 0 and st["connections"] >= 1, "status %s" % st)

    # a blocked read is woken by the arrival
    got = []
    t = threading.Thread(target=lambda: got.append(read_record(inbox_b)))
    t.start()
    wait_until(lambda: in_read(t), SAFETY_S, "the reader to block in read(2)")
    ma.sh("echo wake > b")
    t.join(SAFETY_S)
    check(got == [b"wake\n"], "the blocked read got %r" % got)

    # a blocked cat is interrupted by SIGINT
    cat = subprocess.Popen(["cat", inbox_b], stdout=subprocess.PIPE)
    wait_until(lambda: inbox_status(mb)["readers"] == 1, SAFETY_S, "cat to block")
    cat.send_signal(signal.SIGINT)
    check(cat.wait(SAFETY_S) != 0, "cat was not interrupted")

    # competing readers: each message to exactly one
    for i in range(6):
        ma.sh("echo m%d > b" % i)
    wait_until(lambda: inbox_status(mb)["waiting"] == 6, SAFETY_S, lambda: inbox_status(mb))
    f1, f2 = os.open(inbox_b, os.O_RDONLY), os.open(inbox_b, os.O_RDONLY)
    seen = [os.read(f1 if i % 2 else f2, 100) for i in range(6)]
    os.close(f1)
    os.close(f2)
    check(seen == [b"m%d\n" % i for i in range(6)], "readers got %r" % seen)

    # request/response: B answers in a while-read loop, A asks and reads the reply
    loop = subprocess.Popen(["bash", "-c", "while read -r m; do echo \"pong $m\" > a; done < inbox"],
                            cwd=mb.mnt)
    work.procs.append(loop)
    mb.wait_state("a", "connected")
    r = subprocess.run(["bash", "-c", "echo ping > b; read -r reply < inbox; echo \"$reply\""],
                       cwd=ma.mnt, capture_output=True, text=True, timeout=SAFETY_S)
    check(r.stdout == "pong ping\n", "reply %r" % r.stdout)
    loop.send_signal(signal.SIGTERM)
    loop.wait(SAFETY_S)

    # unmount with unread messages: clean exit
    ma.sh("echo unread1 > b; echo unread2 > b")
    wait_until(lambda: inbox_status(mb)["waiting"] == 2, SAFETY_S, lambda: inbox_status(mb))
    check(mb.unmount() == 0, "unmount of B failed")

    # allow: a mount that allows only another network rejects A
    pc = next_port()
    mc = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pc), "allow": "10.254.254.0/24"}},
               name="c").mount(wait_connected=False)
    md = Spool(work, {"c": {"address": b, "port": pc, "send_timeout_ms": 0}}, name="d").mount(
        wait_connected=False)
    wait_until(lambda: inbox_status(mc)["rejected"] >= 1, SAFETY_S, lambda: inbox_status(mc))
    check(inbox_status(mc)["connections"] == 0, "status %s" % inbox_status(mc))
    md.unmount()
    mc.unmount()

    # a plain Debian-librpma sender (no private data): the lab's sequence, len records
    plain = os.environ.get("PLAIN_SEND")
    if plain:
        pe = next_port()
        me = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pe), "inbox_format": "len",
                                     "inbox_slots": 4, "inbox_max_message": "1MiB"}},
                   name="e").mount(wait_connected=False)
        log = open(work.path("plain-send.log"), "w")
        ps = subprocess.Popen([plain, b, str(pe)], stdout=log, stderr=log)
        work.procs.append(ps)
        sizes, fd = [], os.open(os.path.join(me.mnt, "inbox"), os.O_RDONLY)
        for _ in range(8):
            hdr = os.read(fd, 4)
            check(len(hdr) == 4, "short header")
            n, left = int.from_bytes(hdr, "little"), None
            left = n
            while left:
                left -= len(os.read(fd, left))
            sizes.append(n)
        os.close(fd)
        check(ps.wait(SAFETY_S) == 0, "plain sender failed")
        check(sizes == [0, 0, 1, 7, 4096, 65536, 1 << 20, 0], "sizes %s" % sizes)
        me.unmount()
    ma.unmount()


sys.exit(run("inbox", body))
