#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# unreachable.sh PROG -- run PROG (unreachable.c) so that it cuts the lab's
# second link during its connection attempt, then put the link back as it
# was: up, with its static neighbour (which goes away with the link).
if [ -z "${LAB_UNREACHABLE_LINK:-}" ]; then
	echo "LAB_UNREACHABLE_LINK is not set: this test needs the RDMA lab; run it as" >&2
	echo "  tools/rdma-lab run -- meson test -C build --suite lab" >&2
	exit 77
fi
link=$LAB_UNREACHABLE_LINK
lladdr=$(ip neigh show "$LAB_UNREACHABLE" dev "$link" | sed -n 's/.*lladdr \([0-9a-f:]*\).*/\1/p')
if [ -z "$lladdr" ]; then
	echo "no neighbour entry for $LAB_UNREACHABLE on $link" >&2
	exit 1
fi
"$1" "ip link set $link down"
rc=$?
ip link set "$link" up
ip neigh replace "$LAB_UNREACHABLE" lladdr "$lladdr" dev "$link" nud permanent
# wait for the link's rxe device to be ACTIVE again (300 s: a safety net)
for i in $(seq 3000); do
	rdma link show | grep "netdev $link\b" | grep -q 'state ACTIVE' && exit $rc
	sleep 0.1
done
echo "the rxe device on $link did not come back" >&2
exit 1
