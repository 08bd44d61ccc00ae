#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The inbox read as lines by shells (docs/design.md §13.3, issue 27): the
inbox is seekable, so bash's read takes a buffer per read(2) (it checks
lseek(fd, 0, SEEK_CUR)), and a read ends at a line's end, so it never takes
more than the line it returns. Counted with strace: `while read -r l` over
N messages makes one read(2) of the inbox per line; `read -r l < inbox`
twice, `head -n 1` twice and Python's readline each take exactly the next
message (the inbox's waiting count says nothing more was taken); an lseek
back into what a read returned gives those bytes again.

Every step that could block has the SAFETY_S net."""
import re
import shutil
import sys

from fslab import *

PLAIN = os.environ.get("PLAIN_SEND")
STRACE = shutil.which("strace")
STEP = ["setup"]


def step(name):
    STEP[0] = name
    print("step: %s" % name, flush=True)


def wait_inbox(m, key, value):
    return wait_until(lambda: inbox_status(m)[key] == value, SAFETY_S,
                      lambda: "%s: inbox %s == %s (status %s)" % (STEP[0], key, value,
                                                                   inbox_status(m)))


def run_cmd(argv, cwd):
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("%s: %s did not finish within %ss" % (STEP[0], argv, SAFETY_S))
    check(r.returncode == 0, "%s: %s failed (%d): %s" % (STEP[0], argv, r.returncode,
                                                         r.stderr.strip()))
    return r


def plain(addr, port, *msgs):
    r = run_cmd([PLAIN, addr, str(port)] + list(msgs), None)
    check("%d sent" % len(msgs) in r.stdout, "plain-send: %s" % r.stdout)


def traced(cwd, script, trace):
    """bash -c script under strace -e read,lseek (fd 0 is the inbox); its
    output and the inbox's read(2) and lseek(2) calls"""
    r = run_cmd([STRACE, "-o", trace, "-e", "trace=read,lseek", "bash", "-c", script], cwd)
    with open(trace) as f:
        calls = f.read().splitlines()
    reads = [c for c in calls if c.startswith("read(0,")]
    seeks = [c for c in calls if c.startswith("lseek(0,")]
    return r.stdout, reads, seeks


def body(work):
    a, b = need_lab()
    if not PLAIN:
        print("skip: PLAIN_SEND is not built (no Debian librpma)")
        sys.exit(SKIP)
    if not STRACE:
        print("skip: no strace")
        sys.exit(SKIP)
    pb = next_port()
    mb = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb), "inbox_slots": 256}},
               name="b").mount(wait_connected=False)
    inbox = os.path.join(mb.mnt, "inbox")

    step("the inbox is seekable: lseek(fd, 0, SEEK_CUR) is 0")
    fd = os.open(inbox, os.O_RDONLY | os.O_NONBLOCK)
    check(os.lseek(fd, 0, os.SEEK_CUR) == 0, "lseek")
    os.close(fd)

    n = 60
    step("while read -r l: %d messages, one read(2) per line" % n)
    msgs = ["line%03d with some words" % i for i in range(n)]
    plain(b, pb, *msgs)
    wait_inbox(mb, "waiting", n)
    out, reads, seeks = traced(
        mb.mnt, 'i=0; while read -r l; do echo "$l"; i=$((i + 1)); [ $i = %d ] && break; '
        'done < inbox' % n, work.path("loop.trace"))
    check(out.splitlines() == msgs, "the loop read %r" % out.splitlines()[:5])
    print("%d lines: %d read(2), %d lseek(2) of the inbox" % (n, len(reads), len(seeks)))
    check(len(reads) == n, "%d reads for %d lines: %s" % (len(reads), n, reads[:5]))
    check(all(re.match(r"read\(0, \"[^\"]*\\n\", 4096\) = \d+$", r) for r in reads),
          "a read not ending at a line's end: %s" % [r for r in reads if "\\n\"" not in r][:3])
    # bash gives back nothing: each read ended at the newline
    check(not [s for s in seeks if not s.startswith("lseek(0, 0, SEEK_CUR)")],
          "bash seeked back: %s" % seeks[:3])
    st = wait_inbox(mb, "waiting", 0)
    check(inbox_status(mb)["read"] == n, "status %s" % inbox_status(mb))

    step("read -r l < inbox twice; head -n 1 twice; each takes exactly the next message")
    plain(b, pb, "r1", "r2", "h1", "h2", "p1", "p2", "p3", "p4", "g1", "g2")
    wait_inbox(mb, "waiting", 10)
    out, reads, _ = traced(mb.mnt, 'read -r x < inbox; read -r y < inbox; echo "[$x][$y]"',
                           work.path("twice.trace"))
    check(out == "[r1][r2]\n", "bash read twice got %r" % out)
    check(len(reads) == 2, "reads: %s" % reads)
    wait_inbox(mb, "waiting", 8)
    for want in ("h1", "h2"):
        r = run_cmd(["head", "-n", "1", "inbox"], mb.mnt)
        check(r.stdout == want + "\n", "head got %r, not %s" % (r.stdout, want))
    wait_inbox(mb, "waiting", 6)

    step("Python's readline, one open and two")
    with open(inbox) as f:
        got = [f.readline(), f.readline()]
    check(got == ["p1\n", "p2\n"], "readline: %r" % got)
    wait_inbox(mb, "waiting", 4)
    for want in ("p3\n", "p4\n"):
        with open(inbox) as f:
            got = f.readline()
        check(got == want, "readline got %r, not %r" % (got, want))
    wait_inbox(mb, "waiting", 2)

    step("an lseek back into the last read gives its bytes again")
    fd = os.open(inbox, os.O_RDONLY | os.O_NONBLOCK)
    check(os.read(fd, 4096) == b"g1\n", "g1")
    check(os.lseek(fd, -2, os.SEEK_CUR) == 1, "lseek back")
    check(os.read(fd, 4096) == b"1\n", "given back")
    check(os.pread(fd, 4096, 0) == b"g1\n", "pread at the read's offset")
    check(os.read(fd, 4096) == b"g2\n", "on to the next message")
    try:
        os.read(fd, 4096)
        fail("a read with nothing waiting returned")
    except BlockingIOError:
        pass
    os.close(fd)
    st = inbox_status(mb)
    check(st["waiting"] == 0 and st["read"] == n + 10, "status %s" % st)
    check(mb.unmount() == 0, "unmount")


sys.exit(run("inbox-lines", body))
