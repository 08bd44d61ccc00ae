#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# pair.sh PORT RECEIVER SENDER [SENDER-OPTION] -- run a peer-recv and a
# peer-send against each other on LAB_B:PORT; both must succeed.
if [ -z "${LAB_B:-}" ]; then
	echo "LAB_B is not set: this test needs the RDMA lab; run it as" >&2
	echo "  tools/rdma-lab run -- meson test -C build --suite lab" >&2
	exit 77
fi
port=$1 receiver=$2 sender=$3
shift 3
ready=$(mktemp -u "${TMPDIR:-/tmp}/lab-pair.XXXXXX")
"$receiver" "$LAB_B" "$port" "$ready" &
rpid=$!
i=0
while [ ! -e "$ready" ]; do
	# 300 s: a safety net against a receiver that hangs, not a guess at
	# how long it takes to listen (it writes $ready when it does)
	if ! kill -0 $rpid 2>/dev/null || [ $i -ge 3000 ]; then
		echo "pair.sh: $receiver did not start listening" >&2
		kill $rpid 2>/dev/null
		exit 1
	fi
	i=$((i + 1))
	sleep 0.1
done
rm -f "$ready"
"$sender" "$LAB_B" "$port" "$@"
src=$?
[ $src -eq 0 ] || kill $rpid 2>/dev/null
wait $rpid
rrc=$?
echo "pair.sh: $(basename "$sender") exit status $src, $(basename "$receiver") exit status $rrc"
[ $src -eq 0 ] && [ $rrc -eq 0 ]
