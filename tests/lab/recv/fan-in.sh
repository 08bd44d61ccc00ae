#!/bin/bash
# Fan-in: FANIN_CONNS (default 200; 1000 in the lab-slow suite) plain
# librpma senders connected to one rpma-recv at once, in four processes
# that join in stages of 1, 10, 100 and FANIN_CONNS connections. At each
# stage rpma-recv's resident memory (VmRSS) and descriptors are read from
# /proc: memory may grow by at most 32 KiB per connection beyond the first
# (the shared receive queue is the same for all). Then every connection
# sends FANIN_MSGS messages at once, and each one must arrive exactly once,
# in its connection's order, every byte as sent (check-seq).
. "$(dirname "$0")/lib.sh"

N=${FANIN_CONNS:-200}
M=${FANIN_MSGS:-10}
SIZES=16,100,1000,4K
LIMIT_KIB=32
stages=(1 10 100 "$N")
[ "$N" -gt 100 ] || fail "FANIN_CONNS must be more than 100"
# two descriptors per connection on both sides
ulimit -n $((4 * N + 1024)) || fail "cannot raise the descriptor limit"

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
fds() { local f=(/proc/"$1"/fd/*); echo ${#f[@]}; }

start_recv --format len --output "$WORK/out.len" --max-connections $((N + 10))
rss0=$(rss_kib "$RECV_PID") fds0=$(fds "$RECV_PID")
echo "fan-in: rpma-recv listening: RSS $rss0 KiB, $fds0 descriptors"

# stage s adds stages[s] - stages[s-1] connections, ids from stages[s-1]
declare -a ctl fan_pids rss nfd
prev=0
for s in 0 1 2 3; do
	k=$((stages[s] - prev))
	mkfifo "$WORK/ctl.$s"
	"$FAN_IN" --connect "$LAB_A:$PORT" --conns "$k" --base-id "$prev" --count "$M" \
		--sizes "$SIZES" --window 4 --wait-stdin <"$WORK/ctl.$s" 2>"$WORK/fan.$s.log" &
	fan_pids[s]=$!
	PIDS+=("${fan_pids[s]}")
	exec {fd}>"$WORK/ctl.$s"
	ctl[s]=$fd
	wait_for "$WORK/fan.$s.log" "fan-in: $k connected" $((60 + k / 5)) ||
		fail "stage $s: $k connections not established"
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -c ' accepted (' "$WORK/recv.log")" -ge "${stages[s]}" ] && break
		sleep 0.1
	done
	[ "$(grep -c ' accepted (' "$WORK/recv.log")" -eq "${stages[s]}" ] ||
		fail "stage $s: rpma-recv did not log ${stages[s]} accepted connections"
	rss[s]=$(rss_kib "$RECV_PID")
	nfd[s]=$(fds "$RECV_PID")
	echo "fan-in: $(sed -n 's/^fan-in: \(.*connected in.*\)/\1/p' "$WORK/fan.$s.log"):" \
		"${stages[s]} connections open, RSS ${rss[s]} KiB, ${nfd[s]} descriptors"
	prev=${stages[s]}
done

# the figures: per connection beyond the first
for s in 1 2 3; do
	per=$(awk -v a="${rss[0]}" -v b="${rss[s]}" -v n=$((stages[s] - 1)) \
		'BEGIN { printf "%.2f", (b - a) / n }')
	echo "fan-in: ${stages[s]} connections: $per KiB per connection beyond the first"
	awk -v p="$per" -v l=$LIMIT_KIB 'BEGIN { exit !(p <= l) }' ||
		fail "RSS grew by $per KiB per connection (at most $LIMIT_KIB)"
	[ $((nfd[s] - nfd[0])) -le $((2 * (stages[s] - 1))) ] ||
		fail "${stages[s]} connections hold $((nfd[s] - nfd[0])) more descriptors than one"
done

# everyone sends at once
t0=$(now)
for s in 0 1 2 3; do echo go >&"${ctl[s]}"; done
for s in 0 1 2 3; do
	wait_for "$WORK/fan.$s.log" "fan-in: done|FAILED" 300 || fail "stage $s: sending did not end"
	grep -q "fan-in: done" "$WORK/fan.$s.log" || fail "stage $s: sending failed"
done
t1=$(now)
rss_sent=$(rss_kib "$RECV_PID")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$RECV_PID/status")
awk -v a="$t0" -v b="$t1" -v n=$((N * M)) -v c="$N" -v r="$rss_sent" -v h="$hwm" 'BEGIN {
	printf "fan-in: %d connections sent %d messages in %.2f s (%.0f msg/s); RSS %d KiB, peak %d KiB\n",
		c, n, b - a, n / (b - a), r, h }'
per=$(awk -v a="${rss[0]}" -v b="$hwm" -v n=$((N - 1)) 'BEGIN { printf "%.2f", (b - a) / n }')
awk -v p="$per" -v l=$LIMIT_KIB 'BEGIN { exit !(p <= l) }' ||
	fail "peak RSS while receiving: $per KiB per connection beyond the first (at most $LIMIT_KIB)"

# they disconnect; rpma-recv stays, with all of its memory and descriptors back
for s in 0 1 2 3; do echo bye >&"${ctl[s]}"; done
for s in 0 1 2 3; do
	wait "${fan_pids[s]}" || fail "stage $s: fan-in failed"
done
for ((i = 0; i < 600; i++)); do
	[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -ge "$N" ] && break
	sleep 0.1
done
[ "$(grep -c 'closed by peer' "$WORK/recv.log")" -eq "$N" ] ||
	fail "rpma-recv logged $(grep -c 'closed by peer' "$WORK/recv.log") of $N connections closed"
echo "fan-in: all closed: RSS $(rss_kib "$RECV_PID") KiB, $(fds "$RECV_PID") descriptors (listening: $fds0)"
[ "$(fds "$RECV_PID")" -eq "$fds0" ] || fail "descriptors left behind by closed connections"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" 30 || fail "rpma-recv did not exit 0"
grep -q "$N connections, $((N * M)) messages" "$WORK/recv.log" || fail "summary line wrong"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --senders "$N" --count "$M" --sizes "$SIZES" ||
	fail "check-seq"
echo "PASS: $N concurrent plain librpma senders, every message once and in order;" \
	"RSS ${rss[0]} / ${rss[1]} / ${rss[2]} / ${rss[3]} KiB at ${stages[*]} connections"
