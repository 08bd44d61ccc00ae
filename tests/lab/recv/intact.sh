#!/bin/bash
# Messages of 0 B, 1 B, 4 KiB and 1 MiB arrive intact, every byte checked,
# in all four formats, from a sender on the project's rpma with rpmafs
# private data and from one on the system's librpma with none (with only
# librpma available, the same sender binary plays both parts).
. "$(dirname "$0")/lib.sh"

SIZES=0,1,4K,1M
N=8 # each size twice; with 4 slots every receive is posted again

senders=("$SEND_SEQ" "${SEND_SEQ_LIBRPMA:-$SEND_SEQ}")
pdatas=(rpmafs none)
[ -n "$SEND_SEQ_LIBRPMA" ] || echo "note: no librpma-built sender; $SEND_SEQ sends both"

for fmt in raw lines len dir; do
	out=$WORK/out.$fmt
	args=(--format "$fmt" --max-message 1M --slots 4 --count $((2 * N)))
	if [ "$fmt" = dir ]; then
		args+=(--output "$out")
		RECV_STDOUT=/dev/null start_recv "${args[@]}"
	else
		RECV_STDOUT=$out start_recv "${args[@]}"
	fi

	expect=()
	for id in 0 1; do
		"${senders[id]}" --connect "$LAB_A:$PORT" --id "$id" --count "$N" --sizes "$SIZES" \
			--window 2 --pdata "${pdatas[id]}" 2>>"$WORK/send.log" ||
			fail "$fmt: sender $id (${senders[id]##*/}, --pdata ${pdatas[id]}) failed"
		expect+=(--expect "$id:$N:$SIZES")
	done

	wait_exit "$RECV_PID" || fail "$fmt: rpma-recv --count $((2 * N)) did not exit 0"
	grep -q "2 connections, $((2 * N)) messages" "$WORK/recv.log" ||
		fail "$fmt: summary line missing"
	grep -q "accepted (rpmafs sender, max_message 1048576)" "$WORK/recv.log" ||
		fail "$fmt: rpmafs sender not logged as such"
	grep -q "accepted (no rpmafs private data)" "$WORK/recv.log" ||
		fail "$fmt: plain sender not logged as such"
	"$CHECK_SEQ" --format "$fmt" --input "$out" "${expect[@]}" || fail "$fmt: output differs"
	rm -rf "$out"
done
echo "PASS: 0 B, 1 B, 4 KiB, 1 MiB intact in raw, lines, len and dir"
