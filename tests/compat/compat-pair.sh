#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# compat-pair.sh KIND PORT SERVER CLIENT [SERVER-ARG...] -- [CLIENT-ARG...]
#
# Runs a compat server on LAB_B:PORT, waits for its "listening on" line, runs
# the client(s) against it (from LAB_A's device), waits for everyone and
# checks, by KIND, what went across:
#   conn      both greetings arrived (private data both ways)
#   pingpong  client args SEED ROUNDS: the server saw SEED .. SEED+ROUNDS-1 in
#             order, the client ended at SEED+ROUNDS
#   imm       client args IMM [WORD]: the server got WORD (or 0 bytes) with IMM
#   fanin     server arg N, client arg ROUNDS: N clients (seeds 100, 200, ...)
#             on one SRQ, each ends at its seed + ROUNDS, the server saw all
#   srq       server args N MSGS RQ [rnr], client args MSGS WINDOW: N senders;
#             "rnr" becomes LAB_DEV_B's send_rnr_err counter (exhaustion)
# Every process must exit 0. Outside the lab: exit 77 (skipped).
if [ -z "${LAB_B:-}" ]; then
	echo "LAB_B is not set: this test needs the RDMA lab; run it as" >&2
	echo "  tools/rdma-lab run -- meson test -C build --suite lab" >&2
	exit 77
fi
kind=$1 port=$2 server=$3 client=$4
shift 4
sargs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	a=$1
	[ "$a" = rnr ] && a=/sys/class/infiniband/$LAB_DEV_B/ports/1/hw_counters/send_rnr_err
	sargs="$sargs $a"
	shift
done
[ "${1:-}" = -- ] && shift
out=$(mktemp -d "${TMPDIR:-/tmp}/compat.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() {
	echo "compat-pair.sh ($kind): $*" >&2
	for f in "$out"/*; do
		[ -s "$f" ] && { echo "--- $(basename "$f")" >&2; cat "$f" >&2; }
	done
	# again after the logs: meson keeps only the last 100 lines of a long one
	echo "compat-pair.sh ($kind): $*" >&2
	kill $spid $pids 2>/dev/null
	exit 1
}
pids=

# meson's timeout: say what everyone had printed so far
trap 'fail "killed (timeout?)"' TERM INT

# shellcheck disable=SC2086 # the arguments are words
"$server" "$LAB_B" "$port" $sargs >"$out/server.out" 2>"$out/server.err" &
spid=$!
i=0
# alive PID -- running, not a zombie (kill -0 succeeds on a zombie)
alive() {
	[ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]
}
until grep -q "^listening on $LAB_B:$port\$" "$out/server.out"; do
	alive $spid || fail "$(basename "$server") exited before listening"
	[ $i -lt 600 ] || fail "$(basename "$server") did not listen within 60 s"
	i=$((i + 1))
	sleep 0.1
done

nclients=1
case $kind in
fanin | srq) nclients=$(echo $sargs | cut -d' ' -f1) ;;
esac
pids=
n=1
while [ $n -le "$nclients" ]; do
	if [ "$kind" = fanin ]; then
		"$client" "$LAB_B" "$port" $((n * 100)) "$@" >"$out/client$n.out" 2>"$out/client$n.err" &
	else
		"$client" "$LAB_B" "$port" "$@" >"$out/client$n.out" 2>"$out/client$n.err" &
	fi
	pids="$pids $!"
	n=$((n + 1))
done
n=1
for p in $pids; do
	wait "$p" || fail "client $n ($(basename "$client")) exited $?"
	n=$((n + 1))
done
wait $spid || fail "$(basename "$server") exited $?"

# what went across
case $kind in
conn)
	grep -qx "Received a message: Hello server!" "$out/server.out" || fail "the server lacks the client's greeting"
	grep -qx "Received a message: Hello client!" "$out/client1.out" || fail "the client lacks the server's greeting"
	;;
pingpong)
	seed=$1 rounds=$2
	expect=$(seq "$seed" $((seed + rounds - 1)))
	got=$(grep -io "^[a-z: ]*value received: [0-9]*" "$out/server.out" | grep -o "[0-9]*$")
	[ "$got" = "$expect" ] || fail "the server received [$(echo $got)], not [$(echo $expect)]"
	last=$(grep -io "value received: [0-9]*" "$out/client1.out" | tail -n 1 | grep -o "[0-9]*$")
	[ "$last" = $((seed + rounds)) ] || fail "the client ended at $last, not $((seed + rounds))"
	;;
imm)
	word=${2:-}
	grep -qxF "Received value '$word' (${#word} bytes) with immediate data '$1'" "$out/server.out" ||
		fail "the server did not get '$word' with immediate $1"
	;;
fanin)
	rounds=$1
	total=$(grep -c "^\[server\] value received:" "$out/server.out")
	[ "$total" = $((nclients * rounds)) ] || fail "the server received $total values, not $((nclients * rounds))"
	n=1
	while [ $n -le "$nclients" ]; do
		last=$(grep -o "value received: [0-9]*" "$out/client$n.out" | tail -n 1 | grep -o "[0-9]*$")
		[ "$last" = $((n * 100 + rounds)) ] || fail "client $n ended at $last, not $((n * 100 + rounds))"
		for v in $(seq $((n * 100)) $((n * 100 + rounds - 1))); do
			grep -q "^\[server\] value received: $v from" "$out/server.out" || fail "the server never got $v"
		done
		n=$((n + 1))
	done
	;;
srq)
	msgs=$(echo $sargs | cut -d' ' -f2)
	grep -q "^received $((nclients * (msgs + 1))) messages ($nclients of 0 bytes) from $nclients connections, every byte as sent" \
		"$out/server.out" || fail "the receiver did not get every message"
	case $sargs in *send_rnr_err*)
		grep -q "the SRQ ran dry [1-9][0-9]* times" "$out/server.out" || fail "the SRQ never ran dry" ;;
	esac
	n=1
	while [ $n -le "$nclients" ]; do
		grep -q "^sent $msgs messages and one of 0 bytes, all completed" "$out/client$n.out" ||
			fail "sender $n did not complete every send"
		n=$((n + 1))
	done
	;;
*) fail "unknown kind" ;;
esac
echo "compat-pair.sh ($kind): $(basename "$server") and $(basename "$client") x $nclients: ok"
cat "$out/server.out" | tail -n 3
