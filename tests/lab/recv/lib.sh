# shellcheck shell=bash
# lib.sh -- shared by the rpma-recv lab tests: sourced, not run
#
# Needs LAB_A (an address of an RDMA device; the lab sets it) and RPMA_RECV,
# SEND_SEQ, SEND_SEQ_LIBRPMA (may be empty), CHECK_SEQ (meson sets them).

set -u

if [ -z "${LAB_A:-}" ]; then
	echo "skip: LAB_A is not set: run the lab tests inside the lab (tools/rdma-lab)"
	exit 77
fi
: "${RPMA_RECV:?}" "${SEND_SEQ:?}" "${CHECK_SEQ:?}"
SEND_SEQ_LIBRPMA=${SEND_SEQ_LIBRPMA:-}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rpma-recv-test.XXXXXX")
PIDS=()
PORT=$((7300 + RANDOM % 1000))
RECV_PID=

cleanup() {
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	# RECV_TEST_KEEP=DIR keeps the logs for a look afterwards
	if [ -n "${RECV_TEST_KEEP:-}" ]; then
		mkdir -p "$RECV_TEST_KEEP/${0##*/}" && cp "$WORK"/*.log "$RECV_TEST_KEEP/${0##*/}/"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/*.log; do
		[ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2
	done
	# again after the logs: meson keeps only the last 100 lines of a long one
	echo "FAIL: $*" >&2
	exit 1
}

# How long a wait for an event (a log line, an exit) may take before the
# test gives up: a safety net that turns a hang into a failure, not a
# measure -- each wait ends as soon as its event is there. Far above
# anything plausible on a loaded 2-core TCG host, below the meson timeout.
SAFETY_S=300

# wait_for FILE PATTERN -- until an extended regex matches in FILE
wait_for() {
	local i
	for ((i = 0; i < SAFETY_S * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# start_recv ARGS... -- rpma-recv on a fresh port; stderr in recv.log,
# stdout to $RECV_STDOUT (default /dev/null); sets RECV_PID
start_recv() {
	PORT=$((PORT + 1))
	: >"$WORK/recv.log"
	"$RPMA_RECV" --listen "$LAB_A:$PORT" "$@" >"${RECV_STDOUT:-/dev/null}" \
		2>"$WORK/recv.log" &
	RECV_PID=$!
	PIDS+=("$RECV_PID")
	wait_for "$WORK/recv.log" "listening on" || fail "rpma-recv did not start"
}

# wait_size FILE BYTES -- until FILE holds at least BYTES bytes
wait_size() {
	local i
	for ((i = 0; i < SAFETY_S * 10; i++)); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID -- the process's exit status; killed (and 124) if it does
# not exit within the safety net
wait_exit() {
	local i
	for ((i = 0; i < SAFETY_S * 10; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			return $?
		fi
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 124
}

# send ARGS... -- send-seq to the running rpma-recv
send() {
	"$SEND_SEQ" --connect "$LAB_A:$PORT" "$@"
}

# send_bg ARGS... -- send-seq in the background, its own pid in SEND_PID (not
# a subshell's: a signal sent to SEND_PID reaches send-seq itself)
send_bg() {
	"$SEND_SEQ" --connect "$LAB_A:$PORT" "$@" &
	SEND_PID=$!
	PIDS+=("$SEND_PID")
}

# cpu_ticks PID -- utime + stime from /proc/PID/stat
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

now() {
	date +%s.%N
}
