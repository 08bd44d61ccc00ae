#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# inbox.sh -- the inbox's figures (docs/design.md §13), inside the lab, in one run
#
#	inbox.sh quick|full FIGURES LOGDIR
#
# 1. receive rate: one mount A writes N messages of 64 B with bench-writer,
#    once to rpma-recv --format lines --output /dev/null --count N, once to
#    mount B's inbox (inbox_format lines) drained by `head -c` of exactly N
#    records; each time from the writer's start to the receiver's end.
#    Keys: inbox.rate.recv_msg_s, inbox.rate.inbox_msg_s, inbox_rate_over_recv.
# 1b. work per received message, in paired rounds (1 quick, 3 full): the
#    same writer from A, CN messages to a second rpma-recv --format lines
#    to standard output, /dev/null (no --count: it stays up; not --output
#    /dev/null, which the first one locks) until A's status says all
#    are acknowledged, then N to B's inbox drained by `head -c`; the CPU
#    time (utime + stime, all threads) of that rpma-recv and of B's daemon
#    over their messages. Keys round.R.inbox.cpu_us_per_msg and
#    round.R.inbox.recv_cpu_us_per_msg. In the same round, the FUSE floor
#    of a read: `head -c` of CN records of 65 bytes from bench-noop-fs's `r`
#    (tools/benchsrc/noop-fs.c: one 65-byte line per READ, at once, as the
#    inbox gives one record per read(2)), its CPU time (run time of its
#    threads) / CN: round.R.inbox.noop_read_cpu_us_per_msg; its READs per
#    record over all rounds (counted by it, printed at its unmount):
#    inbox.noop.reads_per_record (report.py: inbox_cpu_per_msg_over_floor).
#    Then the same with COUNT messages each under strace -f -c, not timed:
#    round.R.count.syscalls.inbox and round.R.count.syscalls.inbox_recv
#    (report.py: inbox_*_over_recv).
# 2. ping-pong: A's shell loop `echo p > pp; read -r r < inbox`, B's
#    `while read -r m; do echo "$m" > a; done < inbox` (close = wait: each
#    echo returns once the other side read it), in paired rounds (1 quick,
#    3 full): each round ib_send_lat -R -e 64 B on the same link, then PP
#    round trips, then PP round trips of the same two loops over two FIFOs
#    in a tmpfs directory of the VM (B's: `... done <> ab`, read-write so
#    that it never sees EOF): the shell's own cost of the exchange, without
#    FUSE or a network. Each loop is timed by its own shell ($EPOCHREALTIME).
#    Keys per round inbox.pingpong.R.lat_us (t_typical, half a round trip),
#    inbox.pingpong.R.rtt_us and inbox.pingpong.R.fifo_rtt_us;
#    inbox.pingpong.rtt_us, inbox.pingpong.fifo_rtt_us and
#    inbox.pingpong.lat_us, the rounds' medians; inbox_pingpong_over_send_lat,
#    the median of the rounds' rtt / (2 x lat); inbox_pingpong_over_shell_fifo,
#    the median of the rounds' rtt / fifo_rtt.
# Every step under `timeout`; a figure that cannot be had is a note.
set -u
mode=$1 fig=$2 logs=$3
mkdir -p "$logs"
work=$(mktemp -d /tmp/rpmafs-inbox-bench.XXXXXX)
# CR rounds of CN messages for the CPU time, of COUNT for the system calls
if [ "$mode" = quick ]; then N=2000 PP=50 PPR=1 CR=1 CN=1000 COUNT=500; else N=20000 PP=500 PPR=3 CR=3 CN=10000 COUNT=2000; fi
PPR=${INBOX_PP_ROUNDS:-$PPR} # the ping-pong rounds, for a run of this script alone
pa=$((7800 + RANDOM % 100)) pb=$((7900 + RANDOM % 100)) pr=$((8000 + RANDOM % 100))
pr2=$((8100 + RANDOM % 100))

