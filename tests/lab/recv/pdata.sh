#!/bin/bash
# Connect private data: foreign or malformed data is rejected at connect
# time and logged (peer and reason); no data (a plain librpma peer) and a
# valid rpmafs header are accepted.
. "$(dirname "$0")/lib.sh"

start_recv --format len --output "$WORK/out.len" --max-message 4K --slots 4

# reject CASE HEX PATTERN -- send-seq with that private data must be rejected
reject() {
	send --id 9 --count 1 --pdata "hex:$2" 2>>"$WORK/send.log"
	local rc=$?
	[ $rc -eq 3 ] || fail "$1: send-seq exit $rc, want 3 (rejected)"
	wait_for "$WORK/recv.log" "rejected connection .*$3" || fail "$1: not logged as '$3'"
}

# magic "RPMF", version 1, length 16, flags 0, max_message 4096, credits 0
good=52504d46011000000010000000000000
reject "foreign" 48454c4c4f "foreign private data \(.*48 45 4c 4c 4f.*not an rpmafs header"
reject "bad version" 52504d46091000000010000000000000 "malformed private data.*version"
reject "bad length" 52504d46011800000010000000000000 "malformed private data.*length"
# RoCE pads connect private data to 56 bytes with zeros: a header cut short
# arrives whole with zero fields, and is refused for those
reject "truncated" 52504d460110 "malformed private data"
reject "max_message 0" 52504d46011000000000000000000000 "malformed private data.*max_message"
reject "max_message 2 GiB" 52504d46011000000000008000000000 "malformed.*max_message"
reject "trailing bytes" "${good}01" "malformed private data.*past the rpmafs header"

send --id 0 --count 10 --sizes 100 --pdata none 2>>"$WORK/send.log" ||
	fail "a sender without private data was not accepted"
send --id 1 --count 10 --sizes 100 --pdata "hex:$good" 2>>"$WORK/send.log" ||
	fail "a sender with a valid header was not accepted"
send --id 2 --count 10 --sizes 100 --pdata rpmafs 2>>"$WORK/send.log" ||
	fail "send-seq's own header was not accepted"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
grep -q "3 connections, 30 messages, 3000 bytes, 7 rejected" "$WORK/recv.log" ||
	fail "summary line"
grep "rejected connection" "$WORK/recv.log"
"$CHECK_SEQ" --format len --input "$WORK/out.len" --senders 3 --count 10 ||
	fail "check-seq"
echo "PASS: bad private data rejected and logged, good accepted"
