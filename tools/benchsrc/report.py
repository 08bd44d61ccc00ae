#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""report.py -- the bench's figures as a table, a JSON file and a plot

    report.py FIGURES OUTDIR

FIGURES is what inside.sh (and tools/bench) wrote: "key value" lines and
"note key text" lines. OUTDIR gets results.md (every figure, its floor, the
ratio, the target, met or not), results.json (the same, with the ratios
under fixed keys) and plot.png (rate and latency by message size, rpmafs
against its floors). A figure that was not measured is shown as missing
and its ratio is null: nothing is invented. Exit status 1 only when the
table cannot be written.
"""
import json
import os
import sys

MIB = 1048576
MAX = 1044480  # 1 MiB - 4 KiB, rpmafs's message limit


def load(path):
    fig, notes, meta = {}, {}, {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("note "):
                _, key, text = (line.split(" ", 2) + [""])[:3]
                notes[key] = notes.get(key, "") + ("; " if key in notes else "") + text
                continue
            key, _, value = line.partition(" ")
            if key.startswith("meta."):
                meta[key[5:]] = value
                continue
            try:
                fig[key] = float(value)
            except ValueError:
                notes[key] = "unparsable value %r" % value
    return fig, notes, meta


def div(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def minus_or_none(a, b):
    return None if a is None or b is None else a - b


def fmt(v, digits=None):
    if v is None:
        return "missing"
    if digits is not None:
        return "%.*f" % (digits, v)
    a = abs(v)
    if a >= 1000:
        return "{:,.0f}".format(v)
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    return "%.3f" % v


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def paired(fig, num_key, floor_of):
    """A target's figure, floor and ratio. With paired rounds (round.N.*
    keys: figure and floor measured back to back), the medians of the
    rounds' figures, floors and ratios, and the ratios themselves; without,
    the single figures of the run."""
    rounds = []
    r = 1
    while any(k.startswith("round.%d." % r) for k in fig):
        get = (lambda rr: lambda k: fig.get("round.%d.%s" % (rr, k)))(r)
        num, floor = get(num_key), floor_of(get)
        rounds.append((num, floor, div(num, floor)))
        r += 1
    if rounds:
        return (median(x[0] for x in rounds), median(x[1] for x in rounds),
                median(x[2] for x in rounds), [x[2] for x in rounds])
    num, floor = fig.get(num_key), floor_of(fig.get)
    return num, floor, div(num, floor), []


def rounds_text(ratios):
    if not ratios:
        return ""
    return "; median of %d paired rounds: %s" % (
        len(ratios), ", ".join(fmt(x, 2) for x in ratios))


def auth_checks(fig, out, notes=None):
    """Authenticated peers (issue 25, docs/design.md §11.2): a peer with a key
    against one without, same round. A mode whose peer did not connect is
    null, with the reason inside.sh noted."""
    g = fig.get
    for mode, suffix, target, limit in (("mac", "", ">= 0.9", 0.9),
                                        ("encrypt", "_encrypt", "report", None)):
        proved = g("auth.%s.proved" % mode)
        tally = "the peer did not connect"
        if g("auth.%s.messages" % mode) is not None:
            tally = "%s messages acknowledged, %s failed, %s bad acknowledgements over the run" % (
                fmt(g("auth.%s.messages" % mode), 0), fmt(g("auth.%s.failed" % mode), 0),
                fmt(g("auth.%s.bad_acks" % mode), 0))
        if proved is not None:
            tally += "; the receiver %s the key in %s mode" % (
                "logged" if proved else "did NOT log", mode)
        for key, num_key, floor_key, what, unit, how in (
                ("auth_async64%s_over_plain" % suffix, "auth.%s.async.64.msg_s" % mode,
                 "auth.plain.async.64.msg_s", "async write rate, 64 B", "msg/s",
                 "bench-writer, N async 64 B write(2)s, then fsync"),
                ("auth_bw1m%s_over_plain" % suffix, "auth.%s.dd1020k.mib_s" % mode,
                 "auth.plain.dd1020k.mib_s", "throughput, dd bs=1020K", "MiB/s",
                 "dd bs=1020K conv=fsync")):
            num, floor, r, rs = paired(fig, num_key, lambda get, k=floor_key: get(k))
            c = dict(
                key=key, what="%s: key = and protect = %s against no key" % (what, mode),
                figure="%s %s (key, protect = %s)" % (fmt(num), unit, mode),
                floor="%s %s (no key)" % (fmt(floor), unit),
                value=r, target=target,
                met=None if r is None or limit is None else r >= limit, rounds=rs,
                definition="%s onto a peer with key = PATH and protect = %s, to rpma-recv "
                           "--keys DIR%s / the same onto a peer without a key, to an rpma-recv "
                           "of the same options without --keys, back to back in each round "
                           "(each peer its own receiver, confirm = receiver; the order turned "
                           "each round; in a quick run, one round of two passes, A B then B A, "
                           "a figure the mean of both; %s)" % (
                               how, mode, " --protect encrypt" if mode == "encrypt" else "",
                               tally) + rounds_text(rs))
            if r is None and notes is not None:
                why = [v for k, v in sorted(notes.items())
                       if k == "auth.%s" % mode or k.startswith("auth.plain")
                       or (k.startswith("round.") and ".auth.%s." % mode in k)
                       or (k.startswith("round.") and ".auth.plain." in k)]
                c["reason"] = "; ".join(why) or "not measured (no figure in this run)"
                c["definition"] += "; null: " + c["reason"]
            out.append(c)


def checks(fig, notes=None):
    """The targets (and two reported figures): (key, figure text, floor text, value, target text, met, definition)."""
    g = fig.get
    out = []

    num, floor, r, rs = paired(fig, "rpmafs.async.64.msg_s", lambda get: get("null.rate.64.msg_s"))
    out.append(dict(
        key="async64_over_null", what="async write rate, 64 B, one writer",
        figure="%s msg/s" % fmt(num),
        floor="%s msg/s (null peer)" % fmt(floor),
        value=r, target=">= 0.8", met=None if r is None else r >= 0.8, rounds=rs,
        definition="rpmafs async 64 B write rate to rpma-recv / the same writer's 64 B rate "
                   "to a null peer (both: one descriptor, N write(2)s, then fsync)" +
                   rounds_text(rs)))

    num, floor, r, rs = paired(fig, "rpmafs.dd1020k.mib_s",
                               lambda get: get("perftest.bw.%d.mib_s" % MIB))
    out.append(dict(
        key="bw1m_over_perftest", what="throughput, dd bs=1020K (bs=1M is over the limit)",
        figure="%s MiB/s" % fmt(num),
        floor="%s MiB/s (ib_send_bw -s 1048576)" % fmt(floor),
        value=r, target=">= 0.95", met=None if r is None else r >= 0.95, rounds=rs,
        definition="rpmafs MiB/s with dd bs=1020K conv=fsync (1044480-byte messages) / "
                   "ib_send_bw -R -s 1048576 BW average (MiB/s)" + rounds_text(rs)))

    num, floor, r, rs = paired(fig, "rpmafs.cp1m_file.mib_s",
                               lambda get: get("rpmafs.dd1020k.mib_s"))
    out.append(dict(
        key="file_framing_1m_over_dd", what="file framing: cp of a 1 MiB file, one message each",
        figure="%s MiB/s" % fmt(num),
        floor="%s MiB/s (dd bs=1020K, write framing)" % fmt(floor),
        value=r, target=">= 0.8", met=None if r is None else r >= 0.8, rounds=rs,
        definition="MiB/s of cp of a 1 MiB file onto a framing = file spool, until confirmed "
                   "(one message per file, copied once into the pool) / MiB/s of dd bs=1020K "
                   "conv=fsync on a write-framed spool, same round" + rounds_text(rs)))

    # the two parts of file_framing_1m_over_dd (reported): a process per
    # file, which the dd floor does not start, and file framing itself
    def reported_mib_s(key, what, num_key, floor_key, figure, floor_text, definition):
        num, floor, r, rs = paired(fig, num_key, lambda get: get(floor_key))
        out.append(dict(
            key=key, what=what, figure="%s MiB/s (%s)" % (fmt(num), figure),
            floor="%s MiB/s (%s)" % (fmt(floor), floor_text),
            value=r, target="report", met=None, rounds=rs,
            definition=definition + rounds_text(rs)))

    reported_mib_s(
        "file_framing_cp_over_local_cp",
        "file framing: cp of a 1 MiB file onto the spool against cp onto a local file",
        "rpmafs.cp1m_file.mib_s", "local.cp1m.mib_s", "cp onto the spool",
        "the same cp onto tmpfs",
        "MiB/s of the cp loop of file_framing_1m_over_dd / MiB/s of the same loop copying onto "
        "a tmpfs file in the VM (a cp process per file, nothing sent)")
    reported_mib_s(
        "file_framing_inproc_over_dd",
        "file framing without a process per file: open, write 1 MiB, close, against dd",
        "rpmafs.file1m_inproc.mib_s", "rpmafs.dd1020k.mib_s", "bench-writer --per-file",
        "dd bs=1020K, write framing",
        "MiB/s of bench-writer --per-file onto the file-framed spool (each message its own "
        "open, one 1 MiB write(2) and a close = wait that returns once confirmed) / MiB/s of "
        "dd bs=1020K conv=fsync on a write-framed spool, same round")

    def lat_floor(get):
        a, b = get("null.lat.64.median_us"), get("raw.lat.64.median_us")
        return None if a is None or b is None else a + b

    # transport confirmation: the floor is one send and its completion; what
    # receiver confirmation adds (the receiver's write and its acknowledgement)
    # is acked_sync_latency_over_transport
    num, floor, r, rs = paired(fig, "transport.sync.64.median_us", lat_floor)
    out.append(dict(
        key="sync64_latency_over_floor", what="sync write latency, 64 B, median",
        figure="%s µs" % fmt(num),
        floor="%s µs (null-peer write + raw send-and-complete)" % fmt(floor),
        value=r, target="<= 1.2", met=None if r is None else r <= 1.2, rounds=rs,
        definition="rpmafs sync (O_DSYNC) 64 B median write latency, confirm = transport / (null-peer 64 B median "
                   "write latency + raw rpma_send 64 B send-and-complete median latency)" +
                   rounds_text(rs)))

    # the same write against FUSE and the send composed in one process: under
    # rxe the receiver woken by each send competes for the lab's CPUs with the
    # writer the reply wakes, which neither floor above pays alone (design.md §7)
    num, floor, r, rs = paired(fig, "transport.sync.64.median_us",
                               lambda get: get("noopsend.lat.64.median_us"))
    out.append(dict(
        key="sync64_latency_over_fuse_send",
        what="sync write latency, 64 B, median, against a no-op FUSE write that sends",
        figure="%s µs" % fmt(num),
        floor="%s µs (bench-noop-fs --send: rpma_send and its completion in the WRITE)" % fmt(floor),
        value=r, target="report", met=None, rounds=rs,
        definition="rpmafs sync (O_DSYNC) 64 B median write latency, confirm = transport / the "
                   "median latency of a 64 B write(2) to bench-noop-fs --send (tools/benchsrc/"
                   "noop-fs.c), whose WRITE copies the data into a registered buffer, posts it "
                   "with rpma_send to the same rpma-recv and replies once the worker has reaped "
                   "its completion, right after the figure in each round: FUSE and the send "
                   "composed in one process, with rpmafs's own work taken out" + rounds_text(rs)))

    num, floor, r, rs = paired(fig, "null.rate.64.msg_s", lambda get: get("noop.rate.64.msg_s"))
    out.append(dict(
        key="null_over_noop", what="null-peer write rate, 64 B, one writer",
        figure="%s msg/s (null peer)" % fmt(num),
        floor="%s msg/s (no-op FUSE file system)" % fmt(floor),
        value=r, target=">= 0.9", met=None if r is None else r >= 0.9, rounds=rs,
        definition="rpmafs null-peer 64 B write rate / the same writer's rate to bench-noop-fs "
                   "(tools/benchsrc/noop-fs.c: answers every WRITE at once, rpmafs's FUSE "
                   "settings and worker count)" + rounds_text(rs)))

    r = div(g("shell.nc_s"), g("shell.echo_s"))
    n = g("shell.messages")
    out.append(dict(
        key="shell_loop_over_nc",
        what="shell loop, %s messages: echo > spool vs echo | nc" % fmt(n, 0),
        figure="%s s (echo > spool)" % fmt(g("shell.echo_s")),
        floor="%s s (echo | nc -N, one TCP connection each)" % fmt(g("shell.nc_s")),
        value=r, target=">= 3", met=None if r is None else r >= 3,
        definition="time of the nc loop / time of the echo loop (3 means echo is 3x faster); "
                   "the echo loop's time runs until rpma-recv has confirmed every message"))

    num, floor, r, rs = paired(fig, "acked.async.64.msg_s",
                               lambda get: get("transport.async.64.msg_s"))
    rnr_acked = sum(fig.get(k, 0) for k in fig
                    if k.startswith("round.") and ".acked." in k and k.endswith(".rnr_naks"))
    out.append(dict(
        key="acked_async_over_transport",
        what="async write rate, 64 B: receiver confirmation against transport",
        figure="%s msg/s (confirm = receiver)" % fmt(num),
        floor="%s msg/s (confirm = transport)" % fmt(floor),
        value=r, target=">= 0.9", met=None if r is None else r >= 0.9, rounds=rs,
        definition="rpmafs async 64 B write rate (N write(2)s, then fsync) to one rpma-recv, "
                   "receiver-confirmed / the same with confirm = transport; RNR NAKs in the "
                   "receiver-confirmed runs: %s" % fmt(rnr_acked, 0) + rounds_text(rs)))

    num, floor, r, rs = paired(fig, "output.async.64.msg_s",
                               lambda get: get("transport.async.64.msg_s"))
    out.append(dict(
        key="acked_async_over_transport_output",
        what="async write rate, 64 B: receiver confirmation into rpma-recv --output FILE "
             "(state file on) against transport",
        figure="%s msg/s (confirm = receiver, --output FILE)" % fmt(num),
        floor="%s msg/s (confirm = transport, standard output)" % fmt(floor),
        value=r, target=">= 0.9", met=None if r is None else r >= 0.9, rounds=rs,
        definition="as acked_async_over_transport, with the receiver-confirmed writes going to "
                   "an rpma-recv --format len --output FILE, which saves its state file "
                   "(docs/design.md §5.1) before every acknowledgement" + rounds_text(rs)))

    auth_checks(fig, out, notes)

    # RNR NAKs the sending rxe received (hw counter rcvd_rnr_err) in the receiver-confirmed runs
    rnr_keys = [k for k in fig
                if k.startswith("round.") and ".acked." in k and k.endswith(".rnr_naks")]
    rnr = sum(fig[k] for k in rnr_keys) if rnr_keys else None
    out.append(dict(
        key="rnr_naks_confirmed",
        what="RNR NAKs in the receiver-confirmed runs (async and sync, 64 B)",
        figure=fmt(rnr, 0), floor="0 (credits: never a send without a posted receive)",
        value=rnr, target="== 0", met=None if rnr is None else rnr == 0,
        definition="growth of the sending rxe device's hw counter rcvd_rnr_err "
                   "(/sys/class/infiniband/DEV/ports/1/hw_counters) over the rounds' "
                   "confirm = receiver runs, %d runs" % len(rnr_keys)))

    num, floor, r, rs = paired(fig, "acked.sync.64.median_us",
                               lambda get: get("transport.sync.64.median_us"))
    out.append(dict(
        key="acked_sync_latency_over_transport",
        what="sync write latency, 64 B, median: receiver confirmation against transport",
        figure="%s µs (confirm = receiver)" % fmt(num),
        floor="%s µs (confirm = transport)" % fmt(floor),
        value=r, target="<= 1.3", met=None if r is None else r <= 1.3, rounds=rs,
        definition="rpmafs sync 64 B median write latency, receiver-confirmed (returns at the "
                   "acknowledgement) / the same with confirm = transport (returns at the "
                   "completion)" + rounds_text(rs)))

    def rtt_floor(get):
        a, b = get("null.lat.64.median_us"), get("perftest.lat.64.typical_us")
        return None if a is None or b is None else a + 2 * b

    num, floor, r, rs = paired(fig, "acked.sync.64.median_us", rtt_floor)
    out.append(dict(
        key="acked_sync_latency_over_rtt_floor",
        what="sync write latency, 64 B, median, receiver-confirmed, against a FUSE write and "
             "an RDMA round trip",
        figure="%s µs (confirm = receiver)" % fmt(num),
        floor="%s µs (null-peer write + 2 x ib_send_lat 64 B typical)" % fmt(floor),
        value=r, target="report", met=None, rounds=rs,
        definition="rpmafs sync (O_DSYNC) 64 B median write latency, receiver-confirmed (r0, "
                   "returns at the acknowledgement) / (the null peer's 64 B median write "
                   "latency + 2 x ib_send_lat -R -e -s 64 t_typical, half a round trip each, "
                   "run just before the figure), all in the same round: a FUSE write plus "
                   "the message's SEND and the acknowledgement's SEND back, nothing for the "
                   "receiver's own work" + rounds_text(rs)))

    r = div(g("shell.echo_s"), g("shell.echo_close_return_acked_s"))
    out.append(dict(
        key="close_wait_shell_cost",
        what="shell loop, %s messages: close = wait against close = return" % fmt(n, 0),
        figure="%s s (close = wait)" % fmt(g("shell.echo_s")),
        floor="%s s (close = return, until acknowledged; %s s until the loop ended)" % (
            fmt(g("shell.echo_close_return_acked_s")), fmt(g("shell.echo_close_return_s"))),
        value=r, target="report", met=None,
        definition="time of the echo > spool loop with close = wait (every close returns after "
                   "its acknowledgement) / the same loop with close = return, timed until "
                   "rpma-recv acknowledged every message"))

    r = div(g("rpmafs.async64_x4.msg_s"), g("rpmafs.async.64.msg_s"))
    out.append(dict(
        key="async64_4peers_over_1",
        what="async write rate, 64 B: 4 writers on 4 peers against one writer",
        figure="%s msg/s (sum of 4 writers)" % fmt(g("rpmafs.async64_x4.msg_s")),
        floor="%s msg/s (one writer)" % fmt(g("rpmafs.async.64.msg_s")),
        value=r, target="report", met=None,
        definition="sum of the msg/s of 4 bench-writers (64 B, async, then fsync) started "
                   "together on r0..r3 (4 rpma-recv) / one writer's rate on r0, same run"))

    # the inbox (tools/benchsrc/inbox.sh): reported, no target
    out.append(dict(
        key="inbox_rate_over_recv",
        what="receive rate, 64 B: a mount's inbox (read by head -c) against rpma-recv to /dev/null",
        figure="%s msg/s (inbox)" % fmt(g("inbox.rate.inbox_msg_s")),
        floor="%s msg/s (rpma-recv --format lines)" % fmt(g("inbox.rate.recv_msg_s")),
        value=g("inbox_rate_over_recv"), target="report", met=None,
        definition="N messages of 64 B from one mount's bench-writer, from its start to the "
                   "receiver's end: into mount B's inbox (inbox_format lines, drained by head -c "
                   "of exactly N records) / into rpma-recv --output /dev/null --count N"))
    # paired rounds of its own (inbox.pingpong.R.*): ib_send_lat, then the ping-pong
    lat, rs, rr = g("inbox.pingpong.lat_us"), [], 1
    while g("inbox.pingpong.%d.rtt_us" % rr) is not None:
        rtt_r, lat_r = g("inbox.pingpong.%d.rtt_us" % rr), g("inbox.pingpong.%d.lat_us" % rr)
        rs.append(div(rtt_r, None if lat_r is None else 2 * lat_r))
        rr += 1
    r = g("inbox_pingpong_over_send_lat")
    out.append(dict(
        key="inbox_pingpong_over_send_lat",
        what="ping-pong between two mounts' inboxes (echo > spool; read -r < inbox), round trip",
        figure="%s µs" % fmt(g("inbox.pingpong.rtt_us")),
        floor="%s µs (2 x ib_send_lat 64 B typical)" % fmt(None if lat is None else 2 * lat),
        value=r, target="<= 8", met=None if r is None else r <= 8, rounds=rs,
        definition="A's shell loop echo p > pp; read -r r < inbox against B's while read -r m; "
                   "do echo \"$m\" > a; done < inbox (close = wait), mean round trip (timed "
                   "by the loop's own shell) / two ib_send_lat -R -e 64 B typical latencies "
                   "measured just before it, median of the rounds" + rounds_text(rs)))
    frs, rr = [], 1
    while g("inbox.pingpong.%d.rtt_us" % rr) is not None:
        frs.append(div(g("inbox.pingpong.%d.rtt_us" % rr), g("inbox.pingpong.%d.fifo_rtt_us" % rr)))
        rr += 1
    r = g("inbox_pingpong_over_shell_fifo")
    out.append(dict(
        key="inbox_pingpong_over_shell_fifo",
        what="ping-pong between two mounts' inboxes against the same shell loops over two FIFOs",
        figure="%s µs (inbox)" % fmt(g("inbox.pingpong.rtt_us")),
        floor="%s µs (two FIFOs on tmpfs)" % fmt(g("inbox.pingpong.fifo_rtt_us")),
        value=r, target="report", met=None, rounds=frs,
        definition="the round trip of inbox_pingpong_over_send_lat / the round trip of the "
                   "same two bash loops over two FIFOs in a tmpfs directory of the VM (mkfifo "
                   "ab ba; B: while read -r m; do echo \"$m\" > ba; done <> ab, opened "
                   "read-write so that it never sees EOF; A: echo p$i > ab; read -r r < ba), "
                   "as many round trips right after it in each round, timed the same way: "
                   "the shell's own cost of the exchange, without FUSE or a network (bash "
                   "reads a FIFO a byte per read(2), the seekable inbox a line per read(2))" +
                   rounds_text(frs)))

    # counted, not timed: per message of a counted pass (inside.sh, "counted
    # passes"), each figure over the null peer's of the same round
    n = fmt(g("count.messages"), 0)
    for key, name, what_num, target, limit in (
            ("syscalls_async64_over_null", "syscalls.async64",
             "system calls per async 64 B message, confirm = transport", "<= 1.5", 1.5),
            ("syscalls_acked64_over_null", "syscalls.acked64",
             "system calls per async 64 B message, confirm = receiver", "<= 2", 2.0),
            ("ctxsw_async64_over_null", "ctxsw.async64",
             "context switches per async 64 B message, confirm = transport", "<= 1.5", 1.5)):
        floor_key = name.split(".")[0] + ".null64"
        num, floor, r, rs = paired(fig, "count." + name, lambda get, k=floor_key: get("count." + k))
        unit = "calls" if name.startswith("syscalls") else "switches"
        out.append(dict(
            key=key, what=what_num,
            figure="%s %s per message" % (fmt(num), unit),
            floor="%s %s per message (null peer)" % (fmt(floor), unit),
            value=r, target=target, met=None if r is None else r <= limit, rounds=rs,
            definition="%s the daemon makes (all its threads) per message over %s async 64 B "
                       "writes and their fsync / the same for the null peer; counted in a pass "
                       "of its own (%s), not timed" % (
                           "system calls (strace -f -c)" if unit == "calls" else
                           "voluntary + involuntary context switches (/proc/PID/task/*/status)",
                           n, "strace attached to every thread" if unit == "calls" else
                           "without strace") + rounds_text(rs)))

    # CPU time per message (paired rounds, each figure and its floor in the
    # same round; utime+stime, or schedstat run time, over the messages)
    def cpu_floor(get):
        a, b = get("daemon.cpu_us_per_msg.null64"), get("raw.to_floor_recv.cpu_us_per_msg")
        return None if a is None or b is None else a + b

    num, floor, r, rs = paired(fig, "daemon.cpu_us_per_msg.transport64", cpu_floor)
    out.append(dict(
        key="cpu_async64_over_floor",
        what="daemon CPU per async 64 B message, confirm = transport, against FUSE + a raw send",
        figure="%s µs per message" % fmt(num),
        floor="%s µs per message (null peer's daemon + raw rpma_send client)" % fmt(floor),
        value=r, target="<= 1.5 (quiet host)", met=None if r is None else r <= 1.5, rounds=rs,
        definition="the daemon's CPU time (utime+stime of all its threads, /proc/PID/stat) "
                   "over a bench-writer run of async 64 B writes and their fsync to t0 "
                   "(confirm = transport, one rpma-recv) / messages posted, against the same "
                   "for the null peer + the CPU time (getrusage) per message of bench-rpma "
                   "send, 64 B, window 16, over its timed span, all three in the same round" +
                   rounds_text(rs)))

    num, floor, r, rs = paired(fig, "rpma_recv.cpu_us_per_msg",
                               lambda get: get("floor_recv.cpu_us_per_msg"))
    out.append(dict(
        key="recv_cpu_per_msg_over_floor",
        what="rpma-recv CPU per received 64 B message against a plain receive loop",
        figure="%s µs per message (rpma-recv --format raw, to /dev/null)" % fmt(num),
        floor="%s µs per message (bench-rpma recv --srq)" % fmt(floor),
        value=r, target="<= 1.5", met=None if r is None else r <= 1.5, rounds=rs,
        definition="CPU time of rpma-recv (run time of its threads, /proc/PID/task/*/schedstat) "
                   "while one bench-rpma send (64 B, window 16, no rpmafs private data) sends "
                   "to it / the messages it logs for the connection, against the same for "
                   "bench-rpma recv --srq (tools/benchsrc/rpma-floor.c: receive, re-post, "
                   "nothing else), each on a shared receive queue of 64 receives of 4 KiB, "
                   "same round" + rounds_text(rs)))

    num, floor, r, rs = paired(fig, "inbox.cpu_us_per_msg",
                               lambda get: get("inbox.recv_cpu_us_per_msg"))
    out.append(dict(
        key="inbox_cpu_per_msg_over_recv",
        what="a mount's inbox: daemon CPU per received 64 B message against rpma-recv's",
        figure="%s µs per message (mount B's daemon, inbox read by head -c)" % fmt(num),
        floor="%s µs per message (rpma-recv --format lines, to /dev/null)" % fmt(floor),
        value=r, target="<= 1.5", met=None if r is None else r <= 1.5, rounds=rs,
        definition="CPU time (utime+stime, all threads) of mount B's daemon while mount A's "
                   "bench-writer sends %s 64 B messages to B's inbox (inbox_format lines), "
                   "drained by head -c of exactly as many records, / messages, against the "
                   "CPU time (run time of its threads) of an rpma-recv --format lines "
                   "(standard output to /dev/null) receiving as many from the same writer "
                   "until A's status has them all acknowledged, / messages; both "
                   "receiver-confirmed, same round (tools/benchsrc/inbox.sh)" % fmt(
                       g("inbox.cpu.messages"), 0) + rounds_text(rs)))

    def inbox_cpu_floor(get):
        a, b = get("inbox.recv_cpu_us_per_msg"), get("inbox.noop_read_cpu_us_per_msg")
        return None if a is None or b is None else a + b

    num, floor, r, rs = paired(fig, "inbox.cpu_us_per_msg", inbox_cpu_floor)
    out.append(dict(
        key="inbox_cpu_per_msg_over_floor",
        what="a mount's inbox: daemon CPU per received 64 B message against rpma-recv's and "
             "a no-op FUSE read's",
        figure="%s µs per message (mount B's daemon, inbox read by head -c)" % fmt(num),
        floor="%s µs per message (rpma-recv --format lines + bench-noop-fs, one READ)" % fmt(
            floor),
        value=r, target="report", met=None, rounds=rs,
        definition="the inbox's CPU per message of inbox_cpu_per_msg_over_recv / (rpma-recv's "
                   "CPU per message of that ratio's floor + bench-noop-fs's CPU time (run time "
                   "of its threads) per record while head -c reads as many 65-byte records "
                   "from its file r, one READ answered at once each: %s READs per record, as "
                   "it counted them), all in the same round: receiving without a FUSE read "
                   "plus one FUSE READ and its reply alone, which the inbox pays per message "
                   "by design (one record per read(2), docs/design.md §13.3)" % fmt(
                       g("inbox.noop.reads_per_record"), 2) + rounds_text(rs)))

    for key, num_key, floor_key, what, floor_name, how in (
            ("recv_syscalls_per_msg_over_floor", "rpma_recv", "floor_recv",
             "rpma-recv system calls per received 64 B message against a plain receive loop",
             "bench-rpma recv --srq",
             "one bench-rpma send (64 B, window 16, a plain sender) to each receiver, over "
             "the messages each logs for the connection"),
            ("inbox_syscalls_per_msg_over_recv", "inbox", "inbox_recv",
             "a mount's inbox: daemon system calls per received 64 B message against rpma-recv's",
             "rpma-recv --format lines, to /dev/null",
             "mount A's bench-writer (64 B) into B's inbox drained by head -c, and into "
             "rpma-recv until A's status has them all acknowledged")):
        num, floor, r, rs = paired(fig, "count.syscalls." + num_key,
                                   lambda get, k=floor_key: get("count.syscalls." + k))
        n_key = "inbox.count.messages" if num_key == "inbox" else "count.messages"
        out.append(dict(
            key=key, what=what,
            figure="%s calls per message" % fmt(num),
            floor="%s calls per message (%s)" % (fmt(floor), floor_name),
            value=r, target="<= 1.5", met=None if r is None else r <= 1.5, rounds=rs,
            definition="system calls (strace -f -c, every thread) per message over %s; "
                       "%s messages per pass, counted in a pass of its own, not timed" % (
                           how, fmt(g(n_key), 0)) + rounds_text(rs)))

    # an ordinary user's default mount (8 MiB RLIMIT_MEMLOCK) against root's, same run
    held, n = g("user.default.inflight_64b"), g("user.default.inflight_written")
    out.append(dict(
        key="nonroot_inflight_64b",
        what="64 B messages in flight at once: an ordinary user's default mount, 8 MiB memlock",
        figure="%s messages (of %s written)" % (fmt(held, 0), fmt(n, 0)),
        floor="%s small slots, %s request buffers (root's default mount: %s in flight)" % (
            fmt(g("user.default.small_slots"), 0), fmt(g("user.default.request_buffers"), 0),
            fmt(g("root.default.inflight_64b"), 0)),
        value=held, target=">= 256", met=None if held is None else held >= 256,
        definition="nobody with RLIMIT_MEMLOCK 8 MiB (Debian's default) mounts a config with "
                   "[rpmafs] at its defaults, one peer on rpma-recv --no-srq --slots 512 "
                   "(receiver confirmation, 511 credits); the receiver is stopped (SIGSTOP), "
                   "one writer writes small_slots + slots async 64 B messages, and in_flight + "
                   "unacked of the status is read once all are posted (posted, not "
                   "acknowledged); then the receiver goes on and every one must be "
                   "acknowledged (%s resent)" % fmt(g("user.default.inflight_resent"), 0)))

    num, floor, r, rs = paired(fig, "userdef.async.64.msg_s",
                               lambda get: get("rootdef.async.64.msg_s"))
    out.append(dict(
        key="nonroot_async64_over_root",
        what="async write rate, 64 B: an ordinary user's default mount against root's",
        figure="%s msg/s (nobody, 8 MiB memlock: %s KiB registered)" % (
            fmt(num), fmt(g("user.default.pool_kib"), 0)),
        floor="%s msg/s (root: %s KiB registered)" % (fmt(floor),
                                                       fmt(g("root.default.pool_kib"), 0)),
        value=r, target="report", met=None, rounds=rs,
        definition="bench-writer 64 B, async, then fsync, as nobody onto nobody's default "
                   "mount (RLIMIT_MEMLOCK 8 MiB) / the same as root onto root's default mount, "
                   "back to back in each round, both to one rpma-recv --no-srq --slots 512" +
                   rounds_text(rs)))

    r = None
    if g("daemon.hwm_mib") is not None and g("daemon.pool_mib") is not None:
        r = g("daemon.hwm_mib") - g("daemon.pool_mib")
    out.append(dict(
        key="rss_over_pool_mib", what="daemon peak RSS above the registered pool",
        figure="%s MiB peak RSS (VmHWM)" % fmt(g("daemon.hwm_mib")),
        floor="%s MiB pool" % fmt(g("daemon.pool_mib")),
        value=r, target="<= 16 MiB", met=None if r is None else r <= 16,
        definition="peak RSS (VmHWM, MiB) of the daemon after every run above - the registered "
                   "pool in MiB ((slots + workers) x 1028 KiB and the small slots, 256 x 4 "
                   "KiB); a difference in MiB, not a ratio"))

    # small payloads are copied into small slots by design (design.md §4.5): the
    # target is on the others, which must stay zero-copy
    big = minus_or_none(g("daemon.payload_copies"), g("daemon.small_copies"))
    r = div(big, g("daemon.messages"))
    out.append(dict(
        key="payload_copies", what="payload copies per message, beyond the small-slot copies",
        figure="%s copies (%s of %s into small slots)" % (
            fmt(big, 0), fmt(g("daemon.small_copies"), 0), fmt(g("daemon.payload_copies"), 0)),
        floor="%s messages" % fmt(g("daemon.messages"), 0),
        value=r, target="0", met=None if r is None else r == 0,
        definition="(sum of payload_copies - sum of small_copies) over the write-framed peers' "
                   "status files / messages posted, over every run of the main mount (counted "
                   "by the daemon, not assumed): a write of up to 4 KiB is copied into a small "
                   "slot by design, every larger one is sent from the request buffer; the "
                   "file-framed f0 copies each message once by design (%s copies, %s messages)"
                   % (fmt(g("daemon.file_framing_copies"), 0),
                      fmt(g("daemon.file_framing_messages"), 0))))
    return out


def size_name(s):
    return {64: "64 B", 4096: "4 KiB", MIB: "1 MiB", MAX: "1020 KiB"}.get(s, "%d B" % s)


def figure_tables(fig):
    g = fig.get
    rows = []

    def row(section, name, value, unit, extra=""):
        rows.append((section, name, value, unit, extra))

    sec = "Message rate (msg/s), one sender"
    for s in (64, 4096, MIB):
        row(sec, "ib_send_bw -R, %s" % size_name(s), g("perftest.bw.%d.msg_s" % s), "msg/s")
    for s in (64, 4096, MIB):
        row(sec, "raw rpma_send, window 16, %s" % size_name(s), g("raw.rate.%d.msg_s" % s), "msg/s",
            rnr(g, "raw.rate.%d" % s))
    row(sec, "no-op FUSE file system (bench-noop-fs): writer, 64 B", g("noop.rate.64.msg_s"),
        "msg/s")
    for s in (64, 4096, MAX):
        row(sec, "null peer: writer, %s" % size_name(s), g("null.rate.%d.msg_s" % s), "msg/s")
    for s in (64, 4096, MAX):
        row(sec, "rpmafs async: writer, %s" % size_name(s), g("rpmafs.async.%d.msg_s" % s),
            "msg/s", rnr(g, "rpmafs.async.%d" % s))
    row(sec, "rpmafs async, completion = on_error: writer, 64 B",
        g("rpmafs.async_on_error.64.msg_s"), "msg/s", rnr(g, "rpmafs.async_on_error.64"))
    # In the lab one pair of vCPUs runs FUSE, rxe (the "NIC") and the receiver:
    # if their costs simply added up, this is the best an async spool could do.
    null, raw = g("null.rate.64.msg_s"), g("raw.rate.64.msg_s")
    row(sec, "null peer and raw send costs added, 64 B: 1 / (1/null + 1/raw)",
        1 / (1 / null + 1 / raw) if null and raw else None, "msg/s",
        "a bound where FUSE, rxe and the receiver share the CPUs")

    sec = "Latency (µs): median / p99"
    for s in (64, 4096, MIB):
        row(sec, "ib_send_lat -R, %s (half a round trip; typical)" % size_name(s),
            g("perftest.lat.%d.typical_us" % s), "µs", "p99 %s" % fmt(g("perftest.lat.%d.p99_us" % s)))
    for s in (64, 4096, MIB):
        row(sec, "raw rpma_send, send-and-complete, %s" % size_name(s), g("raw.lat.%d.median_us" % s),
            "µs", "p99 %s" % fmt(g("raw.lat.%d.p99_us" % s)))
    row(sec, "no-op FUSE file system: write(2), 64 B", g("noop.lat.64.median_us"), "µs",
        "p99 %s" % fmt(g("noop.lat.64.p99_us")))
    for s in (64, 4096, MAX):
        row(sec, "null peer: write(2), %s" % size_name(s), g("null.lat.%d.median_us" % s), "µs",
            "p99 %s" % fmt(g("null.lat.%d.p99_us" % s)))
    for s in (64, 4096, MAX):
        row(sec, "rpmafs sync (O_DSYNC): write(2), %s" % size_name(s),
            g("rpmafs.sync.%d.median_us" % s), "µs", "p99 %s" % fmt(g("rpmafs.sync.%d.p99_us" % s)))

    sec = "Throughput (MiB/s)"
    row(sec, "ib_send_bw -R, 1 MiB", g("perftest.bw.%d.mib_s" % MIB), "MiB/s")
    row(sec, "raw rpma_send, window 16, 1 MiB", g("raw.rate.%d.mib_s" % MIB), "MiB/s")
    row(sec, "null peer: writer, 1020 KiB", g("null.rate.%d.mib_s" % MAX), "MiB/s")
    row(sec, "rpmafs async: writer, 1020 KiB", g("rpmafs.async.%d.mib_s" % MAX), "MiB/s",
        rnr(g, "rpmafs.async.%d" % MAX))
    row(sec, "rpmafs: dd bs=1020K conv=fsync, one writer", g("rpmafs.dd1020k.mib_s"), "MiB/s",
        rnr(g, "rpmafs.dd1020k"))
    row(sec, "rpmafs: 4 x dd bs=1020K on 4 peers (sum)", g("rpmafs.dd1020k_x4.mib_s"), "MiB/s")
    x4, x1 = g("rpmafs.async64_x4.msg_s"), g("rpmafs.async.64.msg_s")
    row(sec, "rpmafs async 64 B: 4 writers on 4 peers (sum of their rates)", x4, "msg/s",
        "%s x one writer" % fmt(div(x4, x1), 2))

    sec = "Shell loops"
    n = g("shell.messages")
    for key, name in (("shell.echo_s", "echo \"message $i\" > spool"),
                      ("shell.nc_s", "echo \"message $i\" | nc -N LAB_B 7400")):
        per = div(g(key), n)
        row(sec, name, g(key), "s", "%s ms per message" % fmt(None if per is None else per * 1e3))

    sec = "The daemon"
    for k, name in (("null64", "null peer, 64 B"), ("async64", "async 64 B"),
                    ("async64_on_error", "async 64 B, completion = on_error"),
                    ("sync64", "sync 64 B"), ("dd1020k", "dd bs=1020K")):
        row(sec, "CPU time per message, %s (utime+stime / messages)" % name,
            g("daemon.cpu_us_per_msg.%s" % k), "µs",
            "over %s messages; of it the engine thread (completions) %s µs, the FUSE "
            "workers (and the rest) %s µs; r0's rpma-recv %s µs" % (
                fmt(g("daemon.cpu_msgs.%s" % k), 0),
                fmt(g("daemon.engine_cpu_us_per_msg.%s" % k)),
                fmt(minus_or_none(g("daemon.cpu_us_per_msg.%s" % k),
                                  g("daemon.engine_cpu_us_per_msg.%s" % k))),
                fmt(g("recv.cpu_us_per_msg.%s" % k))))
    for k, name in (("null64", "null peer"), ("async64", "confirm = transport"),
                    ("acked64", "confirm = receiver")):
        calls, sw = paired(fig, "count.syscalls." + k, lambda get: 1)[0], \
            paired(fig, "count.ctxsw." + k, lambda get: 1)[0]
        row(sec, "system calls per async 64 B message, %s (strace -f -c, all threads)" % name,
            calls, "calls", "median of the counted rounds; context switches per message %s" % fmt(sw))
    for k, name in (("async64", "confirm = transport"), ("acked64", "confirm = receiver")):
        row(sec, "r0's rpma-recv: system calls per message, %s" % name,
            paired(fig, "count.recv_syscalls." + k, lambda get: 1)[0], "calls",
            "the same counted passes")
    row(sec, "peak RSS (VmHWM), 6 peers (one null)", g("daemon.hwm_mib"), "MiB")
    row(sec, "registered pool (%s slots + 4 workers, %s small slots of 4 KiB)" % (
        fmt(g("daemon.slots"), 0), fmt(g("daemon.small_slots"), 0)), g("daemon.pool_mib"), "MiB")
    row(sec, "payload copies / messages", g("daemon.payload_copies"), "copies",
        "over %s messages, %s failed" % (fmt(g("daemon.messages"), 0), fmt(g("daemon.failed"), 0)))

    sec = "An ordinary user's default mount (8 MiB memlock) against root's"
    for who, name in (("user", "nobody, 8 MiB memlock"), ("root", "root")):
        row(sec, "%s: registered pool" % name, g("%s.default.pool_kib" % who), "KiB",
            "%s request buffers, %s small slots" % (
                fmt(g("%s.default.request_buffers" % who), 0),
                fmt(g("%s.default.small_slots" % who), 0)))
        row(sec, "%s: 64 B messages in flight at once (receiver stopped)" % name,
            g("%s.default.inflight_64b" % who), "messages",
            "of %s written" % fmt(g("%s.default.inflight_written" % who), 0))
    r = 1
    while any(k.startswith("round.%d." % r) for k in fig):
        row(sec, "round %d: async 64 B, nobody's default mount" % r,
            g("round.%d.userdef.async.64.msg_s" % r), "msg/s")
        row(sec, "round %d: async 64 B, root's default mount" % r,
            g("round.%d.rootdef.async.64.msg_s" % r), "msg/s")
        r += 1
    row(sec, "nobody's mount: payload copies / messages", g("user.default.payload_copies"),
        "copies", "%s into small slots, over %s messages, %s failed" % (
            fmt(g("user.default.small_copies"), 0), fmt(g("user.default.messages"), 0),
            fmt(g("user.default.failed"), 0)))

    sec = "Paired rounds (the targets' medians come from these)"
    r = 1
    while any(k.startswith("round.%d." % r) for k in fig):
        for key, name, unit in (
                ("perftest.bw.%d.mib_s" % MIB, "ib_send_bw -R, 1 MiB", "MiB/s"),
                ("rpmafs.dd1020k.mib_s", "dd bs=1020K conv=fsync", "MiB/s"),
                ("rpmafs.cp1m_file.mib_s", "file framing: cp of a 1 MiB file, a process each", "MiB/s"),
                ("local.cp1m.mib_s", "the same cp onto a tmpfs file", "MiB/s"),
                ("rpmafs.file1m_inproc.mib_s", "file framing: open, write 1 MiB, close, one process", "MiB/s"),
                ("noop.rate.64.msg_s", "no-op FUSE file system: writer, 64 B", "msg/s"),
                ("null.rate.64.msg_s", "null peer: writer, 64 B", "msg/s"),
                ("rpmafs.async.64.msg_s", "rpmafs async: writer, 64 B", "msg/s"),
                ("rpmafs.async.64.batch", "rpmafs async, 64 B: sends per ibv_post_send (workers post)", ""),
                ("auth.plain.async.64.msg_s", "no key (p0): writer, 64 B", "msg/s"),
                ("auth.mac.async.64.msg_s", "key, protect = mac (a0): writer, 64 B", "msg/s"),
                ("auth.encrypt.async.64.msg_s", "key, protect = encrypt (x0): writer, 64 B", "msg/s"),
                ("auth.plain.dd1020k.mib_s", "no key (p0): dd bs=1020K conv=fsync", "MiB/s"),
                ("auth.mac.dd1020k.mib_s", "key, protect = mac (a0): dd bs=1020K conv=fsync", "MiB/s"),
                ("auth.encrypt.dd1020k.mib_s", "key, protect = encrypt (x0): dd bs=1020K conv=fsync",
                 "MiB/s"),
                ("null.lat.64.median_us", "null peer: write(2), 64 B, median", "µs"),
                ("raw.lat.64.median_us", "raw rpma_send, send-and-complete, 64 B, median", "µs"),
                ("rpmafs.sync.64.median_us", "rpmafs sync: write(2), 64 B, median", "µs"),
                ("perftest.lat.64.typical_us", "ib_send_lat -R -e, 64 B, typical (half a round trip)",
                 "µs"),
                ("transport.sync.64.median_us",
                 "rpmafs sync: write(2), 64 B, median, confirm = transport (t0)", "µs"),
                ("acked.sync.64.median_us",
                 "rpmafs sync: write(2), 64 B, median, confirm = receiver (r0)", "µs"),
                ("daemon.cpu_us_per_msg.null64", "daemon CPU per message, null peer, async 64 B", "µs"),
                ("daemon.cpu_us_per_msg.transport64",
                 "daemon CPU per message, async 64 B, confirm = transport (t0)", "µs"),
                ("daemon.cpu_us_per_msg.acked64",
                 "daemon CPU per message, async 64 B, confirm = receiver (r0)", "µs"),
                ("raw.to_floor_recv.cpu_us_per_msg",
                 "raw rpma_send client CPU per message, 64 B, window 16", "µs"),
                ("raw.to_floor_recv.msg_s", "raw rpma_send, window 16, 64 B, to the plain loop", "msg/s"),
                ("rpma_recv.cpu_us_per_msg", "rpma-recv CPU per message, plain sender, 64 B", "µs"),
                ("floor_recv.cpu_us_per_msg",
                 "plain receive loop (bench-rpma recv --srq) CPU per message, 64 B", "µs"),
                ("inbox.cpu_us_per_msg", "inbox: mount B's daemon CPU per received message", "µs"),
                ("inbox.recv_cpu_us_per_msg",
                 "rpma-recv --format lines CPU per message, same writer as the inbox", "µs"),
                ("inbox.noop_read_cpu_us_per_msg",
                 "no-op FUSE file system: CPU per 65-byte record read by head -c", "µs"),
                ("count.syscalls.rpma_recv", "rpma-recv system calls per message (counted)", "calls"),
                ("count.syscalls.floor_recv", "plain receive loop system calls per message (counted)",
                 "calls"),
                ("count.syscalls.inbox", "inbox: mount B's daemon system calls per message (counted)",
                 "calls"),
                ("count.syscalls.inbox_recv",
                 "rpma-recv --format lines system calls per message (counted)", "calls")):
            row(sec, "round %d: %s" % (r, name), g("round.%d.%s" % (r, key)), unit)
        r += 1

    sec = "Peers in one mount (one rpma-recv)"
    for e in peers(fig):
        row(sec, "%d peers: start to every peer connected" % e["peers"], e["connect_s"], "s",
            "mounted after %s s; unmount %s s; %s of %d delivered one message" % (
                fmt(e["mount_s"]), fmt(e["unmount_s"]), fmt(e["delivered"], 0), e["peers"]))
        row(sec, "%d peers: rpmafs RSS (VmRSS)" % e["peers"], e["rss_mib"], "MiB",
            "peak %s MiB; %s descriptors; %s threads" % (
                fmt(e["hwm_mib"]), fmt(e["fds"], 0), fmt(e["threads"], 0)))

    sec = "Fan-in: plain librpma senders to one rpma-recv"
    for e in fan_in(fig):
        row(sec, "%d connections, %s: total rate" % (e["connections"], e["queue"]), e["msg_s"],
            "msg/s", "rpma-recv RSS %s MiB (peak %s, before sending %s); connecting took %s s; "
            "RNR NAKs %s" % (fmt(e["rss_mib"]), fmt(e["hwm_mib"]), fmt(e["rss_idle_mib"]),
                             fmt(e["connect_s"]), fmt(e["rnr_naks"], 0)))
    return rows


def fan_in(fig):
    """The fan-in table: one entry per (queue, connections) measured."""
    out = []
    for mode, name in (("srq", "shared receive queue"), ("nosrq", "--no-srq")):
        ks = sorted({int(k.split(".")[2]) for k in fig if k.startswith("fanin.%s." % mode)})
        for k in ks:
            def g(f):
                return fig.get("fanin.%s.%d.%s" % (mode, k, f))
            out.append({"queue": name, "connections": k, "msg_s": g("msg_s"),
                        "rss_mib": g("rss_mib"), "hwm_mib": g("hwm_mib"),
                        "rss_idle_mib": g("rss_idle_mib"), "connect_s": g("connect_s"),
                        "messages": g("messages"), "rnr_naks": g("rnr_naks")})
    return out


def peers(fig):
    """The peers table (tools/benchsrc/peers.sh): one entry per mount size measured."""
    ns = sorted({int(k.split(".")[0][6:]) for k in fig if k.startswith("peers_")})
    out = []
    for n in ns:
        e = {"peers": n}
        for f in ("connect_s", "mount_s", "unmount_s", "rss_mib", "hwm_mib", "fds", "threads",
                  "delivered"):
            e[f] = fig.get("peers_%d.%s" % (n, f))
        out.append(e)
    return out


def rnr(g, prefix):
    n, r = g(prefix + ".rnr_naks"), g(prefix + ".retransmits")
    if n is None and r is None:
        return ""
    return "RNR NAKs %s, retransmits %s" % (fmt(n, 0), fmt(r, 0))


def cell(text):
    """A table cell: a | in it (echo | nc) would split the row."""
    return str(text).replace("|", "\\|")


def write_md(path, fig, notes, meta, cks, rows):
    met = sum(1 for c in cks if c["met"])
    L = []
    L.append("# rpmafs benchmark results")
    L.append("")
    L.append("One %s run of `tools/bench` (%s, every figure from the same VM run), lab: %s, "
             "kernel %s, %s vCPUs; host: %s CPUs, load average %s before and %s after "
             "(1/5/15 min), at most %s while it ran, other VMs running beside it: at most %s. "
             "Source: %s." % (
                 meta.get("mode", "?"), meta.get("date", "?"),
                 meta.get("lab_mode", "?"), meta.get("kernel", "?"), meta.get("lab_cpus", "?"),
                 meta.get("host_cpus", "?"), meta.get("host_load_before", "?"),
                 meta.get("host_load_after", "?"), meta.get("host_load_max", "?"),
                 meta.get("host_other_vms_max", "?"), meta.get("commit", "?")))
    L.append("")
    L.append("All floors are measured in the same run, on the same Soft-RoCE (rdma_rxe) link: "
             "client on LAB_A (rxe0), server or receiver on LAB_B (rxe1). rpmafs sends to "
             "`rpma-recv --max-message 1MiB --slots 64 --format raw` (output to /dev/null). "
             "MiB/s is 2^20 bytes per second (perftest's \"MB/sec\" is the same unit).")
    L.append("")
    L.append("## Targets: %d of %d met" % (met, sum(1 for c in cks if c["target"] != "report")))
    L.append("")
    L.append("| figure | rpmafs | floor | ratio (key) | target | met |")
    L.append("| --- | --- | --- | --- | --- | --- |")
    for c in cks:
        L.append("| %s | %s | %s | %s (`%s`) | %s | %s |" % tuple(cell(x) for x in (
            c["what"], c["figure"], c["floor"],
            fmt(c["value"], 2 if c["key"] not in ("payload_copies",) else 3),
            c["key"], c["target"],
            "reported" if c["target"] == "report" and c["value"] is not None else
            "missing" if c["met"] is None else ("yes" if c["met"] else "**no**"))))
    L.append("")
    L.append("Definitions:")
    L.append("")
    for c in cks:
        L.append("- `%s` = %s." % (c["key"], c["definition"]))
    L.append("")
    L.append("![message rate and latency by message size](plot.png)")
    L.append("")
    L.append("## Every figure")
    sec = None
    for section, name, value, unit, extra in rows:
        if section != sec:
            L.append("")
            L.append("### " + section)
            L.append("")
            L.append("| what | value | unit | more |")
            L.append("| --- | --- | --- | --- |")
            sec = section
        L.append("| %s | %s | %s | %s |" % tuple(cell(x) for x in (name, fmt(value), unit, extra)))
    L.append("")
    L.append("## How it is measured")
    L.append("")
    L.append("- perftest: `ib_send_lat -R` / `ib_send_bw -R` server on LAB_B, client from LAB_A, "
             "under `timeout`, retried once; ib_send_lat reports half a round trip (t_typical).")
    L.append("- raw rpma: `bench-rpma` (tools/benchsrc/rpma-floor.c, the project's rpma): "
             "RPMA_F_COMPLETION_ALWAYS sends, 16 outstanding for the rate, one at a time for "
             "send-and-complete latency (rpma_send to its completion, a full round trip); both "
             "sides sleep on the completion channel as rpmafs and rpma-recv do.")
    L.append("- writer: `bench-writer` (tools/benchsrc/writer.c): opens the spool file once, "
             "N write(2)s of S bytes after a warm-up; rates include a final fsync (every message "
             "confirmed); latency times each write(2), sync writes with O_DSYNC.")
    L.append("- dd: `dd if=/dev/zero of=SPOOL bs=1020K count=N conv=fsync`, timed outside dd.")
    L.append("- daemon CPU: utime+stime from /proc/PID/stat around a run, divided by the "
             "messages the status file says were posted in it (warm-up included in both).")
    L.append("- RNR NAKs and retransmits: rxe0's hw_counters rcvd_rnr_err and "
             "completer_retry_err over the run (the receiver out of receives; packets lost).")
    L.append("- peers: `tools/benchsrc/peers.sh N`: one mount of N rdma peers (max_message "
             "4 KiB, 16 slots), all on one `rpma-recv --max-message 4KiB --slots 256`; "
             "connected is the time from starting rpmafs to its log's N-th \"connected to\" "
             "line (every .status then checked); RSS, descriptors (/proc/PID/fd) and threads "
             "once all are up; then one message written to every peer, all N counted at "
             "rpma-recv.")
    L.append("- fan-in: `fan-in` (tests/lab/recv/fan-in.c, built against Debian's librpma) "
             "opens K connections from one process to one `rpma-recv` (defaults: 64 KiB "
             "messages; 256 shared slots, or 64 per connection with --no-srq), then every "
             "connection sends its messages of 64 B at once, 4 in flight each; the rate is "
             "all messages over the time to the last completion; RSS is rpma-recv's VmRSS "
             "after the last completion.")
    if notes:
        L.append("")
        L.append("## Notes")
        L.append("")
        for k in sorted(notes):
            L.append("- `%s`: %s" % (k, notes[k]))
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_json(path, fig, notes, meta, cks):
    doc = {}
    for c in cks:
        doc[c["key"]] = c["value"]
    doc["ratios"] = {c["key"]: c["value"] for c in cks}
    doc["targets"] = {c["key"]: {"value": c["value"], "target": c["target"], "met": c["met"],
                                 "figure": c["figure"], "floor": c["floor"],
                                 "definition": c["definition"],
                                 **({"reason": c["reason"]} if "reason" in c else {})}
                      for c in cks}
    doc["rounds"] = {c["key"]: c.get("rounds", []) for c in cks}
    doc["figures"] = fig
    doc["fan_in"] = fan_in(fig)
    for e in peers(fig):  # peers_1000_connect_s, peers_1000_rss_mib, ...
        for f, v in e.items():
            if f != "peers":
                doc["peers_%d_%s" % (e["peers"], f)] = v
    doc["notes"] = notes
    doc["meta"] = meta
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def write_plot(path, fig):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = fig.get

    def series(fmt_key, sizes):
        xs, ys = [], []
        for s in sizes:
            v = g(fmt_key % s)
            if v is not None:
                xs.append(s)
                ys.append(v)
        return xs, ys

    wire = (64, 4096, MIB)
    writes = (64, 4096, MAX)
    fig_, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    for key, sizes, label, style in (
            ("perftest.bw.%d.msg_s", wire, "ib_send_bw -R (perftest)", "k--o"),
            ("raw.rate.%d.msg_s", wire, "raw rpma_send, window 16", "C0--s"),
            ("null.rate.%d.msg_s", writes, "null peer (FUSE alone)", "C2-.^"),
            ("rpmafs.async.%d.msg_s", writes, "rpmafs async writes", "C3-D")):
        xs, ys = series(key, sizes)
        if xs:
            ax1.plot(xs, ys, style, label=label)
    ax1.set_title("Message rate, one sender")
    ax1.set_ylabel("messages / s")

    for key, sizes, label, style in (
            ("perftest.lat.%d.typical_us", wire, "ib_send_lat -R (half round trip)", "k--o"),
            ("raw.lat.%d.median_us", wire, "raw rpma send-and-complete", "C0--s"),
            ("null.lat.%d.median_us", writes, "null peer write(2)", "C2-.^"),
            ("rpmafs.sync.%d.median_us", writes, "rpmafs sync write(2)", "C3-D")):
        xs, ys = series(key, sizes)
        if xs:
            ax2.plot(xs, ys, style, label=label)
    # the latency floor of a sync write: FUSE alone + a send and its completion
    xs, ys = [], []
    for w, s in zip(writes, wire):
        a, b = g("null.lat.%d.median_us" % w), g("raw.lat.%d.median_us" % s)
        if a is not None and b is not None:
            xs.append(w)
            ys.append(a + b)
    if xs:
        ax2.plot(xs, ys, "C1:", label="floor: null write + raw send-and-complete")
    ax2.set_title("Latency, median")
    ax2.set_ylabel("µs")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([64, 4096, MIB])
        ax.set_xticklabels(["64 B", "4 KiB", "1 MiB\n(rpmafs: 1020 KiB)"])
        ax.set_xlabel("message size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig_.suptitle("rpmafs against its floors, one run on Soft-RoCE (rdma_rxe) in the lab")
    fig_.tight_layout()
    fig_.savefig(path, dpi=110)
    plt.close(fig_)


def main():
    if len(sys.argv) != 3:
        print("usage: report.py FIGURES OUTDIR", file=sys.stderr)
        return 2
    fig, notes, meta = load(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    cks = checks(fig, notes)
    try:
        write_plot(os.path.join(out, "plot.png"), fig)
    except Exception as e:  # the table matters more than the picture
        notes["plot"] = "not drawn: %s" % e
        print("report.py: plot.png not drawn: %s" % e, file=sys.stderr)
    write_json(os.path.join(out, "results.json"), fig, notes, meta, cks)
    write_md(os.path.join(out, "results.md"), fig, notes, meta, cks, figure_tables(fig))
    for c in cks:
        print("%-33s %-10s target %-9s %s" % (
            c["key"], fmt(c["value"]), c["target"],
            "reported" if c["target"] == "report" and c["value"] is not None else
            "missing" if c["met"] is None else ("met" if c["met"] else "NOT met")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
