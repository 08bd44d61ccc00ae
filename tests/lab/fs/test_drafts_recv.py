#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drafts (docs/design.md §4.8) and file framing (§4.6) against rpma-recv,
where the host test (tests/fs/test_drafts.py) has null peers: a draft left
and unlinked sends nothing; a rename that fails (over the peer's limit)
leaves the draft and sends nothing; past the limits (the drafts count, the
16 MiB budget) create or write fails ENOSPC and the log says which limit;
`install -m` onto a new name, then `mv` onto the spool, is one message; at
unmount (SIGTERM) a draft and the bytes of an open file-framed descriptor
are not sent, nothing partial; a lazy unmount (fusermount3 -uz) leaves open
descriptors working, and their close sends their whole message. The
receivers' records are compared with every message the test sent."""
import sys

from fslab import *

MIB = 1 << 20

# holds a file-framed descriptor open with bytes written, until told to close
HOLDER = """
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, sys.argv[2].encode())
print("written", flush=True)
sys.stdin.readline()
try:
    os.close(fd)
    print("close ok", flush=True)
except OSError as e:
    print(errno.errorcode[e.errno], flush=True)
"""


class Holder:
    def __init__(self, work, path, data):
        self.proc = subprocess.Popen(["python3", "-c", HOLDER, path, data], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        work.procs.append(self.proc)
        line = self.proc.stdout.readline().strip()  # the event: its bytes are written
        check(line == "written", "the holder did not write: %r" % line)

    def close(self):
        """Close the descriptor; its close(2)'s outcome ("close ok" or an errno name)."""
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        try:
            check(self.proc.wait(SAFETY_S) == 0, "the holder failed")
        except subprocess.TimeoutExpired:
            fail("the holder still running after %ss" % SAFETY_S)
        return line


def drafts_in(m):
    return int(os.getxattr(m, "user.rpma.drafts")), int(os.getxattr(m, "user.rpma.draft_bytes"))


def body(work):
    _, b = need_lab()
    # 16 slots of 1 MiB (the default 256 would take 256 MiB each; see test_framing.py)
    big = ["--max-message", str(MIB), "--slots", "16"]
    recv = {p: Receiver(work, b, args=big, name="recv-" + p).start() for p in ("alpha", "small")}
    spool = Spool(work, {
        "rpmafs": {"drafts": 20},
        "alpha": {"address": b, "port": recv["alpha"].port, "framing": "file"},
        "small": {"address": b, "port": recv["small"].port, "max_message": "1K"},
    }).mount()
    m = spool.mnt
    src = os.urandom(300000)
    src_path = work.path("src")
    with open(src_path, "wb") as f:
        f.write(src)
    sent = {"alpha": [], "small": []}

    # a draft left behind, read back, then unlinked: nothing sent
    spool.sh("printf 'left behind' > .alpha.Xb3kQ1")
    check(open(os.path.join(m, ".alpha.Xb3kQ1"), "rb").read() == b"left behind", "read back")
    check(drafts_in(m) == (1, 11), "drafts: %s" % (drafts_in(m),))
    spool.sh("rm .alpha.Xb3kQ1")
    check(drafts_in(m) == (0, 0), "unlink left %s" % (drafts_in(m),))

    # a rename over the peer's limit fails (EMSGSIZE) and leaves the draft
    spool.sh("head -c 2000 /dev/zero > big.tmp")
    r = spool.sh("mv big.tmp small", check_rc=False)
    check(r.returncode != 0 and "Message too long" in r.stderr, "mv over the limit: %d %s" % (
        r.returncode, r.stderr))
    check(os.path.getsize(os.path.join(m, "big.tmp")) == 2000, "the failed rename took the draft")
    spool.sh("rm big.tmp")
    check(spool.status("small")["refused"] == 1, "small: %s" % spool.status("small"))

    # install onto a new name writes a draft (install onto the spool itself
    # works too, §4.7: test_framing.py); then mv, is one message
    spool.sh("install -m 644 %s .inst.tmp && mv .inst.tmp alpha" % src_path)
    sent["alpha"].append(src)
    spool.sh("printf short > .s.tmp && mv .s.tmp small")  # a draft onto a write-framed peer
    sent["small"].append(b"short")

    # the byte budget: 16 drafts of 1 MiB fill it, the next byte fails
    for i in range(16):
        spool.sh("head -c %d /dev/zero > fill.%d" % (MIB, i))
    # (bash, not sh: dash's printf says "I/O error" whatever the errno)
    r = spool.sh("bash -c 'printf x > fill.16'", check_rc=False)
    check(r.returncode != 0 and "No space left on device" in r.stderr,
          "past the byte budget: %d %s" % (r.returncode, r.stderr))
    wait_until(lambda: "draft_bytes is at its limit" in open(spool.log).read(), SAFETY_S,
               "the log to say the byte budget is full")
    # the count: fill.16 was created empty (17 drafts); 3 more reach 20, the 21st fails
    spool.sh(": > fill.17; : > fill.18; : > fill.19")
    r = spool.sh(": > fill.20", check_rc=False)
    check(r.returncode != 0 and "No space left on device" in r.stderr,
          "past the drafts limit: %d %s" % (r.returncode, r.stderr))
    wait_until(lambda: "drafts is at its limit" in open(spool.log).read(), SAFETY_S,
               "the log to say the drafts limit is reached")
    sv = os.statvfs(m)
    check(sv.f_files == 20 and sv.f_ffree == 0, "statfs: files %d free %d" % (sv.f_files, sv.f_ffree))
    spool.sh("rm fill.*")
    check(drafts_in(m) == (0, 0), "rm left %s" % (drafts_in(m),))

    # lazy unmount: the mount is detached, an open descriptor still works,
    # and its close sends its whole message (the writer closed the file)
    lazy = Holder(work, spool.file("alpha"), "closed after the lazy unmount")
    r = subprocess.run(["fusermount3", "-u", "-z", m], capture_output=True, text=True)
    check(r.returncode == 0, "fusermount3 -uz: %s" % r.stderr)
    check(lazy.close() == "close ok", "close after the lazy unmount")
    sent["alpha"].append(b"closed after the lazy unmount")
    try:
        rc = spool.proc.wait(SAFETY_S)  # the last descriptor closed: the kernel lets go
    except subprocess.TimeoutExpired:
        fail("rpmafs did not exit after the lazy unmount's last close")
    check(rc == 0, "rpmafs exit status %d after the lazy unmount" % rc)

    # SIGTERM with a draft and an open file-framed descriptor: neither is sent
    spool.mount()
    spool.sh("printf 'a draft at unmount' > .pending.tmp")
    held = Holder(work, spool.file("alpha"), "written, never closed before the unmount")
    spool.proc.send_signal(signal.SIGTERM)
    try:
        rc = spool.proc.wait(SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("rpmafs did not exit on SIGTERM with a descriptor open")
    check(rc == 0, "rpmafs exit status %d on SIGTERM" % rc)
    outcome = held.close()
    check(outcome != "close ok", "a close after the daemon left reported success")
    check(not os.path.ismount(m) and os.listdir(m) == [], "the mount point holds %s" % (
        os.listdir(m),))

    # what arrived: exactly what was sent, in order, whole
    for peer in sent:
        recv[peer].stop()
        got = recv[peer].messages()
        check(got == sent[peer], "%s received %d messages %r, expected %d %r" % (
            peer, len(got), [g[:24] for g in got], len(sent[peer]),
            [e[:24] for e in sent[peer]]))
    print("the close after SIGTERM: %s" % outcome)


sys.exit(run("drafts_recv", body))
