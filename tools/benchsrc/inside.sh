#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# inside.sh -- the bench's measurements, run by tools/bench inside the lab
#
#	inside.sh quick|full FIGURES LOGDIR
#
# Appends one "key value" line per figure to FIGURES (and "note key text"
# for anything worth saying, such as a figure that could not be measured).
# Every external step runs under `timeout`: a hung perftest costs a retry
# and a missing figure, never the run. Keys are read by report.py. The
# paired rounds (round.R.*) measure each ratio's figure and its floor back
# to back; among them a short ib_send_lat -R -e 64 B just before the sync
# latencies (round.R.perftest.lat.64.typical_us): with the round's null-peer
# write latency, the floor of the receiver-confirmed one (a FUSE write and
# an RDMA round trip, report.py's acked_sync_latency_over_rtt_floor).
set -u
mode=$1 fig=$2 logs=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$top/build/fs:$top/build/tools/rpma-recv:$top/build/tools/benchsrc:$top/build/tests/lab/recv:$PATH"
mkdir -p "$logs"
work=$(mktemp -d /tmp/rpmafs-bench.XXXXXX)
mnt=$work/spool
t_start=$(date +%s.%N)

# 1020 KiB: the largest write that is one message (README, "The message limit")
MAX=1044480
MIB=1048576

if [ "$mode" = quick ]; then
	PT_LAT_N=(300 300 10)  PT_BW_N=(2000 1000 20)
	RAW_RATE_N=(2000 1000 20)  RAW_LAT_N=(300 300 10)
	NULL_RATE_N=(2000 2000 30)  NULL_LAT_N=(500 500 20)
	FS_RATE_N=(2000 1000 20)  FS_LAT_N=(300 300 10)
	DD_N=20 DD4_N=8 SHELL_N=200 WARMUP=100 ROUNDS=1 COUNT_ROUNDS=1 COUNT_N=1000
	FANIN_CONNS=(10 100 200) FANIN_MSGS=20
	AUTH_PASSES=2 # one round: the key pairs A B B A within it
else
	PT_LAT_N=(2000 2000 100)  PT_BW_N=(20000 10000 200)
	RAW_RATE_N=(20000 10000 200)  RAW_LAT_N=(2000 2000 100)
	NULL_RATE_N=(20000 20000 500)  NULL_LAT_N=(5000 5000 200)
	FS_RATE_N=(20000 10000 200)  FS_LAT_N=(2000 2000 100)
	DD_N=200 DD4_N=60 SHELL_N=1000 WARMUP=500 ROUNDS=3 COUNT_ROUNDS=3 COUNT_N=2000
	FANIN_CONNS=(10 100 1000) FANIN_MSGS=100
	AUTH_PASSES=1 # three rounds: A B, B A, A B
fi
WINDOW=16 # sends outstanding in the raw rate loop; rpmafs's window is slots + 2
SLOTS=16  # rpmafs's registered message buffers (the default)

put() { printf '%s %s\n' "$1" "$2" >>"$fig"; }
note() {
	printf 'note %s %s\n' "$1" "$2" >>"$fig"
	printf 'bench: %s: %s\n' "$1" "$2" >&2
}
step() { printf 'bench: [%5.1f s] %s\n' "$(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$*" >&2; }
now() { date +%s.%N; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }
# get LINE KEY: the value of KEY=VALUE in a line of figures
get() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<<"$1"; }
# put_line PREFIX LINE KEY...: each KEY=VALUE of LINE as figure PREFIX.KEY
put_line() {
	local prefix=$1 line=$2 k v
	shift 2
	for k in "$@"; do
		v=$(get "$line" "$k")
		[ -n "$v" ] && put "$prefix.$k" "$v"
	done
}
# nap SECONDS: sleep without a fork (a loaded TCG guest forks slowly): read
# with a timeout from a pipe that nobody writes to
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" || :; }
# wait_for FILE TEXT SECONDS: until FILE contains TEXT (no fork per look)
wait_for() {
	local i line
	for ((i = 0; i < $3 * 10; i++)); do
		if [ -r "$1" ]; then
			while IFS= read -r line; do
				[[ $line == *"$2"* ]] && return 0
			done <"$1"
		fi
		nap 0.1
	done
	return 1
}
# strace_on/off, ticks_of, cpu_us, per, us_per
. "$top/tools/benchsrc/count.sh"
stop() { # stop PID...: SIGTERM, then SIGKILL after 5 s
	local p i
	for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
	for ((i = 0; i < 50; i++)); do
		kill -0 "$@" 2>/dev/null || break
		nap 0.1
	done
	for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
	wait "$@" 2>/dev/null
}

# the link's counters: RNR NAKs seen by the sender (receiver out of
# receives) and retransmissions (lost packets), from the rxe device
counter() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
link_snap() { echo "$(counter "$LAB_DEV_A" rcvd_rnr_err) $(counter "$LAB_DEV_A" completer_retry_err)"; }
link_put() { # link_put KEY "BEFORE": the counters' growth since BEFORE
	local b=($2) a=($(link_snap))
	# no counter (not rxe, or an older kernel): the figure is missing, not 0
	[ -r "/sys/class/infiniband/$LAB_DEV_A/ports/1/hw_counters/rcvd_rnr_err" ] &&
		put "$1.rnr_naks" $((a[0] - b[0]))
	put "$1.retransmits" $((a[1] - b[1]))
}

put meta.lab_mode "${LAB_MODE:-unknown}"
put meta.kernel "$(uname -r)"
put meta.lab_cpus "$(nproc)"

# ---------------------------------------------------------------------------
# 1a. perftest on the same link: server on LAB_B, client from LAB_A

# perftest KIND SIZE ITERS: ib_send_KIND -R -e, retried once. -e: both ends
# sleep on completion events, as rpmafs, rpma-recv and bench-rpma do; with
# busy polling on two vCPUs the pollers starve rxe's own kernel work and
# every few hundred messages stall for a 4 ms scheduler tick. PT_PREFIX
# (round.R. in the paired rounds) goes before its keys, notes and logs.
perftest() {
	local kind=$1 size=$2 iters=$3 attempt port srv line log i pre=${PT_PREFIX:-}
	for attempt in 1 2; do
		port=$((18500 + RANDOM % 2000))
		log=$logs/perftest-$pre$kind-$size-$attempt
		# the server prints this once it listens for the client's first connection
		stdbuf -oL timeout -k 5 150 "ib_send_$kind" -R -e -s "$size" -n "$iters" -p "$port" \
			>"$log.server" 2>&1 &
		srv=$!
		wait_for "$log.server" "Waiting for client to connect" 60
		nap 0.3
		timeout -k 5 120 "ib_send_$kind" -R -e -s "$size" -n "$iters" -p "$port" "$LAB_B" \
			>"$log.client" 2>&1
		line=$(awk -v s="$size" '$1 == s && NF >= 5' "$log.client")
		# the server ends on its own once the client reported; give it 5 s
		if [ -n "$line" ]; then
			for ((i = 0; i < 50; i++)); do kill -0 "$srv" 2>/dev/null || break; nap 0.1; done
		fi
		stop "$srv"
		if [ -n "$line" ]; then
			set -- $line
			if [ "$kind" = lat ]; then
				# t_typical (a median) and the 99th percentile, half a round trip each
				put "${pre}perftest.lat.$size.typical_us" "$5"
				put "${pre}perftest.lat.$size.p99_us" "$8"
			else
				# perftest's MB/sec is MiB/s: BW average = MsgRate x size / 2^20
				put "${pre}perftest.bw.$size.mib_s" "$4"
				put "${pre}perftest.bw.$size.msg_s" "$(awk -v r="$5" 'BEGIN { printf "%.1f", r * 1e6 }')"
			fi
			[ "$attempt" = 2 ] && note "${pre}perftest.$kind.$size" "measured on the second attempt (the first: $(grep -v '^ *$' "$logs/perftest-$pre$kind-$size-1.client" | tail -1 | tr -s ' \t' ' '))"
			return 0
		fi
	done
	note "${pre}perftest.$kind.$size" "missing: ib_send_$kind -s $size failed twice ($(grep -v '^ *$' "$log.client" | tail -1 | tr -s ' \t' ' '))"
}

