#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Load: 16 writers over 4 peers, N messages each of mixed sizes (0 B to
64 KiB), every peer with its own rpma-recv.

Peers: two async with completion = always, one async with on_error, one
sync. Nothing lost (every message arrived, 0-byte ones counted), per-writer
order kept, the status figures add up, and rpmafs's resident memory is
flat: VmRSS is sampled every 0.5 s, and the end may not exceed the level
reached after the first tenth of the run by more than 4 MiB (a leak of 100
bytes a message would be 6 MiB at the default size, 64 MiB at the full
one); over the second half of the run it may not grow by more than
256 KiB (a leak of 8 bytes a message would show); growth that the
kernel's transparent huge pages explain (AnonHugePages) is not counted.
N is 4,000 by default (CI); FAULTS_FULL=1 runs 20,000 (see
tests/RELIABILITY.md for how long each takes in the lab).
"""
import sys

from faults import *

N = 20000 if os.environ.get("FAULTS_FULL") == "1" else int(os.environ.get("FAULTS_LOAD_N", "4000"))
# mostly small, a 0-byte message every 50, a 64 KiB one every 100
SIZES = ([12, 40, 100, 300, 12, 1000, 64, 4096, 200, 16] * 10)
SIZES[7] = 0
SIZES[57] = 0
SIZES[99] = 65536
RSS_SLACK_KIB = 4096


def body(work):
    _, b = need_lab()
    peers = {"p0": {}, "p1": {}, "p2": {"completion": "on_error"}, "p3": {"mode": "sync"}}
    recvs, sections = {}, {}
    for p, extra in peers.items():
        recvs[p] = Receiver(work, b, name="recv-" + p, args=["--max-message", "64K"]).start()
        sections[p] = dict({"address": b, "port": recvs[p].port}, **extra)
    spool = Spool(work, sections).mount()
    pid = spool.proc.pid
    res0 = resources(spool)
    writers = {p: [Writer(spool, p, 4 * k + i, N, SIZES) for i in range(4)] for k, p in enumerate(peers)}
    everyone = [w for ws in writers.values() for w in ws]
    rss = RssSampler(pid)
    rss.start()
    t0 = time.monotonic()
    for w in everyone:
        w.start()
    wait_until(lambda: sum(len(w.results) for w in everyone) >= len(everyone) * N // 10, 3600,
               "a tenth of the run")
    t10 = time.monotonic()
    maps10, huge10 = smaps_rss(pid), huge_kib(pid)
    wait_writers(everyone, 3600)
    t1 = time.monotonic()
    sts = {p: spool.settled(p) for p in peers}
    rss.stop()
    rss_end = vm_rss_kib(pid)
    grew = smaps_growth(maps10, smaps_rss(pid))
    # a transparent huge page (khugepaged collapsing 2 MiB of, say, a thread
    # stack) adds up to 2 MiB of RSS at once without any new allocation
    huge = huge_kib(pid) - huge10
    check_resources(spool, res0, "after the load")
    codes = [r.stop() for r in recvs.values()]
    check(codes == [0] * len(recvs), "receivers' exit status %s" % codes)
    rows = []
    for p, extra in peers.items():
        mode = extra.get("mode", "async")
        row = account("load %s (%s%s)" % (p, mode, ", on_error" if "completion" in extra else ""),
                      spool, p, writers[p], recvs[p].messages(), mode, complete=True)
        check(row["failed"] == 0 and row["refused"] == 0, "%s: failures under load: %s" % (p, row))
        rows.append(row)
    after10 = [k for t, k in rss.samples if t >= t10]
    rss10 = after10[0] if after10 else rss.samples[-1][1]
    total = sum(r["received"] for r in rows)
    summary = {
        "what": "load summary", "writers": len(everyone), "per_writer": N, "messages": total,
        "seconds": round(t1 - t0, 1), "messages_per_s": round(total / (t1 - t0)),
        "rss_kib_start": rss.samples[0][1], "rss_kib_at_10pct": rss10,
        "rss_kib_max": max(k for _, k in rss.samples), "rss_kib_end": rss_end,
        "rss_samples": len(rss.samples),
        # VmRSS at each tenth of the run's duration
        "rss_grew_in": grew,
        "anon_huge_kib_growth": huge,
        "rss_kib_by_tenth": [min(rss.samples, key=lambda s: abs(s[0] - (t0 + (t1 - t0) * i / 10)))[1]
                             for i in range(11)],
    }
    rows.append(summary)
    report(rows, "load-full" if N >= 20000 else "load")
    check(total == sum(w.n_ok() for w in everyone), "messages received %d, written %d" %
          (total, sum(w.n_ok() for w in everyone)))
    check(rss_end - rss10 - max(huge, 0) <= RSS_SLACK_KIB,
          "rpmafs's RSS grew from %d KiB (a tenth in) to %d KiB (huge pages: %+d KiB)" % (rss10, rss_end, huge))
    check(max(k for t, k in rss.samples if t >= t10) - rss10 <= RSS_SLACK_KIB,
          "rpmafs's RSS peaked at %d KiB, %d KiB a tenth in" % (max(after10), rss10))
    half = summary["rss_kib_by_tenth"][5]
    check(rss_end - half - max(huge, 0) <= 256, "rpmafs's RSS grew from %d KiB (half way) to %d KiB "
          "(huge pages: %+d KiB)" % (half, rss_end, huge))
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("faults-load", body))
