#!/bin/bash
# Output errors: a closed pipe (EPIPE) ends rpma-recv with exit 1 after
# closing everything; a full disk (ENOSPC) closes only the connection whose
# message did not fit, keeps every record written before whole, and the
# others go on.
. "$(dirname "$0")/lib.sh"

# EPIPE: the reader takes one line and goes away
PORT=$((PORT + 1))
("$RPMA_RECV" --listen "$LAB_A:$PORT" --format lines 2>"$WORK/recv.log"
	echo $? >"$WORK/recv.rc") | head -n 1 >"$WORK/first" &
wait_for "$WORK/recv.log" "listening on" || fail "rpma-recv did not start"
send --count 20000 --sizes 64 --quiet 2>>"$WORK/send.log"
echo "sender against a closed pipe: exit $?"
for ((i = 0; i < SAFETY_S * 10; i++)); do
	[ -s "$WORK/recv.rc" ] && break
	sleep 0.1
done
[ "$(cat "$WORK/recv.rc" 2>/dev/null)" = 1 ] || fail "EPIPE: rpma-recv exit '$(cat "$WORK/recv.rc" 2>/dev/null)', want 1"
grep -q "connection 1 .*standard output: Broken pipe; the output is gone" \
	"$WORK/recv.log" || fail "EPIPE not reported with the connection"
grep -E "rpma-recv: 1 connections, [0-9]+ messages" "$WORK/recv.log" || fail "no summary"
[ "$(wc -l <"$WORK/first")" -eq 1 ] || fail "the reader got no line"

# ENOSPC: a 256 KiB tmpfs holds three records of 64 KiB, not four
mkdir "$WORK/small"
if ! mount -t tmpfs -o size=256k tmpfs "$WORK/small" 2>/dev/null; then
	echo "skip: cannot mount a small tmpfs (not root?)"
	exit 77
fi
trap 'umount "$WORK/small" 2>/dev/null; cleanup' EXIT
start_recv --format len --output "$WORK/small/out.len" --max-message 64K --slots 4
send --id 0 --count 10 --sizes 64K 2>>"$WORK/send.log"
echo "sender filling the disk: exit $?"
wait_for "$WORK/recv.log" "connection 1 .*No space left on device; closing the connection" ||
	fail "ENOSPC not reported with the connection"
wait_for "$WORK/recv.log" "connection 1 .*closed \(output error\)" ||
	fail "the connection was not closed"
send --id 1 --count 10 --sizes 16 2>>"$WORK/send.log" || fail "another sender failed"
kill -0 "$RECV_PID" || fail "rpma-recv died"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0 after ENOSPC on one connection"
size=$(stat -c %s "$WORK/small/out.len")
echo "full disk: output holds $size bytes"
"$CHECK_SEQ" --format len --input "$WORK/small/out.len" --senders 2 --count 10 \
	--partial 0 || fail "records after ENOSPC are not whole"
echo "PASS: EPIPE and ENOSPC handled"
