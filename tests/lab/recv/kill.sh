#!/bin/bash
# A sender killed (SIGKILL) mid-stream does not disturb the others: they all
# complete, rpma-recv keeps running, logs the lost connection, and takes
# new connections afterwards.
. "$(dirname "$0")/lib.sh"

N=20000
start_recv --format len --output "$WORK/out.len" --max-message 4K --slots 256 --verbose
pids=()
for id in 0 1 2 3; do
	send_bg --id "$id" --count "$N" --sizes 64,1000 --quiet 2>>"$WORK/send.log"
	pids+=("$SEND_PID")
done
send_bg --id 4 --count 100000000 --sizes 64 --interval-us 1000 2>/dev/null
victim=$SEND_PID
wait_for "$WORK/recv.log" "connection 5 .*accepted" || fail "not all senders connected"
# mid-stream: the kill comes once records are flowing (100 kB written out)
wait_size "$WORK/out.len" 100000 || fail "no traffic before the kill"
kill -0 "${pids[0]}" 2>/dev/null || echo "note: sender 0 finished before the kill"
kill -9 "$victim"
wait_for "$WORK/recv.log" "(closed by peer|lost).*messages" || fail "the killed sender's end not logged"
for id in 0 1 2 3; do
	wait "${pids[id]}" || fail "sender $id failed after another sender was killed"
done
kill -0 "$RECV_PID" 2>/dev/null || fail "rpma-recv died"

send --id 5 --count 100 --sizes 64 --quiet || fail "a new sender after the kill failed"
kill -0 "$RECV_PID" 2>/dev/null || fail "rpma-recv died"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"

[ "$(grep -Ec "(closed by peer|lost).*messages" "$WORK/recv.log")" -eq 6 ] ||
	fail "want 6 connections ended in the log"
grep -E "(closed by peer|lost).*messages" "$WORK/recv.log"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --senders 6 --count "$N" \
	--count-of 5:100 --partial 4 || fail "check-seq"
echo "PASS: a killed sender disturbs no one"