put() { printf '%s %s\n' "$1" "$2" >>"$fig"; }
note() { printf 'note %s %s\n' "$1" "$2" >>"$fig"; printf 'bench: %s: %s\n' "$1" "$2" >&2; }
now() { date +%s.%N; }
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" || :; }
# strace_on/off, strace_calls, per, ticks_of, cpu_us, us_per
. "$(dirname "$0")/count.sh"
# until FILE has TEXT, at most 60 s
wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -qs "$2" "$1" && return 0
		nap 0.1
	done
	return 1
}
# send_lat: ib_send_lat -R -e -s 64 (as inside.sh's perftest), its t_typical in µs, or nothing
send_lat() {
	local port=$((18500 + RANDOM % 2000)) log=$logs/inbox-send-lat srv i
	stdbuf -oL timeout -k 5 150 ib_send_lat -R -e -s 64 -n 300 -p "$port" >"$log.server" 2>&1 &
	srv=$!
	wait_for "$log.server" "Waiting for client to connect" || { kill -TERM $srv 2>/dev/null; return; }
	nap 0.3
	timeout -k 5 120 ib_send_lat -R -e -s 64 -n 300 -p "$port" "$LAB_B" >"$log.client" 2>&1
	for ((i = 0; i < 50; i++)); do kill -0 "$srv" 2>/dev/null || break; nap 0.1; done
	kill -TERM $srv 2>/dev/null
	wait $srv 2>/dev/null
	awk '$1 == 64 && NF >= 5 { print $5 }' "$log.client"
}
pids=()
cleanup() {
	for m in "$work/a" "$work/b" "$work/noop"; do fusermount3 -u "$m" 2>/dev/null; done
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/a.ini" <<INI
[rpmafs]
listen = $LAB_A:$pa
log_level = notice
# the rate runs measure arrival, not close(2): close = return
[b]
address = $LAB_B
port = $pb
close = return
[r]
address = $LAB_B
port = $pr
close = return
[pp]
address = $LAB_B
port = $pb
# the CPU rounds' rpma-recv (receiver-confirmed, as the inbox)
[r2]
address = $LAB_B
port = $pr2
close = return
INI
cat >"$work/b.ini" <<INI
[rpmafs]
listen = $LAB_B:$pb
log_level = notice
[a]
address = $LAB_A
port = $pa
INI
mkdir "$work/a" "$work/b" "$work/noop"
rpma-recv --listen "$LAB_B:$pr" --format lines --output /dev/null --count "$N" \
	2>"$logs/inbox-recv.log" &
recv=$!
pids+=($recv)
rpma-recv --listen "$LAB_B:$pr2" --format lines >/dev/null 2>"$logs/inbox-recv2.log" &
recv2=$!
pids+=($recv2)
rpmafs -f --config "$work/b.ini" "$work/b" 2>"$logs/inbox-b.log" &
bfs=$!
pids+=($bfs)
rpmafs -f --config "$work/a.ini" "$work/a" 2>"$logs/inbox-a.log" &
pids+=($!)
for s in a/b a/r a/pp b/a; do
	wait_for "$work/$s.status" "state: connected" || { note inbox "$s never connected"; exit 0; }
done
# the CPU rounds' receiver: without it, only they are missing
cr_ok=1
wait_for "$work/a/r2.status" "state: connected" || { note inbox.cpu "missing: a/r2 never connected (see inbox-recv2.log)"; cr_ok=0; CR=0; }
# the FUSE floor of the inbox's reads (1b): without it, only its figures are missing
bench-noop-fs -f "$work/noop" 2>"$logs/inbox-noop-fs.log" &
noopfs=$!
pids+=($noopfs)
noop_ok=1 noop_records=0
wait_for "$logs/inbox-noop-fs.log" "serving" || { note inbox.noop "missing: bench-noop-fs did not start (see inbox-noop-fs.log)"; noop_ok=0; }

# 1. the receive rate, rpma-recv first
t0=$(now)
timeout 300 bench-writer "$work/a/r" 64 "$N" >/dev/null || note inbox "writer to rpma-recv failed"
# until rpma-recv --count has ended (300 s at most; not tail --pid, which
# looks once a second: up to 1 s more on a run of about one)
for ((i = 0; i < 30000; i++)); do kill -0 $recv 2>/dev/null || break; nap 0.01; done
t1=$(now)
recv_rate=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')
put inbox.rate.recv_msg_s "$recv_rate"
(timeout 300 head -c $((65 * N)) "$work/b/inbox" >/dev/null; now >"$work/inbox.end") &
reader=$!
until grep -qs "^readers: 1" "$work/b/inbox.status"; do nap 0.05; done
t0=$(now)
timeout 300 bench-writer "$work/a/b" 64 "$N" >/dev/null || note inbox "writer to the inbox failed"
wait "$reader"
if [ -s "$work/inbox.end" ] && grep -qs "^read: $N\$" "$work/b/inbox.status"; then
	inbox_rate=$(awk -v n="$N" -v a="$t0" -v b="$(cat "$work/inbox.end")" 'BEGIN { printf "%.1f", n / (b - a) }')
	put inbox.rate.inbox_msg_s "$inbox_rate"
	put inbox_rate_over_recv "$(awk -v a="$inbox_rate" -v b="$recv_rate" 'BEGIN { printf "%.3f", a / b }')"
else
	note inbox "the inbox did not read $N messages: $(grep -E '^(received|read|waiting):' "$work/b/inbox.status" | tr '\n' ' ')"
fi

# 1b. work per received message: CPU time, then system calls, in rounds
# stv FILE KEY: a figure of a status file
stv() { sed -n "s/^$2: //p" "$1" 2>/dev/null; }
# to_recv M: M messages from A to the rpma-recv, until A has all acknowledged
to_recv() {
	local a0 i
	a0=$(stv "$work/a/r2.status" acked)
	timeout 300 bench-writer "$work/a/r2" 64 "$1" >/dev/null 2>>"$logs/inbox-writer.log" || return 1
	for ((i = 0; i < 3000; i++)); do
		[ $(($(stv "$work/a/r2.status" acked) - a0)) -ge "$1" ] && return 0
		nap 0.1
	done
	return 1
}
# to_inbox M: M messages from A to B's inbox, until a head -c has read them all
to_inbox() {
	local r0 rd
	r0=$(stv "$work/b/inbox.status" read)
	timeout 300 head -c $((65 * $1)) "$work/b/inbox" >/dev/null &
	rd=$!
	until grep -qs "^readers: 1" "$work/b/inbox.status" || ! kill -0 $rd 2>/dev/null; do nap 0.05; done
	timeout 300 bench-writer "$work/a/b" 64 "$1" >/dev/null 2>>"$logs/inbox-writer.log" || { kill $rd 2>/dev/null; wait $rd; return 1; }
	wait $rd || return 1
	[ $(($(stv "$work/b/inbox.status" read) - r0)) = "$1" ]
}
hz=$(getconf CLK_TCK)
for ((r = 1; r <= CR; r++)); do
	u0=$(cpu_us $recv2)
	if to_recv "$CN"; then
		put "round.$r.inbox.recv_cpu_us_per_msg" "$(us_per "$u0" "$(cpu_us $recv2)" "$CN")"
	else
		note "round.$r.inbox.recv_cpu" "missing: $CN messages to rpma-recv were not all acknowledged"
	fi
	c0=$(ticks_of /proc/$bfs/stat)
	if to_inbox "$CN"; then
		put "round.$r.inbox.cpu_us_per_msg" "$(awk -v t=$(($(ticks_of /proc/$bfs/stat) - c0)) -v hz="$hz" -v m="$CN" 'BEGIN { printf "%.2f", t / hz / m * 1e6 }')"
	else
		note "round.$r.inbox.cpu" "missing: the inbox did not read $CN messages"
	fi
	# the FUSE floor of those reads: CN records from bench-noop-fs's r
	[ $noop_ok = 1 ] || continue
	u0=$(cpu_us $noopfs)
	if timeout 300 head -c $((65 * CN)) "$work/noop/r" >/dev/null 2>>"$logs/inbox-noop-fs.log"; then
		put "round.$r.inbox.noop_read_cpu_us_per_msg" "$(us_per "$u0" "$(cpu_us $noopfs)" "$CN")"
		noop_records=$((noop_records + CN))
	else
		note "round.$r.inbox.noop_read_cpu" "missing: head -c of $CN records from bench-noop-fs failed (see inbox-noop-fs.log)"
	fi
done
# its READs per record, as it counted them (printed at its unmount)
if [ $noop_records -gt 0 ]; then
	fusermount3 -u "$work/noop" 2>/dev/null
	for ((i = 0; i < 300; i++)); do kill -0 $noopfs 2>/dev/null || break; nap 0.1; done
	reads=$(sed -n 's/^bench-noop-fs: requests read //p' "$logs/inbox-noop-fs.log")
	if [ -n "$reads" ]; then
		put inbox.noop.reads_per_record "$(per "$reads" $noop_records)"
	else
		note inbox.noop "missing: bench-noop-fs did not print its READ count (see inbox-noop-fs.log)"
	fi
fi
if [ $cr_ok = 0 ]; then
	:
elif command -v strace >/dev/null; then
	for ((r = 1; r <= CR; r++)); do
		for pass in inbox_recv:$recv2:to_recv inbox:$bfs:to_inbox; do
			IFS=: read -r name pid fn <<<"$pass"
			log=$logs/strace-$name-$r
			if ! strace_on "$pid" "$log"; then
				note "count.syscalls.$name" "missing: strace did not attach (see ${log##*/}.err)"
				strace_off "$spid"
				continue
			fi
			"$fn" "$COUNT"
			ok=$?
			strace_off "$spid"
			if [ $ok = 0 ]; then
				put "round.$r.count.syscalls.$name" "$(per "$(strace_calls "$log.c")" "$COUNT")"
			else
				note "count.syscalls.$name" "missing: $COUNT messages did not all arrive under strace"
			fi
		done
	done
	put inbox.count.messages "$COUNT"
	put inbox.cpu.messages "$CN"
else
	note inbox.count "missing: strace is not installed"
fi

# 2. ping-pong between the two mounts through their inboxes, in paired
# rounds; in each, the same two shell loops over two FIFOs (the floor)
(cd "$work/b" && while read -r m; do echo "$m" >a; done <inbox) &
answer=$!
pids+=($answer)
# B's loop on the FIFOs: ab opened read-write, so that A's writer closing
# it is no EOF (an open for reading alone would also wait for a writer)
mkdir "$work/fifo" && mkfifo "$work/fifo/ab" "$work/fifo/ba"
(cd "$work/fifo" && while read -r m; do echo "$m" >ba; done <>ab) &
fifo_b=$!
pids+=($fifo_b)
fifo_ok=1
# pingpong DIR TO FROM: A's loop in DIR, PP round trips of `echo p$i > TO;
# read -r r < FROM`, timed by the loop's own shell ($EPOCHREALTIME: no fork
# and no shell start inside the span); the mean round trip in µs
pingpong() {
	local span
	span=$(cd "$1" && timeout 300 bash -c 't0=$EPOCHREALTIME
		for ((i = 0; i < $1; i++)); do echo p$i > "$2"; read -r r < "$3"; [ "$r" = p$i ] || exit 1; done
		echo "$t0 $EPOCHREALTIME"' pingpong "$PP" "$2" "$3") || return 1
	awk -v n="$PP" '{ gsub(",", ".") } NF == 2 { printf "%.1f", ($2 - $1) / n * 1e6 }' <<<"$span"
}
rtts=() lats=() ratios=() frtts=() fratios=()
for ((r = 1; r <= PPR; r++)); do
	lat=$(send_lat)
	[ -n "$lat" ] && put "inbox.pingpong.$r.lat_us" "$lat" || note inbox "round $r: ib_send_lat failed"
	rtt=$(pingpong "$work/a" pp inbox)
	if [ -z "$rtt" ]; then
		note inbox "round $r: the ping-pong failed or took over 300 s"
		break
	fi
	put "inbox.pingpong.$r.rtt_us" "$rtt"
	rtts+=("$rtt")
	if [ -n "$lat" ]; then
		lats+=("$lat")
		ratios+=("$(awk -v r="$rtt" -v l="$lat" 'BEGIN { printf "%.2f", r / (2 * l) }')")
	fi
	[ $fifo_ok = 1 ] || continue
	frtt=$(pingpong "$work/fifo" ab ba)
	if [ -z "$frtt" ]; then
		# B's loop may be out of step now: no more FIFO rounds
		note inbox.pingpong.fifo "round $r: the ping-pong over two FIFOs failed or took over 300 s"
		fifo_ok=0
		continue
	fi
	put "inbox.pingpong.$r.fifo_rtt_us" "$frtt"
	frtts+=("$frtt")
	fratio=$(awk -v r="$rtt" -v f="$frtt" 'BEGIN { if (f > 0) printf "%.2f", r / f }')
	[ -n "$fratio" ] && fratios+=("$fratio")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
[ ${#rtts[@]} -gt 0 ] && put inbox.pingpong.rtt_us "$(median "${rtts[@]}")"
[ ${#lats[@]} -gt 0 ] && put inbox.pingpong.lat_us "$(median "${lats[@]}")"
[ ${#ratios[@]} -gt 0 ] && put inbox_pingpong_over_send_lat "$(median "${ratios[@]}")"
[ ${#frtts[@]} -gt 0 ] && put inbox.pingpong.fifo_rtt_us "$(median "${frtts[@]}")"
[ ${#fratios[@]} -gt 0 ] && put inbox_pingpong_over_shell_fifo "$(median "${fratios[@]}")"
kill -TERM "$answer" "$fifo_b" 2>/dev/null
exit 0
