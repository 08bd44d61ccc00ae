#!/bin/bash
# An idle rpma-recv uses no CPU: with a connection open and nothing sent for
# 3 s, its utime + stime (/proc/PID/stat) grows by at most one tick.
. "$(dirname "$0")/lib.sh"

start_recv --format len --output "$WORK/out.len"
send_bg --count 5 --sizes 64 --hold-ms 8000 2>"$WORK/send.log"
spid=$SEND_PID
wait_for "$WORK/send.log" "5 of 5 messages completed" || fail "the sender did not finish"
wait_for "$WORK/recv.log" "accepted" || fail "no connection"
# idle from the moment all 5 records (4 + 64 bytes each) are written out
wait_size "$WORK/out.len" 340 || fail "the 5 records were not written out"
t0=$(cpu_ticks "$RECV_PID")
sleep 3
t1=$(cpu_ticks "$RECV_PID")
grep -q "closed" "$WORK/recv.log" && fail "the connection closed early"
echo "idle: rpma-recv used $((t1 - t0)) ticks in 3 s with a connection open (total $t1)"
[ $((t1 - t0)) -le 1 ] || fail "idle rpma-recv used $((t1 - t0)) clock ticks in 3 s"
wait "$spid" || fail "the sender failed"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --expect 0:5:64 || fail "check-seq"
echo "PASS: idle CPU stays at 0"
