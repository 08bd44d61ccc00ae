#!/bin/bash
# The two queue modes side by side: the shared receive queue advertises
# credits 0 (no receive is anyone's), --no-srq advertises its per-connection
# slots; both take four concurrent plain librpma senders intact, and in both
# a sender killed mid-flood (SIGKILL) disturbs no one: rpma-recv writes
# what it got, stays, and serves the next sender.
. "$(dirname "$0")/lib.sh"

N=500
for mode in srq no-srq; do
	opt=()
	[ $mode = no-srq ] && opt=(--no-srq)
	start_recv --format len --output "$WORK/out.$mode" --slots 8 --max-message 4K "${opt[@]}"
	want=$([ $mode = srq ] && echo "8 slots shared by all connections" ||
		echo "8 slots per connection (--no-srq)")
	grep -q "$want" "$WORK/recv.log" || fail "$mode: not listening with $want"

	# a flooder, killed once it is under way
	mkfifo "$WORK/flood.$mode"
	"$FAN_IN" --connect "$LAB_A:$PORT" --conns 2 --base-id 4 --sizes 16,100,4K --window 8 --until-stdin \
		<"$WORK/flood.$mode" 2>"$WORK/flood-$mode.log" &
	victim=$!
	PIDS+=("$victim")
	exec {ctl}>"$WORK/flood.$mode"
	wait_for "$WORK/flood-$mode.log" "fan-in: 2 connected" 30 || fail "$mode: flooder not connected"

	"$FAN_IN" --connect "$LAB_A:$PORT" --conns 4 --count $N --sizes 16,100,4K --window 4 \
		2>"$WORK/fan-$mode.log" || fail "$mode: the four senders failed"
	credits=$(sed -n 's/.*advertises max_message 4096, credits \([0-9]*\)$/\1/p' "$WORK/fan-$mode.log")
	echo "$mode: credits advertised: $credits; $(grep 'completed in' "$WORK/fan-$mode.log")"
	[ "$credits" = "$([ $mode = srq ] && echo 0 || echo 8)" ] || fail "$mode: credits $credits"

	kill -9 "$victim"
	wait "$victim" 2>/dev/null
	exec {ctl}>&-
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -Ec '(closed by peer|lost)' "$WORK/recv.log")" -ge 6 ] && break
		sleep 0.1
	done
	[ "$(grep -Ec '(closed by peer|lost)' "$WORK/recv.log")" -eq 6 ] ||
		fail "$mode: want 6 connections ended in the log"
	"$FAN_IN" --connect "$LAB_A:$PORT" --conns 1 --base-id 6 --count 10 --sizes 16,100,4K 2>>"$WORK/fan-$mode.log" ||
		fail "$mode: a sender after the kill failed"
	kill -TERM "$RECV_PID"
	wait_exit "$RECV_PID" 10 || fail "$mode: rpma-recv did not exit 0"
	grep -q "receives were still posted" "$WORK/recv.log" &&
		fail "$mode: $(grep 'receives were still posted' "$WORK/recv.log")"
	"$CHECK_SEQ" --format len --input "$WORK/out.$mode" --senders 7 --count $N \
		--count-of 6:10 --count-of 4:1000000000 --count-of 5:1000000000 --partial 4 --partial 5 \
		--sizes 16,100,4K || fail "$mode: check-seq"
done
echo "PASS: shared queue and --no-srq: credits 0 and 8, intact, a killed flooder disturbs no one"
