#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The inbox (docs/design.md §13): a mount with [rpmafs] listen
receives. Reading /inbox gives one record per read, blocks (EAGAIN with
O_NONBLOCK) with nothing waiting, and poll() wakes on arrival; plain
Debian-librpma senders get no acknowledgement traffic, rpmafs senders are
acknowledged once a message was read whole; a slow reader holds a sender
back without loss; allow and hostile senders; unmount with unread
messages (a receiver-confirmed sender sends them again to the next
receiver); two mounts talk request/response.

Every step that could block (a read, a poll, a shell command, a process)
has the SAFETY_S net: a hang fails with the step's name, it does not hang
the test. Waits are on events (a status key, a process's line, a thread
blocked in read(2))."""
import select
import stat
import sys
import threading

from fslab import *

SYS_READ = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)
PLAIN = os.environ.get("PLAIN_SEND")
STEP = ["setup"]


def step(name):
    STEP[0] = name
    print("step: %s" % name, flush=True)


def in_read(thread):
    try:
        with open("/proc/self/task/%d/syscall" % thread.native_id) as f:
            return f.read().split()[0] == str(SYS_READ)
    except (OSError, IndexError):
        return False


def within(seconds, fn, what):
    """Run fn in a daemon thread; its result, or a failure naming what
    when it has not returned after seconds (a hang, not a hung test)."""
    out = {}

    def run():
        try:
            out["v"] = fn()
        except BaseException as e:  # handed to the caller
            out["e"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        fail("%s: %s did not return within %ss" % (STEP[0], what, seconds))
    if "e" in out:
        raise out["e"]
    return out.get("v")


def wait_inbox(m, key, value):
    return wait_until(lambda: inbox_status(m)[key] == value, SAFETY_S,
                      lambda: "%s: inbox %s == %s (status %s)" % (STEP[0], key, value,
                                                                   inbox_status(m)))


def read_record(path, cap=65536):
    """One read(2) of a fresh descriptor: exactly one record (safety net)."""
    def once():
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.read(fd, cap)
        finally:
            os.close(fd)
    return within(SAFETY_S, once, "a read of %s" % path)


def sh(cwd, cmd, timeout=SAFETY_S, ok=True):
    """bash -c cmd in cwd. A command stuck in a FUSE request the kernel does
    not let go of (FLUSH waits uninterruptibly) is not waited for after
    its kill: the test fails at once, and its cleanup ends the mounts."""
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("%s: `%s` did not finish within %ss" % (STEP[0], cmd, timeout))
    r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    if ok and r.returncode != 0:
        fail("%s: `%s` failed (%d): %s" % (STEP[0], cmd, r.returncode, r.stderr.strip()))
    return r


def plain(addr, port, *msgs, opts=(), rc=0):
    """plain-send OPTS ADDR PORT MSGS...; its exit code must be rc; its output."""
    args = list(opts) + list(msgs)
    try:
        r = subprocess.run([PLAIN] + list(opts) + [addr, str(port)] + list(msgs),
                           capture_output=True, text=True, timeout=SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("%s: plain-send %s did not finish within %ss" % (STEP[0], args, SAFETY_S))
    check(r.returncode == rc, "%s: plain-send %s exited %d, not %d: %s%s" % (
        STEP[0], args, r.returncode, rc, r.stdout, r.stderr))
    return r.stdout


def body(work):
    a, b = need_lab()
    if not PLAIN:
        print("skip: PLAIN_SEND is not built (no Debian librpma)")
        sys.exit(SKIP)
    pa, pb = next_port(), next_port()
    # B: inbox_slots 8 (a confirmed sender's share is 2: credits 1), 4 KiB messages
    mb = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb), "inbox_slots": 8,
                                 "inbox_max_message": "4KiB"},
                      "a": {"address": a, "port": pa}}, name="b").mount(wait_connected=False)
    inbox_b = os.path.join(mb.mnt, "inbox")

    step("files")
    st = os.stat(inbox_b)
    check(stat.S_IMODE(st.st_mode) == 0o400 and st.st_uid == os.getuid(), "mode %o" % st.st_mode)
    check(inbox_status(mb)["state"] == "listening", "status %s" % inbox_status(mb))
    check(os.getxattr(inbox_b, "user.rpma.state") == b"listening", "xattr state")

    step("O_NONBLOCK and poll() with nothing waiting")
    fd = os.open(inbox_b, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.read(fd, 100)
        fail("a read with nothing waiting returned")
    except BlockingIOError:
        pass
    p = select.poll()
    p.register(fd, select.POLLIN)
    check(within(SAFETY_S, lambda: p.poll(300), "poll(300 ms)") == [],
          "poll reported an empty inbox readable")

    step("a plain Debian-librpma sender: hello, 0 bytes, world")
    out = plain(b, pb, "hello", "", "world")
    check("3 sent" in out, out)
    wait_inbox(mb, "received", 3)
    got = [read_record(inbox_b) for _ in range(3)]
    check(got == [b"hello\n", b"\n", b"world\n"], "three lines: %r" % got)
    st = inbox_status(mb)
    check(st["acks"] == 0 and st["read"] == 3 and st["waiting"] == 0,
          "a plain sender got acknowledgements, or the counts are off: %s" % st)

    step("poll() wakes on an arrival")
    woke = []
    t = threading.Thread(target=lambda: woke.append((p.poll(SAFETY_S * 1000), time.monotonic())),
                         daemon=True)
    t.start()
    wait_until(lambda: inbox_status(mb)["pollers"] >= 1, SAFETY_S, "the poll to be registered")
    out = plain(b, pb, "ping")
    t.join(SAFETY_S)
    check(woke and woke[0][0] and woke[0][0][0][1] & select.POLLIN, "poll did not wake: %s" % woke)
    sent_at = float(out.split("last completion at ")[1])
    print("poll woke %.1f ms after the sender's completion" % ((woke[0][1] - sent_at) * 1000))
    check(woke[0][1] - sent_at < 1.0, "poll woke %.3f s after the arrival" % (woke[0][1] - sent_at))
    check(os.read(fd, 100) == b"ping\n", "the O_NONBLOCK read after poll")
    os.close(fd)

    step("a blocked read is woken by the arrival")
    got = []
    rfd = os.open(inbox_b, os.O_RDONLY)
    # the read in this very thread (in_read looks at it); join() is the safety net
    t = threading.Thread(target=lambda: got.append(os.read(rfd, 65536)), daemon=True)
    t.start()
    wait_until(lambda: in_read(t) and inbox_status(mb)["readers"] == 1, SAFETY_S,
               "the reader to block in read(2)")
    plain(b, pb, "wake")
    t.join(SAFETY_S)
    check(got == [b"wake\n"], "the blocked read got %r" % got)
    os.close(rfd)

    step("epoll wakes on an arrival; tail -f -n +1 streams")
    efd = os.open(inbox_b, os.O_RDONLY | os.O_NONBLOCK)
    ep = select.epoll()
    ep.register(efd, select.EPOLLIN)
    check(ep.poll(0.05) == [], "epoll readable with nothing waiting")
    woke = []
    t = threading.Thread(target=lambda: woke.append(ep.poll(SAFETY_S)), daemon=True)
    t.start()
    wait_until(lambda: inbox_status(mb)["pollers"] >= 1, SAFETY_S, "the epoll to be registered")
    plain(b, pb, "e1")
    t.join(SAFETY_S)
    check(woke and woke[0] and woke[0][0][1] & select.EPOLLIN, "epoll did not wake: %s" % woke)
    check(os.read(efd, 100) == b"e1\n", "the read after epoll")
    ep.close()
    os.close(efd)
    # as on a FIFO, plain `tail -f` prints its last 10 lines only at an end
    # of file that an inbox never reaches; -n +1 prints from the first line.
    # At a terminal, as a user runs it (into a pipe, stdio buffers tail's
    # output as it does any program's): a pty
    master, slave = os.openpty()
    tail = subprocess.Popen(["tail", "-f", "-n", "+1", inbox_b], stdout=slave)
    os.close(slave)
    work.procs.append(tail)
    wait_inbox(mb, "readers", 1)
    plain(b, pb, "t1", "t2")

    def two_lines():
        out = b""
        while out.count(b"\n") < 2:
            out += os.read(master, 100)
        return out.replace(b"\r\n", b"\n")  # the tty's onlcr

    lines = within(SAFETY_S, two_lines, "tail's two lines")
    check(lines == b"t1\nt2\n", "tail -f -n +1 printed %r" % lines)
    tail.send_signal(signal.SIGINT)
    check(tail.wait(SAFETY_S) != 0, "tail was not interrupted")
    os.close(master)
    wait_inbox(mb, "readers", 0)

    step("head -n 1 takes one message and leaves the rest; bash read -r")
    plain(b, pb, "m1", "m2", "m3")
    wait_inbox(mb, "waiting", 3)
    r = sh(mb.mnt, "head -n 1 inbox")
    check(r.stdout == "m1\n", "head got %r" % r.stdout)
    check(inbox_status(mb)["waiting"] == 2, "head took more: %s" % inbox_status(mb))
    r = sh(mb.mnt, 'read -r m < inbox; echo "[$m]"')
    check(r.stdout == "[m2]\n", "bash read got %r" % r.stdout)
    check(read_record(inbox_b) == b"m3\n", "the last one")

    step("a blocked cat ends on SIGINT; timeout 1 cat ends cleanly")
    cat = subprocess.Popen(["cat", inbox_b], stdout=subprocess.PIPE)
    work.procs.append(cat)
    wait_until(lambda: inbox_status(mb)["readers"] == 1, SAFETY_S, "cat to block")
    cat.send_signal(signal.SIGINT)
    check(cat.wait(SAFETY_S) != 0, "cat was not interrupted")
    r = sh(mb.mnt, "timeout 1 cat inbox", ok=False)
    check(r.returncode == 124 and r.stdout == "", "timeout cat: %d %r" % (r.returncode, r.stdout))
    wait_inbox(mb, "readers", 0)

    step("competing readers: each message to exactly one")
    cats = [subprocess.Popen(["cat", inbox_b], stdout=subprocess.PIPE) for _ in range(2)]
    work.procs += cats
    wait_inbox(mb, "readers", 2)
    base = inbox_status(mb)["read"]
    msgs = ["c%02d" % i for i in range(20)]
    plain(b, pb, *msgs)
    wait_inbox(mb, "read", base + 20)
    outs = []
    for c in cats:
        c.send_signal(signal.SIGINT)
        outs.append(c.communicate(timeout=SAFETY_S)[0].decode().split())
    print("reader 1 got %d, reader 2 got %d" % (len(outs[0]), len(outs[1])))
    check(sorted(outs[0] + outs[1]) == msgs, "readers got %r" % outs)
    for o in outs:
        check(o == sorted(o), "one reader's messages out of order: %r" % o)

    ma = Spool(work, {"rpmafs": {"listen": "%s:%d" % (a, pa)},
                      "b": {"address": b, "port": pb},
                      "bq": {"address": b, "port": pb, "close": "return",
                             "send_timeout_ms": 1000},
                      # outlives B's unmount and the next receiver's start
                      "bu": {"address": b, "port": pb, "close": "return",
                             "send_timeout_ms": 60000}}, name="a").mount()

    step("an rpmafs sender is acknowledged when the message is read, not before")
    check(ma.status("bq")["confirm"] == "receiver", "bq: %s" % ma.status("bq"))
    sh(ma.mnt, "echo r1 > bq")
    wait_inbox(mb, "waiting", 1)
    s = ma.status("bq")
    check(s["acked"] == 0 and s["unacked"] + s["in_flight"] == 1,
          "acknowledged before it was read: %s" % s)
    check(read_record(inbox_b) == b"r1\n", "r1")
    wait_until(lambda: ma.status("bq")["acked"] == 1, SAFETY_S, lambda: ma.status("bq"))
    check(inbox_status(mb)["acks"] >= 1, "inbox %s" % inbox_status(mb))

    step("a slow reader holds a sender back for seconds; nothing lost, nothing failed")
    n = 40
    writer = subprocess.Popen(["bash", "-c", "for i in $(seq 1 %d); do echo s$i; done > bq" % n],
                              cwd=ma.mnt, stderr=subprocess.PIPE)
    work.procs.append(writer)
    # the sender cannot have more than its credits past what was read
    wait_until(lambda: ma.status("bq")["pending"] > 0, SAFETY_S,
               lambda: "the sender to be held back: %s" % ma.status("bq"))
    check(inbox_status(mb)["waiting"] <= 2, "more arrived than the credits: %s" % inbox_status(mb))
    got, t0 = [], time.monotonic()
    fd = os.open(inbox_b, os.O_RDONLY)
    for _ in range(n):
        got.append(within(SAFETY_S, lambda: os.read(fd, 100), "a slow read"))
        time.sleep(0.1)  # the slow reader: its pace, not a wait for anything
    os.close(fd)
    held = time.monotonic() - t0
    check(writer.wait(SAFETY_S) == 0, "the writer failed: %s" % writer.stderr.read())
    check(got == [b"s%d\n" % i for i in range(1, n + 1)], "lost or out of order: %r" % got)
    s = wait_until(lambda: (lambda s: s if s["acked"] == 1 + n else None)(ma.status("bq")),
                   SAFETY_S, lambda: ma.status("bq"))
    check(s["failed"] == 0 and s["refused"] == 0 and s["reconnects"] == 0 and s["resent"] == 0,
          "the held-back sender: %s" % s)
    print("held back %.1f s (send_timeout_ms 1000), %d messages, none failed" % (held, n))

    step("allow: another network is rejected")
    pc = next_port()
    prom = work.path("c.prom")
    mc = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pc), "allow": "10.254.254.0/24",
                                 "metrics": prom, "metrics_interval_ms": 100}},
               name="c").mount(wait_connected=False)
    plain(b, pc, "x", rc=3)
    wait_until(lambda: inbox_status(mc)["rejected"] >= 1, SAFETY_S, lambda: inbox_status(mc))
    check(inbox_status(mc)["connections"] == 0 and inbox_status(mc)["received"] == 0,
          "status %s" % inbox_status(mc))

    # the metrics file ([rpmafs] metrics) has the inbox's figures
    def inbox_metrics():
        from prometheus_client.parser import text_string_to_metric_families
        try:
            with open(prom) as f:
                text = f.read()
        except FileNotFoundError:
            return {}
        return {s.name: s.value for fam in text_string_to_metric_families(text)
                for s in fam.samples}
    rejected = inbox_status(mc)["rejected"]
    wait_until(lambda: inbox_metrics().get("rpmafs_inbox_connections_rejected_total") == rejected,
               SAFETY_S, lambda: "the rejection in the metrics: %s" % inbox_metrics())
    got = inbox_metrics()
    check(got.get("rpmafs_inbox_listening") == 1 and
          got.get("rpmafs_inbox_messages_received_total") == 0 and
          got.get("rpmafs_inbox_connections") == 0, "metrics while listening: %s" % got)
    check(mc.unmount() == 0, "unmount of C")
    got = inbox_metrics()
    check(got.get("rpmafs_inbox_listening") == 0 and
          got.get("rpmafs_inbox_connections_rejected_total") == rejected,
          "metrics at unmount: %s" % got)

    step("hostile senders do not disturb the others")
    base = inbox_status(mb)
    idle = subprocess.Popen([PLAIN, "--idle", b, str(pb), "late"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    work.procs.append(idle)
    line = within(SAFETY_S, idle.stdout.readline, "the idle sender to connect")
    check("connected" in line, "idle sender: %r" % line)
    plain(b, pb, opts=("--pdata", "deadbeef00112233445566778899aabb"), rc=3)
    plain(b, pb, opts=("--pdata", "52504d46ff"), rc=3)  # RPMF magic, bad header
    plain(b, pb, opts=("--size", "8192"), rc=4)          # over inbox_max_message
    sh(ma.mnt, "echo after > bq")
    plain(b, pb, "after-plain")
    wait_inbox(mb, "waiting", 2)
    two = sorted([read_record(inbox_b), read_record(inbox_b)])
    check(two == [b"after\n", b"after-plain\n"], "the others: %r" % two)
    st = inbox_status(mb)
    check(st["rejected"] >= base["rejected"] + 2 and st["failed"] >= base["failed"] + 1,
          "hostile senders not counted: %s" % st)
    idle.stdin.close()
    check(idle.wait(SAFETY_S) == 0, "the idle sender, once it sent")
    check(read_record(inbox_b) == b"late\n", "the idle sender's message")
    check(ma.status("bq")["state"] == "connected" and ma.status("bq")["failed"] == 0,
          "bq %s" % ma.status("bq"))

    step("request/response between two mounts")
    loop = subprocess.Popen(["bash", "-c", 'while read -r m; do echo "pong $m" > a; done < inbox'],
                            cwd=mb.mnt)
    work.procs.append(loop)
    mb.wait_state("a", "connected")
    for i in range(3):
        r = sh(ma.mnt, 'echo ping%d > b; read -r reply < inbox; echo "$reply"' % i)
        check(r.stdout == "pong ping%d\n" % i, "reply %r" % r.stdout)
    loop.send_signal(signal.SIGTERM)
    within(SAFETY_S, loop.wait, "the answering loop to end")

    step("unmount with unread messages; the confirmed sender sends them to the next receiver")
    sh(ma.mnt, "echo unread1 > bu")
    # bu's credits (1 past what was read) hold the second write back at the sender
    w2 = subprocess.Popen(["bash", "-c", "echo unread2 > bu"], cwd=ma.mnt)
    work.procs.append(w2)
    plain(b, pb, "unread-plain")
    wait_inbox(mb, "waiting", 2)
    wait_until(lambda: (lambda s: s["unacked"] + s["in_flight"] == 1 and s["pending"] == 1)(
        ma.status("bu")), SAFETY_S, lambda: ma.status("bu"))
    check(mb.unmount() == 0, "unmount of B failed")
    mb2 = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb)}}, name="b2").mount(
        wait_connected=False)
    wait_until(lambda: inbox_status(mb2)["waiting"] == 2, SAFETY_S, lambda: inbox_status(mb2))
    again = [read_record(os.path.join(mb2.mnt, "inbox")) for _ in range(2)]
    check(again == [b"unread1\n", b"unread2\n"], "sent again: %r" % again)
    check(within(SAFETY_S, w2.wait, "the held-back writer") == 0, "the held-back write failed")
    s = wait_until(lambda: (lambda s: s if s["unacked"] == 0 and s["pending"] == 0 else None)(
        ma.status("bu")), SAFETY_S, lambda: ma.status("bu"))
    check(s["resent"] >= 1 and s["failed"] == 0, "bu %s" % s)
    # the plain sender's message was completed, then lost with the receiver
    check(inbox_status(mb2)["received"] == 2, "b2 %s" % inbox_status(mb2))
    check(mb2.unmount() == 0, "unmount of B2")
    check(ma.unmount() == 0, "unmount of A")


sys.exit(run("inbox", body))
