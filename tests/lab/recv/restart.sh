#!/bin/bash
# Exactly once across a restart of rpma-recv (issue 24): --output FILE
# --format len, a sender with a session (send-session). rpma-recv is
# SIGKILLed and started again with the same command; the sender sends
# again, from the same session, the last messages it sent: every message
# is in FILE exactly once, in order, and the re-sends are counted as
# duplicates. Twice: once after everything was acknowledged (plus a torn
# record left at the end of FILE, as a crash mid-write leaves it), once
# mid-stream (what was written but never acknowledged is cut back, and
# sent again). RESTART_FORMAT=len (default) or dir; RESTART_FSYNC=1 adds
# --fsync.
. "$(dirname "$0")/lib.sh"
: "${SEND_SESSION:?}"

FORMAT=${RESTART_FORMAT:-len}
SESSION=5e55104a11ce0001
K=50
if [ "$FORMAT" = dir ]; then
	OUT="$WORK/out.dir"
	STATE="$OUT/.rpma-recv-state"
else
	OUT="$WORK/out.len"
	STATE="$WORK/.out.len.rpma-recv-state"
fi
FSYNC=()
[ "${RESTART_FSYNC:-0}" = 1 ] && FSYNC=(--fsync)

# records -- how many records OUT holds (64-byte messages: 68 bytes in len)
records() {
	if [ "$FORMAT" = dir ]; then
		find "$OUT" -maxdepth 1 -name '[0-9]*' | wc -l
	else
		echo $(($(stat -c %s "$OUT") / 68))
	fi
}

# wait_records N -- until OUT holds at least N records
wait_records() {
	local i
	for ((i = 0; i < SAFETY_S * 10; i++)); do
		[ "$(records 2>/dev/null || echo 0)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# recv_again -- rpma-recv with the same command, on the same port
recv_again() {
	PORT=$((PORT - 1))
	start_recv "$@"
}

sess() {
	"$SEND_SESSION" --connect "$LAB_A:$PORT" --session "$SESSION" --size 64 "$@"
}

ARGS=(--format "$FORMAT" --output "$OUT" "${FSYNC[@]}" --max-message 4K
	--metrics "$WORK/recv.prom" --verbose)
start_recv "${ARGS[@]}"
grep -q "no state file yet" "$WORK/recv.log" || fail "no word of the state file"
sess --first 1 --count 200 2>>"$WORK/send.log" || fail "the first 200 were not acknowledged"
kill -9 "$RECV_PID"
wait "$RECV_PID" 2>/dev/null
[ -f "$STATE" ] || fail "no state file beside the output"
# a torn record at the end, as a crash in the middle of a write leaves one
# (dir: a leftover temporary, and a file never acknowledged)
if [ "$FORMAT" = dir ]; then
	echo torn >"$OUT/.00000000000000000201.tmp"
	echo unacknowledged >"$OUT/00000000000000000201"
	want="continuing at number 201 \(1 files past it removed\)"
else
	printf '\100\0\0\0torn' >>"$OUT"
	want="continuing at byte $((200 * 68)) \(8 bytes past it removed\)"
fi

recv_again "${ARGS[@]}"
grep -Eq "state loaded .*$want" "$WORK/recv.log" || fail "not continued at the acknowledged end"
[ ! -e "$OUT/.00000000000000000201.tmp" ] || fail "a leftover temporary file stays"
# the last K again (the sender did not see them acknowledged), then new ones
sess --first $((201 - K)) --count $((K + 100)) 2>>"$WORK/send.log" ||
	fail "the re-send was not acknowledged"
"$CHECK_SEQ" --format "$FORMAT" --input "$OUT" --senders 1 --count 300 ||
	fail "check-seq after the first restart"

# mid-stream: killed while messages flow
"$SEND_SESSION" --connect "$LAB_A:$PORT" --session "$SESSION" --size 64 \
	--first 301 --count 1000000 2>"$WORK/mid.log" &
mid=$!
PIDS+=("$mid")
wait_records 2300 || fail "no traffic before the kill"
kill -9 "$RECV_PID"
wait "$RECV_PID" 2>/dev/null
wait "$mid"
wait_for "$WORK/mid.log" "acknowledged through [0-9]+" || fail "the sender did not say how far"
last=$(grep -Eo "acknowledged through [0-9]+" "$WORK/mid.log" | grep -Eo "[0-9]+$")
[ "$last" -gt 300 ] || fail "nothing of the stream acknowledged ($last)"
echo "killed with $(records) records in the output, $last acknowledged"

recv_again "${ARGS[@]}"
wait_for "$WORK/recv.log" "state loaded" || fail "the state was not loaded"
# from K before the last acknowledged: some duplicates, then what was cut or never came
sess --first $((last + 1 - K)) --count $((K + 1000)) 2>>"$WORK/send.log" ||
	fail "the re-send after the mid-stream kill was not acknowledged"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
total=$((last + 1000))
"$CHECK_SEQ" --format "$FORMAT" --input "$OUT" --senders 1 --count "$total" ||
	fail "check-seq after the mid-stream kill"
dups=$(awk '$1 == "rpma_recv_duplicates_total" { print $2 }' "$WORK/recv.prom")
[ "$dups" -ge "$K" ] || fail "want at least $K duplicates counted, got '$dups'"
grep -E "^rpma_recv_sessions " "$WORK/recv.prom" | grep -q " 1$" || fail "want 1 session"
# a plain sender (no acknowledgements, transport confirmation only): what it
# sent and rpma-recv wrote stays across a SIGKILL too (the state is saved
# after each batch of such records, or the restart would cut them off)
if [ "$FORMAT" = len ]; then
	OUT="$WORK/plain.len"
	ARGS=(--format len --output "$OUT" "${FSYNC[@]}" --max-message 4K --verbose)
	start_recv "${ARGS[@]}"
	send --id 0 --count 500 --sizes 64 --quiet || fail "the plain sender failed"
	wait_for "$WORK/recv.log" "connection 1 .*(closed by peer|lost)" ||
		fail "the plain sender's end not logged"
	kill -9 "$RECV_PID"
	wait "$RECV_PID" 2>/dev/null
	recv_again "${ARGS[@]}"
	grep -Eq "state loaded .*continuing at byte $((500 * 68)) " "$WORK/recv.log" ||
		fail "the plain sender's records were not kept"
	send --id 1 --count 10 --sizes 64 --quiet || fail "the second plain sender failed"
	kill -TERM "$RECV_PID"
	wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
	"$CHECK_SEQ" --format len --input "$OUT" --senders 2 --count 500 --count-of 1:10 ||
		fail "check-seq of the plain senders"
fi
echo "PASS ($FORMAT${FSYNC[*]:+ ${FSYNC[*]}}): restarted twice, $total messages exactly once, $dups duplicates in the last run"