step "perftest: ib_send_lat and ib_send_bw -R at 64 B, 4 KiB, 1 MiB"
sizes=(64 4096 $MIB)
for i in 0 1 2; do
	perftest lat "${sizes[$i]}" "${PT_LAT_N[$i]}"
	perftest bw "${sizes[$i]}" "${PT_BW_N[$i]}"
done

# ---------------------------------------------------------------------------
# 1b. the project's raw rpma_send loop

step "raw rpma_send: rate (window $WINDOW) and send-and-complete latency"
bench-rpma recv "$LAB_B" 7300 --max 1MiB --slots 64 >"$logs/raw-recv.log" 2>&1 &
raw_recv=$!
if wait_for "$logs/raw-recv.log" "listening on" 20; then
	for i in 0 1 2; do
		s=${sizes[$i]}
		snap=$(link_snap)
		line=$(timeout 120 bench-rpma send "$LAB_B" 7300 "$s" "${RAW_RATE_N[$i]}" \
			--window "$WINDOW" --warmup $((s > 4096 ? 16 : WARMUP)) 2>>"$logs/raw-send.log")
		if [ -n "$line" ]; then
			put_line "raw.rate.$s" "$line" msg_s mib_s count
			link_put "raw.rate.$s" "$snap"
		else
			note "raw.rate.$s" "missing: bench-rpma send failed (see raw-send.log)"
		fi
		line=$(timeout 120 bench-rpma send "$LAB_B" 7300 "$s" "${RAW_LAT_N[$i]}" --latency \
			--warmup 10 2>>"$logs/raw-send.log")
		if [ -n "$line" ]; then
			put_line "raw.lat.$s" "$line" median_us p99_us mean_us count
		else
			note "raw.lat.$s" "missing: bench-rpma send --latency failed (see raw-send.log)"
		fi
	done
else
	note raw "missing: bench-rpma recv did not start (see raw-recv.log)"
fi
stop "$raw_recv"

# ---------------------------------------------------------------------------
# 2, 3, 5. one mount: a null peer and four peers, each with its rpma-recv

# st PEER KEY: a figure of the peer's status file
st() {
	local k v
	while IFS=': ' read -r k v; do
		[ "$k" = "$2" ] && echo "$v" && return 0
	done <"$mnt/$1.status"
	return 1
} 2>/dev/null
# status_is PEER KEY VALUE: without a fork
status_is() {
	local k v
	while IFS=': ' read -r k v; do
		[ "$k" = "$2" ] && [ "$v" = "$3" ] && return 0
	done <"$mnt/$1.status"
	return 1
} 2>/dev/null

recvs=()
for p in 0 1 2 3; do
	rpma-recv --listen "$LAB_B:$((7204 + p))" --max-message 1MiB --slots 64 --format raw \
		>/dev/null 2>"$logs/rpma-recv-$p.log" &
	recvs+=($!)
done
# a fifth, as a service runs it: into a file, so with its state file
# (docs/design.md §5.1) saved before every acknowledgement
rpma-recv --listen "$LAB_B:7208" --max-message 1MiB --slots 64 --format len \
	--output "$work/out4.len" 2>"$logs/rpma-recv-4.log" &
recvs+=($!)
for p in 0 1 2 3 4; do
	wait_for "$logs/rpma-recv-$p.log" "listening on" 20 || note rpma-recv "rpma-recv $p did not start"
done
# authenticated peers (issue 25, docs/design.md §11.2): one key, 32 random
# bytes of mode 0600 in a directory of mode 0700; three more receivers with
# r0's options, each with one peer of its own: without a key (the floor of
# the auth_* keys), --keys (protect = mac) and --keys --protect encrypt
keys=$work/keys
mkdir -m 700 "$keys"
(umask 077 && head -c 32 /dev/urandom >"$keys/bench.key")
chmod 600 "$keys/bench.key"
declare -A auth_pid
auth_rx=("plain:7211:" "mac:7209:--keys $keys" "encrypt:7212:--keys $keys --protect encrypt")
for rx in "${auth_rx[@]}"; do
	IFS=: read -r name port opt <<<"$rx"
	rpma-recv --listen "$LAB_B:$port" --max-message 1MiB --slots 64 --format raw $opt \
		>/dev/null 2>"$logs/rpma-recv-auth-$name.log" &
	recvs+=($!)
	auth_pid[$name]=$!
done
for rx in "${auth_rx[@]}"; do
	IFS=: read -r name port opt <<<"$rx"
	wait_for "$logs/rpma-recv-auth-$name.log" "listening on" 20 ||
		note "auth.$name" "rpma-recv on port $port did not start (see rpma-recv-auth-$name.log)"
done

# the true FUSE floor: bench-noop-fs answers every WRITE at once, with
# rpmafs's FUSE settings (tools/benchsrc/noop-fs.c); mounted for the whole run
noop=$work/noop
mkdir "$noop"
bench-noop-fs -f "$noop" 2>"$logs/noop-fs.log" &
noop_fs=$!
wait_for "$logs/noop-fs.log" "serving" 20 || note noop "bench-noop-fs did not start (see noop-fs.log)"
# the same file system sending each write of its f to t0's rpma-recv and
# answering at the completion, on the worker: a FUSE write and a send
# composed in one process, the floor of sync64_latency_over_fuse_send
noopsend=$work/noopsend
mkdir "$noopsend"
bench-noop-fs -f --send "$LAB_B" 7204 "$noopsend" 2>"$logs/noopsend-fs.log" &
noopsend_fs=$!
wait_for "$logs/noopsend-fs.log" "serving" 20 ||
	note noopsend "bench-noop-fs --send did not start (see noopsend-fs.log)"

mkdir "$mnt"
{
	printf '[rpmafs]\nslots = %s\nlog_level = notice\n\n[null]\ntype = null\n' "$SLOTS"
	for p in 0 1 2 3; do printf '\n[r%s]\naddress = %s\nport = %s\n' "$p" "$LAB_B" $((7204 + p)); done
	# r0's receiver again, with one signaled send in a quarter window
	printf '\n[e0]\naddress = %s\nport = 7204\ncompletion = on_error\n' "$LAB_B"
	# r0's receiver again: transport confirmation (r0 has receiver
	# confirmation), and receiver confirmation with close = return
	printf '\n[t0]\naddress = %s\nport = 7204\nconfirm = transport\n' "$LAB_B"
	printf '\n[c0]\naddress = %s\nport = 7204\nclose = return\n' "$LAB_B"
	# r1's receiver again, file-framed: one message per cp (docs/design.md §4.6)
	printf '\n[f0]\naddress = %s\nport = 7205\nframing = file\n' "$LAB_B"
	# the fifth receiver's: receiver-confirmed into --output FILE
	printf '\n[o0]\naddress = %s\nport = 7208\n' "$LAB_B"
	# the authenticated peers' receivers: p0 without a key, a0 and x0 with one
	printf '\n[p0]\naddress = %s\nport = 7211\n' "$LAB_B"
	printf '\n[a0]\naddress = %s\nport = 7209\nkey = %s\nprotect = mac\n' "$LAB_B" "$keys/bench.key"
	printf '\n[x0]\naddress = %s\nport = 7212\nkey = %s\nprotect = encrypt\n' "$LAB_B" "$keys/bench.key"
} >"$work/rpmafs.ini"
rpmafs -f --config "$work/rpmafs.ini" "$mnt" 2>"$logs/rpmafs.log" &
fs=$!
connected=0
for ((i = 0; i < 600; i++)); do
	n=0
	for p in r0 r1 r2 r3 e0 t0 c0 f0 o0; do status_is "$p" state connected && n=$((n + 1)); done
	[ $n = 9 ] && connected=1 && break
	kill -0 $fs 2>/dev/null || break
	nap 0.05
