#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# inbox.sh -- the inbox's figures (docs/design.md §13), inside the lab, in one run
#
#	inbox.sh quick|full FIGURES LOGDIR
#
# 1. receive rate: one mount A writes N messages of 64 B with bench-writer,
#    once to rpma-recv --format lines --output /dev/null --count N, once to
#    mount B's inbox (inbox_format lines) drained by `head -c` of exactly N
#    records; each time from the writer's start to the receiver's end.
#    Keys: inbox.rate.recv_msg_s, inbox.rate.inbox_msg_s, inbox_rate_over_recv.
# 2. ping-pong: A's shell loop `echo p > pp; read -r r < inbox`, B's
#    `while read -r m; do echo "$m" > a; done < inbox` (close = wait: each
#    echo returns once the other side read it), in paired rounds (1 quick,
#    3 full): each round ib_send_lat -R -e 64 B on the same link, then PP
#    round trips. Keys per round inbox.pingpong.R.lat_us (t_typical, half a
#    round trip) and inbox.pingpong.R.rtt_us; inbox.pingpong.rtt_us and
#    inbox.pingpong.lat_us, the rounds' medians; inbox_pingpong_over_send_lat,
#    the median of the rounds' rtt / (2 x lat).
# Every step under `timeout`; a figure that cannot be had is a note.
set -u
mode=$1 fig=$2 logs=$3
mkdir -p "$logs"
work=$(mktemp -d /tmp/rpmafs-inbox-bench.XXXXXX)
if [ "$mode" = quick ]; then N=2000 PP=50 PPR=1; else N=20000 PP=500 PPR=3; fi
PPR=${INBOX_PP_ROUNDS:-$PPR} # the ping-pong rounds, for a run of this script alone
pa=$((7800 + RANDOM % 100)) pb=$((7900 + RANDOM % 100)) pr=$((8000 + RANDOM % 100))

put() { printf '%s %s\n' "$1" "$2" >>"$fig"; }
note() { printf 'note %s %s\n' "$1" "$2" >>"$fig"; printf 'bench: %s: %s\n' "$1" "$2" >&2; }
now() { date +%s.%N; }
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" || :; }
# until FILE has TEXT, at most 60 s
wait_for() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -qs "$2" "$1" && return 0
		nap 0.1
	done
	return 1
}
# send_lat: ib_send_lat -R -e -s 64 (as inside.sh's perftest), its t_typical in µs, or nothing
send_lat() {
	local port=$((18500 + RANDOM % 2000)) log=$logs/inbox-send-lat srv i
	stdbuf -oL timeout -k 5 150 ib_send_lat -R -e -s 64 -n 300 -p "$port" >"$log.server" 2>&1 &
	srv=$!
	wait_for "$log.server" "Waiting for client to connect" || { kill -TERM $srv 2>/dev/null; return; }
	nap 0.3
	timeout -k 5 120 ib_send_lat -R -e -s 64 -n 300 -p "$port" "$LAB_B" >"$log.client" 2>&1
	for ((i = 0; i < 50; i++)); do kill -0 "$srv" 2>/dev/null || break; nap 0.1; done
	kill -TERM $srv 2>/dev/null
	wait $srv 2>/dev/null
	awk '$1 == 64 && NF >= 5 { print $5 }' "$log.client"
}
pids=()
cleanup() {
	for m in "$work/a" "$work/b"; do fusermount3 -u "$m" 2>/dev/null; done
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/a.ini" <<INI
[rpmafs]
listen = $LAB_A:$pa
log_level = notice
# the rate runs measure arrival, not close(2): close = return
[b]
address = $LAB_B
port = $pb
close = return
[r]
address = $LAB_B
port = $pr
close = return
[pp]
address = $LAB_B
port = $pb
INI
cat >"$work/b.ini" <<INI
[rpmafs]
listen = $LAB_B:$pb
log_level = notice
[a]
address = $LAB_A
port = $pa
INI
mkdir "$work/a" "$work/b"
rpma-recv --listen "$LAB_B:$pr" --format lines --output /dev/null --count "$N" \
	2>"$logs/inbox-recv.log" &
recv=$!
pids+=($recv)
rpmafs -f --config "$work/b.ini" "$work/b" 2>"$logs/inbox-b.log" &
pids+=($!)
rpmafs -f --config "$work/a.ini" "$work/a" 2>"$logs/inbox-a.log" &
pids+=($!)
for s in a/b a/r a/pp b/a; do
	wait_for "$work/$s.status" "state: connected" || { note inbox "$s never connected"; exit 0; }
done

# 1. the receive rate, rpma-recv first
t0=$(now)
timeout 300 bench-writer "$work/a/r" 64 "$N" >/dev/null || note inbox "writer to rpma-recv failed"
timeout 300 tail --pid="$recv" -f /dev/null
t1=$(now)
recv_rate=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')
put inbox.rate.recv_msg_s "$recv_rate"
(timeout 300 head -c $((65 * N)) "$work/b/inbox" >/dev/null; now >"$work/inbox.end") &
reader=$!
until grep -qs "^readers: 1" "$work/b/inbox.status"; do nap 0.05; done
t0=$(now)
timeout 300 bench-writer "$work/a/b" 64 "$N" >/dev/null || note inbox "writer to the inbox failed"
wait "$reader"
if [ -s "$work/inbox.end" ] && grep -qs "^read: $N\$" "$work/b/inbox.status"; then
	inbox_rate=$(awk -v n="$N" -v a="$t0" -v b="$(cat "$work/inbox.end")" 'BEGIN { printf "%.1f", n / (b - a) }')
	put inbox.rate.inbox_msg_s "$inbox_rate"
	put inbox_rate_over_recv "$(awk -v a="$inbox_rate" -v b="$recv_rate" 'BEGIN { printf "%.3f", a / b }')"
else
	note inbox "the inbox did not read $N messages: $(grep -E '^(received|read|waiting):' "$work/b/inbox.status" | tr '\n' ' ')"
fi

# 2. ping-pong between the two mounts through their inboxes, in paired rounds
(cd "$work/b" && while read -r m; do echo "$m" >a; done <inbox) &
answer=$!
pids+=($answer)
rtts=() lats=() ratios=()
for ((r = 1; r <= PPR; r++)); do
	lat=$(send_lat)
	[ -n "$lat" ] && put "inbox.pingpong.$r.lat_us" "$lat" || note inbox "round $r: ib_send_lat failed"
	t0=$(now)
	if (cd "$work/a" && timeout 300 bash -c "for ((i = 0; i < $PP; i++)); do echo p\$i > pp; read -r r < inbox; [ \"\$r\" = p\$i ] || exit 1; done"); then
		t1=$(now)
		rtt=$(awk -v n="$PP" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / n * 1e6 }')
		put "inbox.pingpong.$r.rtt_us" "$rtt"
		rtts+=("$rtt")
		if [ -n "$lat" ]; then
			lats+=("$lat")
			ratios+=("$(awk -v r="$rtt" -v l="$lat" 'BEGIN { printf "%.2f", r / (2 * l) }')")
		fi
	else
		note inbox "round $r: the ping-pong failed or took over 300 s"
		break
	fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
[ ${#rtts[@]} -gt 0 ] && put inbox.pingpong.rtt_us "$(median "${rtts[@]}")"
[ ${#lats[@]} -gt 0 ] && put inbox.pingpong.lat_us "$(median "${lats[@]}")"
[ ${#ratios[@]} -gt 0 ] && put inbox_pingpong_over_send_lat "$(median "${ratios[@]}")"
kill -TERM "$answer" 2>/dev/null
exit 0
