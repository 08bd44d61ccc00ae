#!/bin/bash
# SIGTERM while connected: exit 0 after writing every message that arrived.
# --count N: exit 0 after writing exactly N.
. "$(dirname "$0")/lib.sh"

start_recv --format lines --output "$WORK/out.lines"
send_bg --count 100 --sizes 16,200 --hold-ms 30000 2>"$WORK/send.log"
spid=$SEND_PID
wait_for "$WORK/send.log" "100 of 100 messages completed" || fail "the sender did not finish"
t0=$(now)
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID"
rc=$?
t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "SIGTERM to exit: %.2f s\n", b - a }'
[ $rc -eq 0 ] || fail "SIGTERM while connected: exit $rc, want 0"
grep -q "SIGTERM: stopping" "$WORK/recv.log" || fail "no stopping line"
grep -q "1 connections, 100 messages" "$WORK/recv.log" || fail "summary after SIGTERM"
"$CHECK_SEQ" --format lines --input "$WORK/out.lines" --expect 0:100:16,200 ||
	fail "check-seq after SIGTERM"
kill "$spid" 2>/dev/null

# SIGINT with nothing connected
start_recv --format raw
kill -INT "$RECV_PID"
wait_exit "$RECV_PID" || fail "SIGINT while idle: not exit 0"

start_recv --format len --output "$WORK/out.len" --count 200 --slots 64
t0=$(now)
send --count 5000 --sizes 64 --window 8 2>>"$WORK/send.log"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 4 ] || fail "sender against --count: exit $rc"
wait_exit "$RECV_PID"
rc=$?
t1=$(now)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "--count 200 of 5000: %.2f s to exit\n", b - a }'
[ $rc -eq 0 ] || fail "--count 200: exit $rc, want 0"
grep -q "1 connections, 200 messages" "$WORK/recv.log" || fail "summary after --count"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --expect 0:200:64 ||
	fail "--count 200: not exactly 200 messages"
echo "PASS: SIGTERM and --count exit 0 with everything written"
