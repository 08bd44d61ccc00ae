#!/bin/bash
# shellcheck disable=SC2016 # single-quoted commands expand in their own shell
# host-mode.sh RDMA_LAB LAB_CONN -- tools/rdma-lab's host mode, for real
#
# No machine at hand can load rdma_rxe, except the lab VM itself. There,
# with the VM's own lab network taken down, `rdma-lab run` takes host mode
# (LAB_MODE=host) and builds the network under its host names. Checked:
#   - while the VM's network is up, host mode refuses (125, "in use");
#   - a real connection over the host-mode link (lab-conn, which also
#     checks the packet counters of both rxe devices), with the host lock
#     held while the command runs;
#   - a failing command's status comes back; a run started while the lock
#     is held waits for it; --timeout gives 124; SIGTERM to rdma-lab stops
#     the command too (143);
#   - after every run the interfaces, rxe devices and policy rules are gone
#     and the sysctls lab_net_up changes have their old values again.
# At the end (and on failure) the VM's lab network is put back for the
# tests that come after: meson runs this one alone (is_parallel: false).
# Only in the VM: on a real host, taking "the VM's network" down would be
# someone else's business.
set -euo pipefail

if [ "${LAB_MODE:-}" != vm ]; then
	echo "skip: LAB_MODE is '${LAB_MODE:-}', not vm: run it inside the lab VM (tools/rdma-lab)"
	exit 77
fi
LAB=$1
LAB_CONN=$2
HOST_LOCK=/run/rdma-lab-host.lock
SYSCTLS=(/proc/sys/net/ipv4/conf/{all,default}/{rp_filter,accept_local})

WORK=$(mktemp -d "${TMPDIR:-/tmp}/host-mode.XXXXXX")
HOLDER=
restore() {
	local rc=$?
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null
	# whatever state a failure left: host names gone, the VM's lab back
	"$LAB" __net down host
	"$LAB" __net down vm
	"$LAB" __net up vm || { echo "FAIL: cannot put the VM's lab network back" >&2; rc=1; }
	rm -rf "$WORK"
	exit $rc
}
trap restore EXIT

fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/*.log; do
		[ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2
	done
	# again after the logs: meson keeps only the last 100 lines of a long one
	echo "FAIL: $*" >&2
	exit 1
}

# the host's network state that host mode must leave as it found it
net_state() {
	local f
	for f in "${SYSCTLS[@]}"; do
		echo "$f=$(cat "$f")"
	done
	ip rule show
	ip -o link show | awk '{ print $2 }'
	ip -o addr show | awk '{ print $2, $4 }'
	rdma link show
}

# lab RUN-ARGS... -- a nested run; its output in $WORK/run.log, status in RC,
# wall time in SECS
lab() {
	local t0=$EPOCHREALTIME
	RC=0
	"$LAB" run "$@" >"$WORK/run.log" 2>&1 || RC=$?
	SECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	sed 's/^/  | /' "$WORK/run.log"
}

# wait_for FILE -- until FILE exists; 300 s is a safety net against a
# hang, far above anything plausible, not a guess at how long it takes
wait_for() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# after a run: as before it, and no empty results directory left in /tmp
check_restored() {
	net_state >"$WORK/after"
	diff -u "$WORK/before" "$WORK/after" >"$WORK/state.log" ||
		fail "$1: the host's network is not as before the run"
	if compgen -G "/tmp/rdma-lab-out.*" >/dev/null; then
		fail "$1: left $(echo /tmp/rdma-lab-out.*)"
	fi
}

# 1. the VM's lab network holds the addresses: refused before any change
lab -- true
echo "refused: status $RC in $SECS s"
[ "$RC" = 125 ] || fail "host mode with the addresses in use: status $RC, not 125"
grep -q "already in use" "$WORK/run.log" || fail "no 'already in use' message"

# 2. take it down; make the sysctls differ from what lab_net_up sets, and
# from each other, so a value put back in the wrong place shows
"$LAB" __net down vm
echo 2 >/proc/sys/net/ipv4/conf/all/rp_filter
echo 1 >/proc/sys/net/ipv4/conf/default/rp_filter
echo 0 >/proc/sys/net/ipv4/conf/all/accept_local
echo 0 >/proc/sys/net/ipv4/conf/default/accept_local
net_state >"$WORK/before"
grep -q '192\.168\.7[78]\.' "$WORK/before" && fail "the VM's lab addresses are still there"

# 3. a real connection in host mode; the lock is held meanwhile (CMD does
# not inherit the descriptor, so a new flock on the file must fail)
lab --out "$WORK/out" -- bash -c '
	set -e
	[ "$LAB_MODE" = host ] || { echo "LAB_MODE=$LAB_MODE"; exit 10; }
	[ "$LAB_DEV_A $LAB_DEV_B $LAB_NETDEV_A" = "rxe_rlab0 rxe_rlab1 rlab0" ] || exit 11
	[ "$(cat /proc/sys/net/ipv4/conf/all/rp_filter)" = 0 ] || exit 12
	# SIGINT not ignored (bash ignores it in background jobs; timeout resets it)
	ign=$(awk "/^SigIgn:/ { print \$2 }" /proc/$$/status)
	(( (16#$ign & 2) == 0 )) || { echo "SIGINT ignored in the command"; exit 15; }
	flock -n "$1" true && { echo "the host lock is free"; exit 13; }
	"$0" >"$LAB_OUT/conn.log" 2>&1 || { cat "$LAB_OUT/conn.log"; exit 14; }
' "$LAB_CONN" "$HOST_LOCK"
echo "connection: status $RC in $SECS s"
[ "$RC" = 0 ] || fail "host-mode run with lab-conn: status $RC"
grep -q "rxe_rlab0 sent [1-9][0-9]* packets, rxe_rlab1 received" "$WORK/out/conn.log" ||
	fail "lab-conn did not report traffic between rxe_rlab0 and rxe_rlab1"
check_restored "after a run that passed"

# 4. a failing command, started while someone else holds the lock: it
# waits, runs once the lock is let go (it checks), and its status comes
# back. The holder keeps the lock until rdma-lab says it is waiting: under
# a loaded TCG, rdma-lab takes seconds to get there.
flock "$HOST_LOCK" sh -c ': >"$1/held"; until [ -e "$1/release" ]; do sleep 0.1; done' \
	sh "$WORK" &
HOLDER=$!
wait_for "$WORK/held" || fail "the lock holder did not get the lock"
t0=$EPOCHREALTIME
RC=0
"$LAB" run -- sh -c '[ -e "$1/release" ] || exit 9; exit 3' sh "$WORK" >"$WORK/run.log" 2>&1 &
lpid=$!
until grep -q "waiting for another host run" "$WORK/run.log"; do
	kill -0 "$lpid" 2>/dev/null || break
	sleep 0.1
done
: >"$WORK/release"
wait "$HOLDER"
HOLDER=
wait "$lpid" || RC=$?
SECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
sed 's/^/  | /' "$WORK/run.log"
echo "failing command behind the lock: status $RC in $SECS s"
grep -q "waiting for another host run" "$WORK/run.log" || fail "it did not wait for the lock"
[ "$RC" != 9 ] || fail "the command ran while the lock was held"
[ "$RC" = 3 ] || fail "'exit 3' in host mode: status $RC"
check_restored "after a failing run"

# 5. --timeout
lab --timeout 2 -- sleep 30
echo "timeout: status $RC in $SECS s"
[ "$RC" = 124 ] || fail "--timeout 2 -- sleep 30 in host mode: status $RC, not 124"
check_restored "after a timeout"

# 6. rdma-lab itself stopped (SIGTERM: a timeout(1) around it, a CI job
# cancelled) while the command runs: the command is stopped too, before
# the network it uses goes, and the status says how
t0=$EPOCHREALTIME
RC=0
"$LAB" run -- sh -c 'echo $$ >"$1/cmd.pid"; exec sleep 60' sh "$WORK" >"$WORK/run.log" 2>&1 &
lpid=$!
wait_for "$WORK/cmd.pid" || fail "the command did not start"
kill -TERM "$lpid"
wait "$lpid" || RC=$?
SECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
sed 's/^/  | /' "$WORK/run.log"
echo "SIGTERM to rdma-lab: status $RC in $SECS s"
cpid=$(cat "$WORK/cmd.pid")
if kill -0 "$cpid" 2>/dev/null; then
	kill -9 "$cpid"
	fail "the command outlived rdma-lab"
fi
[ "$RC" = 143 ] || fail "SIGTERM to rdma-lab: status $RC, not 143"
check_restored "after SIGTERM"

echo "PASS: host mode: refuses when in use, connects, status, lock, timeout, SIGTERM, cleans up"
