#!/bin/bash
# --allow: a peer outside the allowed networks is rejected at connect time
# and logged; one inside is accepted. A build without the peer address
# (system librpma) must refuse --allow with a clear error.
. "$(dirname "$0")/lib.sh"

if [ "${RECV_HAVE_ALLOW:-0}" != 1 ]; then
	"$RPMA_RECV" --listen "$LAB_A:$PORT" --allow 10.0.0.0/8 2>"$WORK/refuse.log"
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "--allow is not available" "$WORK/refuse.log" ||
		fail "--allow without peer addresses: exit $rc, want 2 and a clear error"
	echo "skip: this rpma-recv is built against librpma: --allow is refused (checked)"
	exit 77
fi

start_recv --format len --output "$WORK/out.len" --allow 10.99.0.0/16 --allow fd00::/8
send --count 1 2>>"$WORK/send.log"
rc=$?
[ $rc -eq 3 ] || fail "a disallowed sender was not rejected (send-seq exit $rc, want 3)"
wait_for "$WORK/recv.log" "rejected connection from .*: address not allowed by --allow" ||
	fail "rejection not logged"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
grep -q "0 connections, 0 messages, 0 bytes, 1 rejected" "$WORK/recv.log" || fail "summary"

net=${LAB_A%.*}.0/24
start_recv --format len --output "$WORK/out.len" --allow 10.99.0.0/16 --allow "$net"
send --count 5 --sizes 64 2>>"$WORK/send.log" || fail "an allowed sender failed"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0"
grep -q "1 connections, 5 messages" "$WORK/recv.log" || fail "allowed sender's messages"
grep -E "connection 1 from ${LAB_A%.*}\.[0-9]+:[0-9]+ accepted" "$WORK/recv.log" ||
	fail "accepted line without the peer address"
echo "PASS: --allow rejects and accepts by address"
