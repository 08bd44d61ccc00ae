# SPDX-License-Identifier: BSD-3-Clause
#
# count.sh -- what inside.sh and inbox.sh count per message, sourced by both
# (they define nap): system calls with strace -f -c, CPU time from /proc.

# strace_calls FILE: the calls column summed over strace -c's table
strace_calls() { awk '/^-/ { d++; next } d == 1 && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$1"; }
# strace_on PID LOG: attach to every thread of PID ("Process N attached
# with T threads"), return once attached; strace's pid in spid
strace_on() {
	local i line
	: >"$2.err" # before strace starts: the loop below reads it at once
	strace -f -c -o "$2.c" -p "$1" 2>"$2.err" &
	spid=$!
	for ((i = 0; i < 200; i++)); do
		while IFS= read -r line; do
			[[ $line == *attached* ]] && return 0
		done <"$2.err"
		kill -0 $spid 2>/dev/null || return 1
		nap 0.05
	done
	return 1
}
# strace_off PID: stop an strace_on (strace writes its table at SIGINT)
strace_off() { kill -INT "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
# per A M: A / M, three decimals; nothing when M is 0
per() { awk -v a="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%.3f", a / m }'; }
# ticks_of STAT: utime + stime of a /proc/PID/stat (a process: all its
# threads, the ended ones too), in clock ticks
ticks_of() { sed 's/^.*) //' "$1" 2>/dev/null | awk '{ print $12 + $13 }'; }
# cpu_us PID: CPU time of PID's threads so far in µs, to the nanosecond
# (the run time of /proc/PID/task/*/schedstat): for a receiver, whose
# threads live as long as it does; clock ticks (10 ms) without schedstat
cpu_us() {
	local f t n=0 ok=0
	for f in /proc/$1/task/*/schedstat; do
		read -r t _ <"$f" 2>/dev/null && n=$((n + t)) ok=1
	done
	if [ $ok = 1 ]; then
		echo $((n / 1000))
	else
		echo $(($(ticks_of "/proc/$1/stat") * 1000000 / $(getconf CLK_TCK)))
	fi
}
# us_per START_US END_US M: µs per message, two decimals
us_per() { awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { if (m > 0) printf "%.2f", (b - a) / m }'; }
