#!/bin/bash
# 8 concurrent senders x 10,000 messages: each message arrives exactly once
# and in its sender's order (one event loop serves all connections).
. "$(dirname "$0")/lib.sh"

SENDERS=8
N=10000
SIZES=16,100,1000,4K

start_recv --format len --output "$WORK/out.len" --max-message 4K --slots 256 \
	--count $((SENDERS * N))
t0=$(now)
pids=()
for ((id = 0; id < SENDERS; id++)); do
	send_bg --id "$id" --count "$N" --sizes "$SIZES" --window 16 2>>"$WORK/send.log"
	pids+=("$SEND_PID")
done
for ((id = 0; id < SENDERS; id++)); do
	wait "${pids[id]}" || fail "sender $id failed"
done
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0 after $((SENDERS * N)) messages"
t1=$(now)
grep -q "$SENDERS connections, $((SENDERS * N)) messages" "$WORK/recv.log" ||
	fail "summary line wrong"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --senders "$SENDERS" --count "$N" \
	--sizes "$SIZES" || fail "check-seq"
awk -v a="$t0" -v b="$t1" -v n=$((SENDERS * N)) \
	'BEGIN { printf "concurrent: %d messages in %.2f s (%.0f msg/s)\n", n, b - a, n / (b - a) }'
sed -n 's/^send-seq/  send-seq/p' "$WORK/send.log"

# the same through lines and dir, smaller
for fmt in lines dir; do
	start_recv --format "$fmt" --output "$WORK/out.$fmt" --max-message 4K --slots 256 \
		--count 4000
	pids=()
	for id in 0 1 2 3; do
		send_bg --id "$id" --count 1000 --sizes "$SIZES" --quiet
		pids+=("$SEND_PID")
	done
	for id in 0 1 2 3; do
		wait "${pids[id]}" || fail "$fmt: sender $id failed"
	done
	wait_exit "$RECV_PID" || fail "$fmt: rpma-recv did not exit 0"
	"$CHECK_SEQ" --format "$fmt" --input "$WORK/out.$fmt" --senders 4 --count 1000 \
		--sizes "$SIZES" || fail "$fmt: check-seq"
done
echo "PASS: concurrent senders, exactly once and in order"
