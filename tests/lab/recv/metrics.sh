#!/bin/bash
# --metrics: the receiver's totals in the Prometheus text format, parsed with
# prometheus_client's parser; they follow the messages every
# --metrics-interval-ms and are written once more at exit (SIGTERM).
. "$(dirname "$0")/lib.sh"

mkdir "$WORK/textfile"
M=$WORK/textfile/recv.prom

# parse_metrics FILE -- "NAME VALUE" per sample, sorted; fails on a file
# the parser rejects, on a counter not called *_total and on a family
# without HELP
parse_metrics() {
	/usr/bin/python3 - "$1" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
with open(sys.argv[1]) as f:
    text = f.read()
out = []
for fam in text_string_to_metric_families(text):
    if not fam.documentation:
        sys.exit("no HELP for %s" % fam.name)
    for s in fam.samples:
        if fam.type == "counter" and not s.name.endswith("_total"):
            sys.exit("counter sample %s" % s.name)
        out.append("%s %d" % (s.name, s.value))
print("\n".join(sorted(out)))
PY
}

start_recv --format lines --output "$WORK/out.lines" --metrics "$M" --metrics-interval-ms 100
wait_for "$M" "^rpma_recv_listening 1$" || fail "no metrics file while listening"
send --count 50 --sizes 16 2>"$WORK/send.log" || fail "the sender failed"
wait_for "$M" "^rpma_recv_messages_total 50$" || fail "the metrics never showed 50 messages"
parse_metrics "$M" >"$WORK/running.txt" || fail "the parser refused: $(cat "$M")"
for want in "rpma_recv_messages_total 50" "rpma_recv_bytes_total 800" \
	"rpma_recv_connections_accepted_total 1" "rpma_recv_connections_rejected_total 0" \
	"rpma_recv_listening 1"; do
	grep -qx "$want" "$WORK/running.txt" || fail "while running: no '$want' in $(cat "$WORK/running.txt")"
done
send --count 7 --sizes 100 2>>"$WORK/send.log" || fail "the second sender failed"
kill -TERM "$RECV_PID"
wait_exit "$RECV_PID" || fail "rpma-recv: not exit 0 after SIGTERM"
parse_metrics "$M" >"$WORK/final.txt" || fail "the parser refused the file at exit: $(cat "$M")"
for want in "rpma_recv_messages_total 57" "rpma_recv_bytes_total 1500" \
	"rpma_recv_connections_accepted_total 2" "rpma_recv_connections 0" \
	"rpma_recv_listening 0"; do
	grep -qx "$want" "$WORK/final.txt" || fail "at exit: no '$want' in $(cat "$WORK/final.txt")"
done
[ "$(ls "$WORK/textfile")" = "recv.prom" ] || fail "left behind: $(ls "$WORK/textfile")"
echo "PASS: --metrics follows the messages and is written at exit"
