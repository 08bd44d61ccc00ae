#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# peers.sh -- one mount with N rdma peers, all on one rpma-recv, inside the lab
#
#	peers.sh N FIGURES LOGDIR
#
# Starts one rpma-recv (--count N, --max-connections N + 16) on LAB_B, mounts
# rpmafs with N peers pointing at it and waits, reading rpmafs's log as it
# grows, for N "connected to" lines; then checks every <peer>.status says
# "state: connected", takes rpmafs's VmRSS, VmHWM, descriptors and threads,
# writes one message to every peer and waits for rpma-recv to exit after the
# N-th, checking that each peer's message arrived exactly once.
#
# Appends "peers_N_KEY VALUE" lines to FIGURES (connect_s: start of rpmafs
# to the last peer connected; mount_s: to "mounted"; rss_mib, hwm_mib,
# fds, threads, delivered) and "note peers_N TEXT" when something is
# missing. Exit status 0 when all N connected and delivered, 1 otherwise.
# Used by tools/bench (benchsrc/inside.sh) and by the lab tests fs-peers-*.
# Needs LAB_B; RPMAFS and RPMA_RECV name the programs (default: from PATH).
set -u
n=$1 fig=$2 logs=$3
rpmafs=${RPMAFS:-rpmafs} recv=${RPMA_RECV:-rpma-recv}
port=${PEERS_PORT:-$((7700 + RANDOM % 200))}
key=peers_$n
mkdir -p "$logs"
work=$(mktemp -d /tmp/rpmafs-peers.XXXXXX)
mnt=$work/spool
mkdir "$mnt"
rlog=$logs/peers-$n-recv.log flog=$logs/peers-$n-rpmafs.log out=$work/received

put() { printf '%s %s\n' "$1" "$2" >>"$fig"; }
fail() {
	printf 'note %s %s\n' "$key" "$*" >>"$fig"
	printf 'peers: %s peers: %s\n' "$n" "$*" >&2
	status=1
}
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" || :; }
alive() { kill -0 "$1" 2>/dev/null; }
# stop PID: SIGTERM, SIGKILL after 10 s
stop() {
	local i
	kill -TERM "$1" 2>/dev/null
	for ((i = 0; i < 100; i++)); do alive "$1" || break; nap 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
status=0

# outside the lab: skipped (meson counts 77 as a skip)
[ -n "${LAB_B:-}" ] || { echo "peers: not in the lab (LAB_B unset)" >&2; exit 77; }

# no ulimit here: rpmafs and rpma-recv raise their own descriptor limits
"$recv" --listen "$LAB_B:$port" --max-message 4KiB --slots 256 \
	--max-connections $((n + 16)) --format lines --output "$out" 2>"$rlog" &
rpid=$!
for ((i = 0; i < 400; i++)); do
	grep -q "listening on" "$rlog" 2>/dev/null && break
	alive $rpid || break
	nap 0.05
done
if ! grep -q "listening on" "$rlog"; then
	fail "missing: rpma-recv did not start ($(tail -1 "$rlog"))"
	stop $rpid
	rm -rf "$work"
	exit 1
fi

{
	printf '[rpmafs]\nmax_message = 4KiB\nslots = 16\nlog_level = notice\n'
	for ((p = 0; p < n; p++)); do
		printf '\n[p%04d]\naddress = %s\nport = %s\n' $p "$LAB_B" "$port"
	done
} >"$work/rpmafs.ini"

: >"$flog" # there before it is followed
t0=$(now)
"$rpmafs" -f --config "$work/rpmafs.ini" "$mnt" 2>>"$flog" &
fpid=$!

# read rpmafs's log as it grows, counting peers connected, until all are
exec {lfd}<"$flog"
connected=0 partial= t_mount= deadline=$((SECONDS + ${PEERS_TIMEOUT:-600}))
while [ $connected -lt "$n" ] && [ $SECONDS -lt $deadline ]; do
	if IFS= read -r -u $lfd line; then
		line=$partial$line partial=
		case $line in
		*": connected to "*) connected=$((connected + 1)) ;;
		*"mounted "*) t_mount=$(now) ;;
		esac
		continue
	fi
	partial=$partial$line
	alive $fpid || break
	nap 0.02
done
t1=$(now)
exec {lfd}<&-
if [ -n "$t_mount" ]; then
	put "$key.mount_s" "$(minus "$t_mount" "$t0")"
fi
if [ $connected -lt "$n" ]; then
	fail "missing: $connected of $n peers connected after $(minus "$t1" "$t0") s ($(grep -v 'connected to' "$flog" | tail -1))"
else
	put "$key.connect_s" "$(minus "$t1" "$t0")"
	# the status files agree with the log
	bad=0
	for ((p = 0; p < n; p++)); do
		printf -v f '%s/p%04d.status' "$mnt" $p
		IFS= read -r first <"$f" || first=
		[ "$first" = "state: connected" ] || bad=$((bad + 1))
	done
	[ $bad = 0 ] || fail "$bad of $n status files do not say 'state: connected'"
	fds=(/proc/$fpid/fd/*)
	put "$key.fds" ${#fds[@]}
	put "$key.rss_mib" "$(awk '/^VmRSS/ { printf "%.2f", $2 / 1024 }' "/proc/$fpid/status")"
	put "$key.hwm_mib" "$(awk '/^VmHWM/ { printf "%.2f", $2 / 1024 }' "/proc/$fpid/status")"
	put "$key.threads" "$(awk '/^Threads/ { print $2 }' "/proc/$fpid/status")"
	put "$key.nofile" "$(awk '/^Max open files/ { print $4 }' "/proc/$fpid/limits")"
	# one message through every peer
	for ((p = 0; p < n; p++)); do
		printf -v name 'p%04d' $p
		echo "$name" >"$mnt/$name" || fail "write to $name failed"
	done
	# until rpma-recv has written n records (or 60 s pass: a failure)
	got=0
	for ((i = 0; i < 1200; i++)); do
		got=0
		while IFS= read -r line; do got=$((got + 1)); done <"$out"
		[ $got -ge "$n" ] && break
		alive $rpid || break
		nap 0.05
	done
	sorted=$(sort "$out" | uniq -c | awk '$1 == 1 { print $2 }')
	want=$(for ((p = 0; p < n; p++)); do printf 'p%04d\n' $p; done)
	put "$key.delivered" "$(printf '%s\n' "$sorted" | grep -c .)"
	[ $got = "$n" ] && [ "$sorted" = "$want" ] ||
		fail "rpma-recv has $got messages of $n, not one from every peer"
fi

# unmount first (the peers would reconnect to a receiver that is gone)
t2=$(now)
fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null
for ((i = 0; i < 300; i++)); do alive $fpid || break; nap 0.1; done
stop $fpid
[ $connected = "$n" ] && put "$key.unmount_s" "$(minus "$(now)" "$t2")"
stop $rpid
rm -rf "$work"
[ $status = 0 ] || { echo "peers: logs in $logs" >&2; tail -5 "$flog" "$rlog" >&2; }
exit $status