done
# the authenticated peers are not needed for the rest: each is used once it
# is connected, and one that is not is reported with its last_error (its
# figures are then null, with the reason), not waited for
auth_up=()
if [ $connected = 1 ]; then
	for pr in p0:plain a0:mac x0:encrypt; do
		peer=${pr%%:*} name=${pr#*:} why=''
		for ((i = 0; i < 600; i++)); do
			status_is "$peer" state connected && break
			why=$(st "$peer" last_error)
			[ -n "$why" ] && break
			nap 0.05
		done
		if status_is "$peer" state connected; then
			auth_up+=("$pr")
		else
			note "auth.$name" "missing: $peer ($name) did not connect: ${why:-not connected after 30 s} (state $(st "$peer" state))"
			# its retries (every 5 s) then meet no listener: a refused
			# connect costs the timed runs less than an accept and a teardown
			stop "${auth_pid[$name]}"
			left=()
			for pid in "${recvs[@]}"; do [ "$pid" = "${auth_pid[$name]}" ] || left+=("$pid"); done
			recvs=("${left[@]}")
		fi
	done
fi
hz=$(getconf CLK_TCK)
cpu_ticks() { sed 's/^.*) //' "/proc/$fs/stat" | awk '{ print $12 + $13 }'; }
# cpu_snap: CPU ticks of the daemon, of its engine thread (completions) and
# of r0's rpma-recv, to see where a message's CPU goes
cpu_snap() {
	local f e=0
	for f in /proc/$fs/task/*; do
		[ "$(cat "$f/comm" 2>/dev/null)" = rpmafs-engine ] && e=$(ticks_of "$f/stat")
	done
	echo "$(cpu_ticks) $e $(ticks_of "/proc/${recvs[0]}/stat")"
}
# cpu_put KEY PEER SNAP_BEFORE POSTED_BEFORE: CPU per message since
cpu_put() {
	local msgs=$(($(st "$2" posted) - $4)) b=($3) a=($(cpu_snap)) i
	local k=(daemon.cpu_us_per_msg daemon.engine_cpu_us_per_msg recv.cpu_us_per_msg)
	[ "$msgs" -gt 0 ] || return 0
	for i in 0 1 2; do
		put "${k[$i]}.$1" "$(awk -v t="$((a[i] - b[i]))" -v hz="$hz" -v m="$msgs" 'BEGIN { printf "%.2f", t / hz / m * 1e6 }')"
	done
	put "daemon.cpu_msgs.$1" "$msgs"
}

if [ $connected = 1 ]; then
	pool=$(sed -n 's/.* \([0-9]*\) request buffers of \([0-9]*\) KiB, \([0-9]*\) small slots of \([0-9]*\) bytes.*/\1 \2 \3 \4/p' "$logs/rpmafs.log")
	set -- $pool
	# the registered pool: request buffers and small slots
	put daemon.pool_mib "$(awk -v n="$1" -v k="$2" -v s="$3" -v b="$4" 'BEGIN { printf "%.2f", (n * k + s * b / 1024) / 1024 }')"
	put daemon.small_slots "$3"
	put daemon.slots "$SLOTS"

	# -- the no-op file system: FUSE alone, the same writer
	step "no-op FUSE file system: write rate and latency (the true FUSE floor)"
	line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$noop/f" 64 "${NULL_RATE_N[0]}" 2>>"$logs/writer.log")
	[ -n "$line" ] && put_line "noop.rate.64" "$line" msg_s mib_s count || note "noop.rate.64" "missing (see writer.log)"
	line=$(timeout 300 bench-writer --latency --warmup $WARMUP "$noop/f" 64 "${NULL_LAT_N[0]}" 2>>"$logs/writer.log")
	[ -n "$line" ] && put_line "noop.lat.64" "$line" median_us p99_us mean_us count || note "noop.lat.64" "missing (see writer.log)"

	# -- the null peer: FUSE's own cost
	step "null peer: write rate and latency (FUSE's own cost)"
	wsizes=(64 4096 $MAX)
	for i in 0 1 2; do
		s=${wsizes[$i]}
		c0=$(cpu_snap) p0=$(st null posted)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/null" "$s" "${NULL_RATE_N[$i]}" 2>>"$logs/writer.log")
		[ -n "$line" ] && put_line "null.rate.$s" "$line" msg_s mib_s count || note "null.rate.$s" "missing (see writer.log)"
		[ "$s" = 64 ] && cpu_put null64 null "$c0" "$p0"
		line=$(timeout 300 bench-writer --latency --warmup $WARMUP "$mnt/null" "$s" "${NULL_LAT_N[$i]}" 2>>"$logs/writer.log")
		[ -n "$line" ] && put_line "null.lat.$s" "$line" median_us p99_us mean_us count || note "null.lat.$s" "missing (see writer.log)"
	done

	# -- a real peer: async rate, sync latency
	step "rpmafs -> rpma-recv: async write rate, sync write latency"
	for i in 0 1 2; do
		s=${wsizes[$i]}
		c0=$(cpu_snap) p0=$(st r0 posted) snap=$(link_snap)
		line=$(timeout 300 bench-writer --fsync --warmup $((s > 4096 ? 16 : WARMUP)) "$mnt/r0" "$s" "${FS_RATE_N[$i]}" 2>>"$logs/writer.log")
		if [ -n "$line" ]; then
			put_line "rpmafs.async.$s" "$line" msg_s mib_s count
			link_put "rpmafs.async.$s" "$snap"
		else
			note "rpmafs.async.$s" "missing (see writer.log)"
		fi
		[ "$s" = 64 ] && cpu_put async64 r0 "$c0" "$p0"
		c0=$(cpu_snap) p0=$(st r0 posted)
		line=$(timeout 300 bench-writer --latency --sync --warmup 20 "$mnt/r0" "$s" "${FS_LAT_N[$i]}" 2>>"$logs/writer.log")
		[ -n "$line" ] && put_line "rpmafs.sync.$s" "$line" median_us p99_us mean_us count || note "rpmafs.sync.$s" "missing (see writer.log)"
		[ "$s" = 64 ] && cpu_put sync64 r0 "$c0" "$p0"
	done

	# -- the same async writes with completion = on_error
	c0=$(cpu_snap) p0=$(st e0 posted) snap=$(link_snap)
	line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/e0" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
	if [ -n "$line" ]; then
		put_line "rpmafs.async_on_error.64" "$line" msg_s mib_s count
		link_put "rpmafs.async_on_error.64" "$snap"
	else
		note "rpmafs.async_on_error.64" "missing (see writer.log)"
	fi
	cpu_put async64_on_error e0 "$c0" "$p0"

	# -- throughput with dd bs=1020K (bs=1M is over the message limit: EMSGSIZE)
	step "dd bs=1020K: one writer, then four writers on four peers"
	c0=$(cpu_snap) p0=$(st r0 posted) snap=$(link_snap)
	t0=$(now)
	if timeout 300 dd if=/dev/zero of="$mnt/r0" bs=1020K count=$DD_N conv=fsync 2>"$logs/dd.log"; then
		t1=$(now)
		put rpmafs.dd1020k.mib_s "$(awk -v n=$DD_N -v t="$(minus "$t1" "$t0")" -v m=$MAX 'BEGIN { printf "%.3f", n * m / t / 1048576 }')"
		put rpmafs.dd1020k.count $DD_N
		link_put rpmafs.dd1020k "$snap"
		cpu_put dd1020k r0 "$c0" "$p0"
	else
		note rpmafs.dd1020k "missing: dd failed: $(tail -1 "$logs/dd.log")"
	fi
	t0=$(now) pids=()
	for p in 0 1 2 3; do
		timeout 300 dd if=/dev/zero of="$mnt/r$p" bs=1020K count=$DD4_N conv=fsync 2>"$logs/dd4-$p.log" &
		pids+=($!)
	done
	ok=1
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	t1=$(now)
	if [ $ok = 1 ]; then
		put rpmafs.dd1020k_x4.mib_s "$(awk -v n=$((4 * DD4_N)) -v t="$(minus "$t1" "$t0")" -v m=$MAX 'BEGIN { printf "%.3f", n * m / t / 1048576 }')"
		put rpmafs.dd1020k_x4.count $((4 * DD4_N))
	else
		note rpmafs.dd1020k_x4 "missing: a dd failed (see dd4-*.log)"
	fi

	# -- 64 B async: four writers on four peers at once (reported against one
	# writer); a quarter of the messages each (all of them took ~3 min)
	step "async 64 B: four writers on four peers at once"
	pids=()
	for p in 0 1 2 3; do
		timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/r$p" 64 "$((FS_RATE_N[0] / 4))" \
			>"$work/x4-$p.out" 2>>"$logs/writer.log" &
		pids+=($!)
	done
	ok=1
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	sum=0
	for p in 0 1 2 3; do
		v=$(get "$(cat "$work/x4-$p.out")" msg_s)
		[ -n "$v" ] || ok=0
		sum=$(awk -v a="$sum" -v b="${v:-0}" 'BEGIN { printf "%.1f", a + b }')
	done
	if [ $ok = 1 ]; then
		put rpmafs.async64_x4.msg_s "$sum"
	else
		note rpmafs.async64_x4 "missing: a writer failed (see writer.log)"
	fi

	# -- what a user would do without rpmafs: one nc (a TCP connection) per message
	step "shell loops: echo > spool against echo | nc, $SHELL_N messages each"
	p0=$(st r0 posted)
	t0=$(now)
	for ((i = 0; i < SHELL_N; i++)); do echo "message $i" >"$mnt/r0"; done
	# until rpma-recv has them all (close = wait: each close waited for its ack)
	for ((i = 0; i < 2000; i++)); do
		[ "$(st r0 acked)" = "$(st r0 posted)" ] && break
		nap 0.005
	done
	t1=$(now)
	if [ $(($(st r0 posted) - p0)) = "$SHELL_N" ]; then
		put shell.echo_s "$(minus "$t1" "$t0")"
	else
		note shell.echo "missing: $(($(st r0 posted) - p0)) of $SHELL_N messages posted"
	fi
	put shell.messages "$SHELL_N"
	# what close = wait costs: the same loop with close = return, timed until
	# rpma-recv acknowledged everything too
	p0=$(st c0 posted) a0=$(st c0 acked)
	t0=$(now)
	for ((i = 0; i < SHELL_N; i++)); do echo "message $i" >"$mnt/c0"; done
	t_ret=$(now)
	for ((i = 0; i < 2000; i++)); do
		[ $(($(st c0 acked) - a0)) = "$SHELL_N" ] && break
		nap 0.005
	done
	t1=$(now)
	if [ $(($(st c0 posted) - p0)) = "$SHELL_N" ]; then
		put shell.echo_close_return_s "$(minus "$t_ret" "$t0")"
		put shell.echo_close_return_acked_s "$(minus "$t1" "$t0")"
	else
		note shell.echo_close_return "missing: $(($(st c0 posted) - p0)) of $SHELL_N messages posted"
	fi
	if command -v nc >/dev/null; then
		nc -lk "$LAB_B" 7400 >"$work/nc.out" 2>"$logs/nc-listen.log" </dev/null &
		ncl=$!
		nap 0.5
		t0=$(now)
		nc_ok=1
		for ((i = 0; i < SHELL_N; i++)); do
			echo "message $i" | timeout 10 nc -N -s "$LAB_A" "$LAB_B" 7400 || { nc_ok=0; break; }
		done
		t1=$(now)
		nap 0.2
		got=$(grep -c '^message ' "$work/nc.out")
		stop "$ncl"
		if [ $nc_ok = 1 ] && [ "$got" = "$SHELL_N" ]; then
			put shell.nc_s "$(minus "$t1" "$t0")"
		else
			note shell.nc "missing: the nc loop failed at message $i ($got received)"
		fi
	else
		note shell.nc "missing: nc is not installed (netcat-openbsd)"
	fi

	# -- the receive floor (recv_cpu_per_msg_over_floor): rpma-recv, and
	# bench-rpma's plain receive loop, each on a shared receive queue of 64
	# receives of 4 KiB, both fed by the same bench-rpma sender (64 B, window
	# WINDOW, no rpmafs private data: a plain sender), in the counted passes
	# and the paired rounds below
	rpma-recv --listen "$LAB_B:7302" --max-message 4KiB --slots 64 --format raw \
		>/dev/null 2>"$logs/rpma-recv-plain.log" &
	plain_recv=$!
	bench-rpma recv "$LAB_B" 7303 --max 4KiB --slots 64 --srq >"$logs/floor-recv.log" 2>&1 &
	floor_recv=$!
	wait_for "$logs/rpma-recv-plain.log" "listening on" 20 || note recv_floor "rpma-recv on port 7302 did not start"
	wait_for "$logs/floor-recv.log" "listening on" 20 || note recv_floor "bench-rpma recv --srq did not start"
	# NAME:PORT:PID:LOG of each
	floor_rx=("rpma_recv:7302:$plain_recv:$logs/rpma-recv-plain.log"
		"floor_recv:7303:$floor_recv:$logs/floor-recv.log")
	# ends LOG: one line per connection a receiver's LOG says has ended, its
	# messages (rpma-recv: "connection N PEER closed by peer: M messages, B
	# bytes"; bench-rpma recv: "connection closed after M messages")
	ends() { sed -n 's/^.*connection \([0-9][0-9]* \|closed \).* \([0-9][0-9]*\) messages\(,.*\)\{0,1\}$/\2/p' "$1" 2>/dev/null; }
	# ended LOG N0: once LOG has more than N0 ended connections (30 s at most), the last one's messages
	ended() {
		local i m
		for ((i = 0; i < 300; i++)); do
			mapfile -t m < <(ends "$1")
			[ ${#m[@]} -gt "$2" ] && echo "${m[-1]}" && return 0
			nap 0.1
		done
		return 1
	}

	# -- counted passes: what the daemon does per message, not how long it
	# takes. System calls (strace -f -c on every thread of the daemon, and on
	# r0's rpma-recv) and context switches (voluntary + involuntary, summed
	# over /proc/PID/task/*/status) over COUNT_N async 64 B writes and their
	# fsync. Switches are counted in a pass of their own without strace, whose
	# ptrace stops switch too; neither pass is timed, so the counting does not
	# disturb any timed figure. Peers: null (the floor), t0 (confirm =
	# transport), r0 (confirm = receiver).
	step "counted passes: system calls and context switches per async 64 B message"
	# ctxsw PID: switches of all of PID's threads so far (no fork per thread)
	ctxsw() {
		local f k v s=0
		for f in /proc/$1/task/*/status; do
			while read -r k v; do
				case $k in voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:) s=$((s + v)) ;; esac
			done <"$f"
		done 2>/dev/null
		echo "$s"
	}
	# strace_on, strace_off, strace_calls, per: tools/benchsrc/count.sh
	if command -v strace >/dev/null; then
		for ((r = 1; r <= COUNT_ROUNDS; r++)); do
			for pair in null:null64 t0:async64 r0:acked64; do
				peer=${pair%%:*} name=${pair#*:}
				p0=$(st "$peer" posted) c0=$(ctxsw $fs)
				if timeout 300 bench-writer --fsync "$mnt/$peer" 64 $COUNT_N >/dev/null 2>>"$logs/writer.log"; then
					put "round.$r.count.ctxsw.$name" "$(per $(($(ctxsw $fs) - c0)) $(($(st "$peer" posted) - p0)))"
				else
					note "count.ctxsw.$name" "missing: bench-writer failed (see writer.log)"
				fi
				log=$logs/strace-$name-$r
				rlog=$logs/strace-recv-$name-$r
				recv_traced=0
				if ! strace_on $fs "$log"; then
					note "count.syscalls.$name" "missing: strace did not attach (see ${log##*/}.err)"
					strace_off "$spid"
					continue
				fi
				dspid=$spid
				if [ "$peer" != null ]; then
					strace_on "${recvs[0]}" "$rlog" && recv_traced=1
					rspid=$spid
					[ $recv_traced = 1 ] || strace_off "$rspid"
				fi
				p0=$(st "$peer" posted)
				timeout 600 bench-writer --fsync "$mnt/$peer" 64 $COUNT_N >/dev/null 2>>"$logs/writer.log"
				ok=$?
				msgs=$(($(st "$peer" posted) - p0))
				[ $recv_traced = 1 ] && strace_off "$rspid"
				strace_off "$dspid"
				if [ $ok = 0 ]; then
					put "round.$r.count.syscalls.$name" "$(per "$(strace_calls "$log.c")" $msgs)"
					[ $recv_traced = 1 ] && put "round.$r.count.recv_syscalls.$name" "$(per "$(strace_calls "$rlog.c")" $msgs)"
				else
					note "count.syscalls.$name" "missing: bench-writer failed under strace (see writer.log)"
				fi
			done
			# the receivers: rpma-recv and the plain loop, the same sender,
			# COUNT_N messages each, per message they say they received
			for rx in "${floor_rx[@]}"; do
				IFS=: read -r name port pid rxlog <<<"$rx"
				log=$logs/strace-$name-$r
				if ! strace_on "$pid" "$log"; then
					note "count.syscalls.$name" "missing: strace did not attach (see ${log##*/}.err)"
					strace_off "$spid"
					continue
				fi
				n0=$(ends "$rxlog" | wc -l)
				line=$(timeout 300 bench-rpma send "$LAB_B" "$port" 64 $COUNT_N --window $WINDOW 2>>"$logs/raw-send.log")
				m=$(ended "$rxlog" "$n0")
				strace_off "$spid"
				if [ -n "$line" ] && [ -n "$m" ]; then
					put "round.$r.count.syscalls.$name" "$(per "$(strace_calls "$log.c")" "$m")"
				else
					note "count.syscalls.$name" "missing: bench-rpma send failed or the receiver did not log the connection's end (see raw-send.log, ${rxlog##*/})"
				fi
			done
		done
		put count.messages $COUNT_N
	else
		note count "missing: strace is not installed"
	fi

	# -- the daemon, over everything above
	# -- paired rounds for the three ratio targets: each round measures a
	# figure and its floor back to back, so that the host's noise (seen: the
	# same dd 18-44 MiB/s in four runs in a row) hits both alike; the
	# report takes the median of the rounds' ratios
	bench-rpma recv "$LAB_B" 7301 --max 4KiB --slots 64 >"$logs/raw-recv-rounds.log" 2>&1 &
	rounds_recv=$!
	wait_for "$logs/raw-recv-rounds.log" "listening on" 20 || note rounds "bench-rpma recv did not start"
	# cpu_round KEY PEER TICKS0 POSTED0: the daemon's CPU (all threads) per
	# message posted to PEER since TICKS0, as round.$r.daemon.cpu_us_per_msg.KEY
	cpu_round() {
		local m=$(($(st "$2" posted) - $4)) t=$(($(cpu_ticks) - $3))
		[ "$m" -gt 0 ] && put "round.$r.daemon.cpu_us_per_msg.$1" \
			"$(awk -v t=$t -v hz="$hz" -v m=$m 'BEGIN { printf "%.2f", t / hz / m * 1e6 }')"
	}
	# auth_round: the authenticated peers' pairs of round $r, back to back:
	# async 64 B rate and dd bs=1020K on p0 (no key), a0 (key, mac) and x0
	# (key, encrypt), each to its own rpma-recv. AUTH_PASSES passes, the
	# order turned at each pass and each round (A B, then B A), so that a
	# drift of the host does not always favour the same peer; a round's
	# figure is the mean of its passes (every pass measured, or none)
	auth_round() {
		local pass i pr peer name line t0 t1 p0 v order=()
		local -A rate dd
		[ ${#auth_up[@]} -gt 0 ] || return 0
		for pr in "${auth_up[@]}"; do rate[$pr]=0 dd[$pr]=0; done
		for ((pass = 1; pass <= AUTH_PASSES; pass++)); do
			order=("${auth_up[@]}")
			if [ $(((r + pass) % 2)) = 1 ]; then
				order=()
				for ((i = ${#auth_up[@]} - 1; i >= 0; i--)); do order+=("${auth_up[$i]}"); done
			fi
			for pr in "${order[@]}"; do
				peer=${pr%%:*} name=${pr#*:}
				line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/$peer" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
				v=$(get "$line" msg_s)
				if [ -n "$v" ]; then
					put "round.$r.auth.$name.async.64.pass$pass.msg_s" "$v"
					[ "${rate[$pr]}" = x ] ||
						rate[$pr]=$(awk -v a="${rate[$pr]}" -v b="$v" 'BEGIN { print a + b }')
				else
					rate[$pr]=x
					note "round.$r.auth.$name.async.64" "missing: bench-writer onto $peer failed in pass $pass (see writer.log; $peer last_error: $(st "$peer" last_error))"
				fi
			done
			for pr in "${order[@]}"; do
				peer=${pr%%:*} name=${pr#*:}
				p0=$(st "$peer" posted) t0=$(now)
				if timeout 300 dd if=/dev/zero of="$mnt/$peer" bs=1020K count=$DD_N conv=fsync \
					2>>"$logs/dd-auth.log" && t1=$(now) && [ $(($(st "$peer" posted) - p0)) = "$DD_N" ]; then
					v=$(awk -v n=$DD_N -v t="$(minus "$t1" "$t0")" -v m=$MAX 'BEGIN { printf "%.3f", n * m / t / 1048576 }')
					put "round.$r.auth.$name.dd1020k.pass$pass.mib_s" "$v"
					[ "${dd[$pr]}" = x ] ||
						dd[$pr]=$(awk -v a="${dd[$pr]}" -v b="$v" 'BEGIN { print a + b }')
				else
					dd[$pr]=x
					note "round.$r.auth.$name.dd1020k" "missing: dd onto $peer failed or did not send one message per block in pass $pass (see dd-auth.log; $peer last_error: $(st "$peer" last_error))"
				fi
			done
		done
		for pr in "${auth_up[@]}"; do
			name=${pr#*:}
			[ "${rate[$pr]}" != x ] && put "round.$r.auth.$name.async.64.msg_s" \
				"$(awk -v s="${rate[$pr]}" -v n=$AUTH_PASSES 'BEGIN { printf "%.1f", s / n }')"
			[ "${dd[$pr]}" != x ] && put "round.$r.auth.$name.dd1020k.mib_s" \
				"$(awk -v s="${dd[$pr]}" -v n=$AUTH_PASSES 'BEGIN { printf "%.3f", s / n }')"
		done
		return 0
	}
	for ((r = 1; r <= ROUNDS; r++)); do
		step "paired round $r of $ROUNDS: ib_send_bw / dd, null / async rate, null + raw / sync latency, with and without a key, null + ib_send_lat / acked sync latency"
		PT_PREFIX="round.$r." perftest bw $MIB "${PT_BW_N[2]}"
		t0=$(now)
		if timeout 300 dd if=/dev/zero of="$mnt/r0" bs=1020K count=$DD_N conv=fsync \
			2>>"$logs/dd-rounds.log"; then
			t1=$(now)
			put "round.$r.rpmafs.dd1020k.mib_s" "$(awk -v n=$DD_N -v t="$(minus "$t1" "$t0")" -v m=$MAX 'BEGIN { printf "%.3f", n * m / t / 1048576 }')"
		fi
		# cp of a 1 MiB file onto the file-framed f0, until every message is confirmed
		[ -f "$work/1m" ] || head -c $MIB /dev/urandom >"$work/1m"
		# cp_n DEST: DD_N cp's of the 1 MiB file onto DEST, a process each
		cp_n() {
			local i
			for ((i = 0; i < DD_N; i++)); do
				cp "$work/1m" "$1" 2>>"$logs/cp-file.log" || return 1
			done
		}
		p0=$(st f0 posted) t0=$(now) cp_ok=1
		cp_n "$mnt/f0" || cp_ok=0
		for ((i = 0; i < 6000; i++)); do
			[ "$(st f0 completed)" = "$(st f0 posted)" ] && break
			nap 0.005
		done
		t1=$(now)
		if [ $cp_ok = 1 ] && [ $(($(st f0 posted) - p0)) = "$DD_N" ]; then
			put "round.$r.rpmafs.cp1m_file.mib_s" "$(awk -v n=$DD_N -v t="$(minus "$t1" "$t0")" 'BEGIN { printf "%.3f", n / t }')"
		else
			note "round.$r.rpmafs.cp1m_file" "missing: cp onto f0 failed or did not send one message per file (see cp-file.log)"
		fi
		# the two parts of that figure: the same cp loop onto a local file
		# (tmpfs; a process per file, nothing sent), and the same messages
		# without a process per file (open, one 1 MiB write, close = wait)
		t0=$(now) cp_ok=1
		cp_n "$work/1m.copy" || cp_ok=0
		t1=$(now)
		[ $cp_ok = 1 ] &&
			put "round.$r.local.cp1m.mib_s" "$(awk -v n=$DD_N -v t="$(minus "$t1" "$t0")" 'BEGIN { printf "%.3f", n / t }')"
		p0=$(st f0 posted)
		line=$(timeout 300 bench-writer --per-file "$mnt/f0" $MIB $DD_N 2>>"$logs/writer.log")
		if [ -n "$line" ] && [ $(($(st f0 posted) - p0)) = "$DD_N" ]; then
			put_line "round.$r.rpmafs.file1m_inproc" "$line" mib_s
		else
			note "round.$r.rpmafs.file1m_inproc" "missing: bench-writer --per-file onto f0 failed or did not send one message per file (see writer.log)"
		fi
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$noop/f" 64 "${NULL_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.noop.rate.64" "$line" msg_s
		c0=$(cpu_ticks) p0=$(st null posted)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/null" 64 "${NULL_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.null.rate.64" "$line" msg_s
		[ -n "$line" ] && cpu_round null64 null "$c0" "$p0"
		p0=$(st r0 posted) b0=$(st r0 post_calls)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/r0" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.rpmafs.async.64" "$line" msg_s
		b1=$(st r0 post_calls)
		[ -n "$b1" ] && [ "$b1" -gt "$b0" ] &&
			put "round.$r.rpmafs.async.64.batch" "$(awk -v p=$(($(st r0 posted) - p0)) -v b=$((b1 - b0)) 'BEGIN { printf "%.2f", p / b }')"
		line=$(timeout 300 bench-writer --latency --warmup $WARMUP "$mnt/null" 64 "${NULL_LAT_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.null.lat.64" "$line" median_us
		line=$(timeout 120 bench-rpma send "$LAB_B" 7301 64 "${RAW_LAT_N[0]}" --latency --warmup 10 2>>"$logs/raw-send.log")
		put_line "round.$r.raw.lat.64" "$line" median_us
		line=$(timeout 300 bench-writer --latency --sync --warmup 20 "$mnt/r0" 64 "${FS_LAT_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.rpmafs.sync.64" "$line" median_us
		# receiver confirmation (r0) against transport confirmation (t0), same receiver
		c0=$(cpu_ticks) p0=$(st t0 posted)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/t0" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.transport.async.64" "$line" msg_s
		[ -n "$line" ] && cpu_round transport64 t0 "$c0" "$p0"
		snap=$(link_snap) c0=$(cpu_ticks) p0=$(st r0 posted)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/r0" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.acked.async.64" "$line" msg_s
		[ -n "$line" ] && cpu_round acked64 r0 "$c0" "$p0"
		link_put "round.$r.acked.async.64" "$snap"
		# the same into rpma-recv --output FILE (its state file on)
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$mnt/o0" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.output.async.64" "$line" msg_s
		auth_round
		# the raw client's CPU per message (the floor of cpu_async64_over_floor,
		# with the null peer's), and the receivers': the same bench-rpma
		# sender to rpma-recv and to the plain loop, each receiver's CPU over
		# the messages it says it received (warm-up included)
		for rx in "${floor_rx[@]}"; do
			IFS=: read -r name port pid rxlog <<<"$rx"
			n0=$(ends "$rxlog" | wc -l) u0=$(cpu_us "$pid")
			line=$(timeout 120 bench-rpma send "$LAB_B" "$port" 64 "${RAW_RATE_N[0]}" \
				--window "$WINDOW" --warmup $WARMUP 2>>"$logs/raw-send.log")
			m=$(ended "$rxlog" "$n0")
			if [ -n "$line" ] && [ -n "$m" ]; then
				put "round.$r.$name.cpu_us_per_msg" "$(us_per "$u0" "$(cpu_us "$pid")" "$m")"
				put "round.$r.$name.messages" "$m"
				put_line "round.$r.raw.to_$name" "$line" msg_s cpu_us_per_msg
			else
				note "round.$r.$name" "missing: bench-rpma send failed or the receiver did not log the connection's end (see raw-send.log, ${rxlog##*/})"
			fi
		done
		# the floor of acked_sync_latency_over_rtt_floor with this round's
		# null.lat.64: an RDMA round trip (a SEND and the acknowledgement's
		# SEND back), from ib_send_lat -R -e 64 B just before the figure
		PT_PREFIX="round.$r." perftest lat 64 "${PT_LAT_N[0]}"
		line=$(timeout 300 bench-writer --latency --sync --warmup 20 "$mnt/t0" 64 "${FS_LAT_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.transport.sync.64" "$line" median_us
		line=$(timeout 300 bench-writer --latency --warmup 20 "$noopsend/f" 64 "${FS_LAT_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.noopsend.lat.64" "$line" median_us
		snap=$(link_snap)
		line=$(timeout 300 bench-writer --latency --sync --warmup 20 "$mnt/r0" 64 "${FS_LAT_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.acked.sync.64" "$line" median_us
		link_put "round.$r.acked.sync.64" "$snap"
	done
	stop "$rounds_recv" "$plain_recv" "$floor_recv"

	# the authenticated peers: what their receivers say they proved (the
	# accept's log line names the key and the mode), and their senders'
	# failures and bad acknowledgements over every round
	for pr in "${auth_up[@]}"; do
		peer=${pr%%:*} name=${pr#*:}
		put "auth.$name.messages" "$(st "$peer" acked)"
		put "auth.$name.failed" "$(st "$peer" failed)"
		put "auth.$name.bad_acks" "$(st "$peer" bad_acks)"
		[ "$name" = plain ] && continue
		if grep -q "key bench, $name" "$logs/rpma-recv-auth-$name.log"; then
			put "auth.$name.proved" 1
		else
			put "auth.$name.proved" 0
			note "auth.$name" "rpma-recv on the $name peer's port did not log a connection with key bench in $name mode (see rpma-recv-auth-$name.log)"
		fi
	done

	step "daemon: peak RSS, payload copies"
	put daemon.hwm_mib "$(awk '/^VmHWM/ { printf "%.2f", $2 / 1024 }' "/proc/$fs/status")"
	put daemon.rss_mib "$(awk '/^VmRSS/ { printf "%.2f", $2 / 1024 }' "/proc/$fs/status")"
	copies=0 msgs=0 failed=0 small=0
	for p in null r0 r1 r2 r3 e0; do
		copies=$((copies + $(st $p payload_copies)))
		small=$((small + $(st $p small_copies)))
		msgs=$((msgs + $(st $p posted)))
		failed=$((failed + $(st $p failed)))
	done
	put daemon.payload_copies "$copies"
	# of them, small payloads copied into small slots (by design, design.md §4.5)
	put daemon.small_copies "$small"
	put daemon.messages "$msgs"
	# file framing copies each message once into the pool, by design (design.md §4.6)
	put daemon.file_framing_copies "$(st f0 payload_copies)"
	put daemon.file_framing_messages "$(st f0 posted)"
	put daemon.failed "$failed"
	put daemon.cpu_s_total "$(awk -v t="$(cpu_ticks)" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')"
	cp "$mnt/r0.status" "$logs/r0.status"
else
	note rpmafs "missing: the mount did not connect its five peers (see rpmafs.log)"
fi
fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null
for ((i = 0; i < 100; i++)); do kill -0 $fs 2>/dev/null || break; nap 0.1; done

# FUSE requests per `echo > f` on the no-op file system (it counts them by
# opcode and prints them at exit); rpmafs's own are in docs/bench/results.md
step "no-op FUSE file system: requests per echo"
for ((i = 0; i < 100; i++)); do echo "message $i" >"$noop/f"; done
fusermount3 -u "$noop" 2>/dev/null || fusermount3 -uz "$noop" 2>/dev/null
for ((i = 0; i < 100; i++)); do kill -0 $noop_fs 2>/dev/null || break; nap 0.1; done
stop "$noop_fs"
fusermount3 -u "$noopsend" 2>/dev/null || fusermount3 -uz "$noopsend" 2>/dev/null
for ((i = 0; i < 100; i++)); do kill -0 $noopsend_fs 2>/dev/null || break; nap 0.1; done
stop "$noopsend_fs"
put noopsend.sends_failed "$(sed -n 's/^bench-noop-fs: sends failed //p' "$logs/noopsend-fs.log")"
while read -r _ _ op n; do
	put "noop.requests.$op" "$n"
done < <(grep '^bench-noop-fs: requests ' "$logs/noop-fs.log")
stop $fs
stop "${recvs[@]}"

# ---------------------------------------------------------------------------
# 4. an ordinary user's default mount against root's, same run: nobody with
# Debian's 8 MiB RLIMIT_MEMLOCK and root, each mounting a config with [rpmafs]
# left at its defaults, one peer each on one rpma-recv (512 receives per
# connection: credits for 511). The async 64 B rate of each (paired rounds),
# and how many 64 B messages each holds in flight at once: the receiver is
# stopped (SIGSTOP), one writer writes small_slots + slots messages (every
# small slot and every spare request buffer), and in_flight + unacked is
# read once all are posted; then the receiver goes on and all must arrive.
step "an ordinary user's default mount (8 MiB memlock) against root's: async 64 B rate, messages in flight"
NOBODY=65534
# a command, as nobody (an array: timeout runs programs, not shell functions)
nobody=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --)
as_nobody() { "${nobody[@]}" "$@"; }
# ust MNT KEY: a figure of MNT's peer "a" (read as nobody for nobody's mount)
ust() {
	local k v
	while IFS=': ' read -r k v; do
		[ "$k" = "$2" ] && echo "$v" && return 0
	done < <(if [ "$1" = "$umnt" ]; then as_nobody cat "$1/a.status"; else cat "$1/a.status"; fi)
	return 1
} 2>/dev/null
chmod 755 "$work"
rmnt=$work/rootdef umnt=$work/userdef
mkdir "$rmnt" "$umnt" "$work/userhome"
chown $NOBODY:$NOBODY "$umnt" "$work/userhome"
printf '[a]\naddress = %s\nport = 7210\n' "$LAB_B" >"$work/default.ini"
chmod 644 "$work/default.ini"
rpma-recv --listen "$LAB_B:7210" --no-srq --slots 512 --max-message 4KiB --format raw \
	>/dev/null 2>"$logs/rpma-recv-default.log" &
drecv=$!
rfs='' ufs=''
if wait_for "$logs/rpma-recv-default.log" "listening on" 20; then
	rpmafs -f --config "$work/default.ini" "$rmnt" 2>"$logs/rpmafs-rootdef.log" &
	rfs=$!
	(ulimit -l 8192 && cd "$work/userhome" && exec env HOME="$work/userhome" USER=nobody \
		setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		"$top/build/fs/rpmafs" -f --config "$work/default.ini" "$umnt") \
		2>"$logs/rpmafs-userdef.log" &
	ufs=$!
	up=0
	for ((i = 0; i < 600; i++)); do
		[ "$(ust "$rmnt" state)" = connected ] && [ "$(ust "$umnt" state)" = connected ] && up=1 && break
		kill -0 $rfs 2>/dev/null && kill -0 $ufs 2>/dev/null || break
		nap 0.05
	done
else
	note default "missing: rpma-recv for the default mounts did not start (see rpma-recv-default.log)"
	up=0
fi
if [ $up = 1 ]; then
	for who in root user; do
		m=$rmnt
		[ $who = user ] && m=$umnt
		put "$who.default.small_slots" "$(ust "$m" small_slots)"
		line=$(sed -n 's/.* \([0-9]*\) request buffers of \([0-9]*\) KiB, \([0-9]*\) small slots of \([0-9]*\) bytes.*/\1 \2 \3 \4/p' "$logs/rpmafs-${who}def.log")
		set -- $line
		[ $# = 4 ] && put "$who.default.pool_kib" "$(($1 * $2 + $3 * $4 / 1024))" &&
			put "$who.default.request_buffers" "$1"
	done
	# the rates: root's mount, then nobody's, back to back in each round
	for ((r = 1; r <= ROUNDS; r++)); do
		line=$(timeout 300 bench-writer --fsync --warmup $WARMUP "$rmnt/a" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.rootdef.async.64" "$line" msg_s
		line=$(timeout 300 "${nobody[@]}" bench-writer --fsync --warmup $WARMUP "$umnt/a" 64 "${FS_RATE_N[0]}" 2>>"$logs/writer.log")
		put_line "round.$r.userdef.async.64" "$line" msg_s
	done
	# in flight at once: every small slot and every spare request buffer
	for who in user root; do
		m=$rmnt run=()
		[ $who = user ] && m=$umnt run=("${nobody[@]}")
		slots=$(sed -n 's/.* \([0-9]*\) request buffers of .*/\1/p' "$logs/rpmafs-${who}def.log")
		n=$(($(ust "$m" small_slots) + slots - 4)) # the workers hold 4 buffers
		p0=$(ust "$m" posted) a0=$(ust "$m" acked) r0=$(ust "$m" resent)
		kill -STOP $drecv
		timeout 300 "${run[@]}" bench-writer --fsync "$m/a" 64 "$n" >/dev/null 2>>"$logs/writer.log" &
		wpid=$!
		held=''
		# until all are posted (a safety net of 60 s, or the writer gone)
		t_end=$((SECONDS + 60))
		while [ $SECONDS -lt $t_end ] && kill -0 $wpid 2>/dev/null; do
			if [ $(($(ust "$m" posted) - p0)) -ge "$n" ]; then
				held=$(($(ust "$m" in_flight) + $(ust "$m" unacked)))
				break
			fi
			nap 0.005
		done
		kill -CONT $drecv
		wait $wpid
		wrc=$?
		t_end=$((SECONDS + 60))
		while [ $SECONDS -lt $t_end ]; do
			[ $(($(ust "$m" acked) - a0)) -ge "$n" ] && break
			nap 0.05
		done
		if [ -n "$held" ] && [ $wrc = 0 ] && [ $(($(ust "$m" acked) - a0)) = "$n" ]; then
			put "$who.default.inflight_64b" "$held"
			put "$who.default.inflight_written" "$n"
			put "$who.default.inflight_resent" $(($(ust "$m" resent) - r0))
		else
			note "$who.default.inflight_64b" "missing: $n messages written (writer status $wrc), $held seen in flight, $(($(ust "$m" acked) - a0)) acknowledged"
		fi
	done
	put user.default.payload_copies "$(ust "$umnt" payload_copies)"
	put user.default.small_copies "$(ust "$umnt" small_copies)"
	put user.default.messages "$(ust "$umnt" posted)"
	put user.default.failed "$(ust "$umnt" failed)"
else
	note default "missing: the default mounts did not both connect (see rpmafs-rootdef.log, rpmafs-userdef.log)"
fi
as_nobody fusermount3 -u "$umnt" 2>/dev/null || umount -l "$umnt" 2>/dev/null
fusermount3 -u "$rmnt" 2>/dev/null || fusermount3 -uz "$rmnt" 2>/dev/null
for ((i = 0; i < 100; i++)); do kill -0 $rfs $ufs 2>/dev/null || break; nap 0.1; done
[ -n "$rfs" ] && stop $rfs
[ -n "$ufs" ] && stop $ufs
stop $drecv

# ---------------------------------------------------------------------------
# 3. many peers in one mount, one rpma-recv (tools/benchsrc/peers.sh): mount
# until every peer is connected, RSS, descriptors, one message through each
peers_n=(64)
[ "$mode" = full ] && peers_n=(64 256 1000)
for k in "${peers_n[@]}"; do
	step "$k peers in one mount: until all are connected, RSS, fds, one message each"
	timeout -k 10 900 bash "$top/tools/benchsrc/peers.sh" "$k" "$fig" "$logs" || :
done

# ---------------------------------------------------------------------------
# the inbox (tools/benchsrc/inbox.sh): receive rate against rpma-recv to
# /dev/null, CPU per message against rpma-recv's and a no-op FUSE read's,
# ping-pong between two mounts against ib_send_lat and against the same
# shell loops over two FIFOs
step "inbox: receive rate and CPU against rpma-recv, ping-pong between two mounts"
timeout -k 10 900 bash "$top/tools/benchsrc/inbox.sh" "$mode" "$fig" "$logs" || :

# ---------------------------------------------------------------------------
# 6. fan-in: K plain librpma senders (tests/lab/recv/fan-in, one process) to
# one rpma-recv, on its shared receive queue and with --no-srq (4 MiB of
# receives per connection: up to 100 connections, ~460 fill the VM)

# fanin MODE K: one rpma-recv, K connections that then send FANIN_MSGS each
fanin() {
	local mode=$1 k=$2 port=$((7600 + RANDOM % 300)) opt=() r f key log i ctl rnr0
	[ "$mode" = nosrq ] && opt=(--no-srq)
	key=fanin.$mode.$k log=$logs/fanin-$mode-$k
	rpma-recv --listen "$LAB_A:$port" "${opt[@]}" --max-connections $((k + 16)) --format len \
		>/dev/null 2>"$log.recv" &
	r=$!
	if ! wait_for "$log.recv" "listening on" 20; then
		note "$key" "missing: rpma-recv did not start (see $log.recv)"
		stop $r
		return
	fi
	rm -f "$work/fanin.ctl"
	mkfifo "$work/fanin.ctl"
	fan-in --connect "$LAB_A:$port" --conns "$k" --count $FANIN_MSGS --sizes 64 --window 4 \
		--wait-stdin <"$work/fanin.ctl" 2>"$log.send" &
	f=$!
	exec {ctl}>"$work/fanin.ctl"
	if wait_for "$log.send" "fan-in: $k connected" $((60 + k / 10)); then
		for ((i = 0; i < 300; i++)); do
			[ "$(grep -c ' accepted (' "$log.recv")" -ge "$k" ] && break
			nap 0.1
		done
		put "$key.connect_s" "$(sed -n 's/.* connected in \([0-9.]*\) s/\1/p' "$log.send")"
		put "$key.rss_idle_mib" "$(awk '/^VmRSS/ { printf "%.2f", $2 / 1024 }' "/proc/$r/status")"
		# the senders are on LAB_B's device: RNR NAKs they met (no receive posted)
		rnr0=$(counter "$LAB_DEV_B" rcvd_rnr_err)
		echo go >&"$ctl"
		if wait_for "$log.send" "fan-in: done" 300; then
			put "$key.rnr_naks" $(($(counter "$LAB_DEV_B" rcvd_rnr_err) - rnr0))
			put "$key.msg_s" "$(sed -n 's/.* completed in .* (\([0-9]*\) msg\/s).*/\1/p' "$log.send")"
			put "$key.rss_mib" "$(awk '/^VmRSS/ { printf "%.2f", $2 / 1024 }' "/proc/$r/status")"
			put "$key.hwm_mib" "$(awk '/^VmHWM/ { printf "%.2f", $2 / 1024 }' "/proc/$r/status")"
			put "$key.messages" $((k * FANIN_MSGS))
		else
			note "$key" "missing: sending failed ($(tail -1 "$log.send"))"
		fi
	else
		note "$key" "missing: $k connections not established ($(tail -1 "$log.send"))"
	fi
	echo bye >&"$ctl" 2>/dev/null
	exec {ctl}>&-
	for ((i = 0; i < 300; i++)); do kill -0 $f 2>/dev/null || break; nap 0.1; done
	stop $f $r
}

if command -v fan-in >/dev/null; then
	ulimit -n 65536
	for k in "${FANIN_CONNS[@]}"; do
		step "fan-in: $k plain librpma senders to one rpma-recv (shared receive queue)"
		fanin srq "$k"
		if [ "$k" -le 100 ]; then
			step "fan-in: $k plain librpma senders to one rpma-recv --no-srq"
			fanin nosrq "$k"
		fi
	done
else
	note fanin "missing: tests/lab/recv/fan-in is not built (-Dtests=disabled?)"
fi

put meta.lab_load_end "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
put meta.lab_seconds "$(minus "$(now)" "$t_start")"
step "done"
rm -rf "$work"
exit 0
