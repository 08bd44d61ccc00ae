#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rpmafs and rpma-recv under valgrind (memcheck) through a short, real session.

Mount; sync and async messages, 0-byte ones, O_SYNC, fsync, a write over
the limit; a file-framed peer (one message per file, a file over the limit
refused) and drafts (one renamed onto a peer, one left at unmount, which
frees it); status file reads, stat, xattrs (get, list, a refused set); the
receiver restarted with SIGTERM so that the spool reconnects; more
messages; unmount; the receiver stopped with SIGTERM. Both must report no
error and no definitely lost block (--errors-for-leak-kinds=definite
--error-exitcode=99), with only the suppressions in valgrind.supp, each
of which is explained there. Everything sent must have arrived.
"""
import shutil
import sys

from faults import *

VG = ["valgrind", "--quiet", "--leak-check=full", "--errors-for-leak-kinds=definite",
      "--show-leak-kinds=definite",
      "--error-exitcode=99", "--track-fds=no", "--num-callers=30",
      "--suppressions=" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")]


class VgReceiver(Receiver):
    def start(self):
        real = os.environ["RPMA_RECV"]
        wrapper = self.work.path("vg-recv.sh")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec %s --log-file=%s.vg.%%p.log %s \"$@\"\n" %
                    (" ".join(VG), self.work.path("recv"), real))
        os.chmod(wrapper, 0o755)
        os.environ["RPMA_RECV"] = wrapper
        try:
            return super().start()
        finally:
            os.environ["RPMA_RECV"] = real


def vg_errors(path):
    text = open(path).read() if os.path.exists(path) else ""
    return text


def body(work):
    _, b = need_lab()
    if not shutil.which("valgrind"):
        print("skip: valgrind is not installed")
        sys.exit(SKIP)
    recv = VgReceiver(work, b).start()
    # keys (issue 25): a keyed receiver, a mac and an encrypt peer to it, and
    # the mount's own inbox with listen_keys, sent to by an encrypt peer
    keys = work.path("keys")
    os.mkdir(keys)
    alpha = key_file(os.path.join(keys, "alpha.key"))
    krecv = VgReceiver(work, b, args=["--keys", keys], name="krecv").start()
    listen = next_port()
    sections = {"rpmafs": {"slots": 4, "listen": "%s:%d" % (b, listen), "listen_keys": keys,
                           "inbox_slots": 8, "inbox_max_message": "4KiB"},
                "k": {"address": b, "port": krecv.port, "key": alpha, "send_timeout_ms": 4000},
                "x": {"address": b, "port": krecv.port, "key": alpha, "protect": "encrypt",
                      "send_timeout_ms": 4000},
                "i": {"address": b, "port": listen, "key": alpha, "protect": "encrypt",
                      "close": "return", "send_timeout_ms": 4000},
                "s": {"address": b, "port": recv.port, "mode": "sync", "send_timeout_ms": 4000},
                "a": {"address": b, "port": recv.port, "send_timeout_ms": 4000},
                "f": {"address": b, "port": recv.port, "framing": "file",
                      "send_timeout_ms": 4000}}
    spool = Spool(work, sections)
    real = os.environ["RPMAFS"]
    wrapper = work.path("vg-fs.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s --log-file=%s %s \"$@\"\n" % (" ".join(VG), work.path("fs.vg.log"), real))
    os.chmod(wrapper, 0o755)
    os.environ["RPMAFS"] = wrapper
    try:
        spool.mount()
    finally:
        os.environ["RPMAFS"] = real
    sent = []

    def send(peer, data, flags=0):
        check(spool.write(peer, data, flags) == 0, "write of %d bytes to %s failed" % (len(data), peer))
        sent.append(data)

    for i in range(5):
        send("s", b"sync %d" % i)
        send("a", b"async %d" % i)
    spool.sh(": > a")                      # a 0-byte message
    sent.append(b"")
    send("a", b"osync", os.O_SYNC)
    spool.sh("printf 'fsync me' | dd of=a conv=fsync status=none")
    sent.append(b"fsync me")
    check(spool.write("a", b"x" * (spool.status("a")["max_message"] + 1)) == errno.EMSGSIZE, "EMSGSIZE")
    # file framing: one message per file, over the limit nothing; drafts
    spool.sh("{ printf 'file '; printf 'framed'; } > f")
    sent.append(b"file framed")
    r = spool.sh("head -c %d /dev/zero > f" % (spool.status("f")["max_message"] + 1),
                 check_rc=False)
    check(r.returncode != 0 and "File too large" in r.stderr, "over-limit file: %s" % r.stderr)
    spool.sh("printf 'a draft' > .d.tmp && mv .d.tmp a")
    sent.append(b"a draft")
    spool.sh("printf 'left at unmount' > .left.tmp")
    for peer in ("s", "a", "f"):
        spool.settled(peer)
        spool.status(peer)
        os.stat(spool.file(peer))
        spool.xattrs(peer)
        try:
            os.setxattr(spool.file(peer), "user.rpma.posted", b"0")
            fail("setxattr worked")
        except OSError as e:
            check(e.errno == errno.EPERM, "setxattr: %s" % e)
    ksent = []

    def ksend(peer, data):
        check(spool.write(peer, data) == 0, "write of %d bytes to %s failed" % (len(data), peer))
        ksent.append(data)

    for i in range(3):
        ksend("k", b"mac %d" % i)
        ksend("x", b"encrypt %d" % i)
    spool.sh(": > x")
    ksent.append(b"")
    inbox = os.path.join(spool.mnt, "inbox")
    for i in range(2):
        check(spool.write("i", b"inbox %d" % i) == 0, "write to the inbox peer failed")
    # lines: each message a line; a blocking read waits for them (the event)
    with open(inbox, "rb") as f:
        got_inbox = b""
        while got_inbox.count(b"\n") < 2:
            got_inbox += os.read(f.fileno(), 4096)
    check(got_inbox == b"inbox 0\ninbox 1\n", "the keyed inbox gave %r" % got_inbox)
    # a reconnection: the receivers go (SIGTERM) and come back
    check(recv.stop() == 0, "rpma-recv under valgrind: exit status")
    check(krecv.stop() == 0, "rpma-recv --keys under valgrind: exit status")
    spool.wait_state("s", "reconnecting", 30)
    spool.wait_state("x", "reconnecting", 30)
    recv.start()
    krecv.start()
    spool.wait_state("s", "connected", 60)
    spool.wait_state("a", "connected", 60)
    spool.wait_state("x", "connected", 60)
    for i in range(3):
        send("s", b"again %d" % i)
        send("a", b"again async %d" % i)
        ksend("x", b"again encrypt %d" % i)
    spool.sh("truncate -s 0 s")
    sent.append(b"")
    for peer in ("s", "a", "f", "k", "x", "i"):
        st = spool.settled(peer)
        check(st["failed"] == 0, "%s: failures: %s" % (peer, st))
    rc = spool.unmount(120)
    rrc = recv.stop(timeout=60)
    krc = krecv.stop(timeout=60)
    got = recv.messages()
    check(sorted(got) == sorted(sent), "messages: sent %d, received %d" % (len(sent), len(got)))
    kgot = krecv.messages()
    check(sorted(kgot) == sorted(ksent), "keyed messages: sent %d, received %d" % (
        len(ksent), len(kgot)))
    check(krc == 0, "rpma-recv --keys under valgrind: exit status %d (99: valgrind found errors)"
          % krc)
    logs = [work.path("fs.vg.log")] + [work.path(n) for n in os.listdir(work.dir) if ".vg." in n]
    for path in logs:
        text = vg_errors(path)
        if text.strip():
            sys.stderr.write("---- %s\n%s\n" % (path, text[-20000:]))
    check(rc == 0, "rpmafs under valgrind: exit status %d (99: valgrind found errors)" % rc)
    check(rrc == 0, "rpma-recv under valgrind: exit status %d (99: valgrind found errors)" % rrc)
    for path in logs:
        check(not vg_errors(path).strip(), "valgrind reported in %s" % path)
    print("valgrind: rpmafs and rpma-recv clean; %d messages, %d keyed (mac and encrypt), 2 into "
          "the keyed inbox" % (len(sent), len(ksent)))


sys.exit(run("faults-valgrind", body))
