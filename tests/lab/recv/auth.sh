#!/bin/bash
# --keys DIR (issue 25, docs/design.md §11): only senders that prove a key
# are accepted, every SEND is checked before it is written. One case per
# run (AUTH_CASE, meson's recv-auth-*); AUTH_NO_SRQ=1 runs rpma-recv with
# --no-srq. The messages are send-auth's (a marker text); the output is
# --format len, compared byte for byte with what send-auth --expect says.
. "$(dirname "$0")/lib.sh"
: "${SEND_AUTH:?}" "${AUTH_CASE:?}"

KEYS=$WORK/keys
M=$WORK/recv.prom
OUT=$WORK/out.len
mkdir -m 700 "$KEYS"
head -c 32 /dev/urandom >"$KEYS/alpha.key"
head -c 32 /dev/urandom >"$WORK/beta.key" # a key the receiver does not have
chmod 600 "$KEYS/alpha.key" "$WORK/beta.key"
RECV_OPTS=(--format len --output "$OUT" --metrics "$M" --metrics-interval-ms 100)
[ "${AUTH_NO_SRQ:-0}" = 1 ] && RECV_OPTS+=(--no-srq)
SENDER_N=0

# sa [ARGS...] -- send-auth to the running rpma-recv; its stderr in sa-N.log
sa() {
	SENDER_N=$((SENDER_N + 1))
	"$SEND_AUTH" --connect "${TARGET:-$LAB_A}:$PORT" "$@" 2>"$WORK/sa-$SENDER_N.log"
}

# expect_rc WANT CMD... -- CMD exits with WANT
expect_rc() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, not $want"
}

# metric NAME VALUE -- the metrics file comes to show NAME VALUE
metric() {
	wait_for "$M" "^$1 $2\$" || fail "metrics never showed '$1 $2': $(grep "^$1 " "$M")"
}

# stop_recv -- SIGTERM, exit 0: the output is final
stop_recv() {
	kill -TERM "$RECV_PID"
	wait_exit "$RECV_PID" || fail "rpma-recv did not exit 0 after SIGTERM"
}

# same FILE... -- the output is exactly the concatenation of FILEs
same() {
	cat "$@" >"$WORK/expected.len"
	cmp "$WORK/expected.len" "$OUT" ||
		fail "the output ($(stat -c %s "$OUT") bytes) is not what was sent ($(stat -c %s "$WORK/expected.len") bytes)"
}

case $AUTH_CASE in
deliver)
	# right key: every size (a 0-byte message too), with and without
	# acknowledgements, mac and encrypt, byte for byte
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	wait_for "$WORK/recv.log" "--keys $KEYS: 1 keys" || fail "no word of the keys"
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --count 40 --sizes 0,1,100,4096,17,0 \
		--expect "$WORK/e1.len"
	expect_rc 0 sa --key "$KEYS/alpha.key" --count 25 --sizes 64,0,65536 \
		--expect "$WORK/e2.len" --marker SECOND
	expect_rc 0 sa --key "$KEYS/alpha.key" --encrypt --ack --count 30 --sizes 0,333,8192 \
		--expect "$WORK/e3.len" --marker THIRD
	cat "$WORK"/e[123].len >"$WORK/all.len"
	wait_size "$OUT" "$(stat -c %s "$WORK/all.len")" || fail "not everything arrived"
	grep -Eq "connection 1 from [0-9.]+:[0-9]+ key=alpha accepted \(.*key alpha, mac\)" "$WORK/recv.log" ||
		fail "no log line naming the key"
	grep -Eq "connection 3 from .* key=alpha accepted \(.*key alpha, encrypt\)" "$WORK/recv.log" ||
		fail "no log line of the encrypting connection"
	wait_for "$WORK/recv.log" "connection 3 from .* key=alpha closed by peer: 30 messages" ||
		fail "the third connection's end not logged"
	metric rpma_recv_messages_total 95
	metric rpma_recv_auth_failures_total 0
	stop_recv
	same "$WORK"/e[123].len
	echo "PASS: the right key delivers (mac, encrypt, with and without acknowledgements; $(stat -c %s "$OUT") bytes, 0-byte messages included)"
	;;
reject)
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 3 sa --key "$WORK/beta.key" --count 5
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: sender's key is not one of $KEYS's" ||
		fail "a wrong key: no log line"
	expect_rc 3 sa --count 5 # an rpmafs without a key: version 1
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: sender proves no key \(rpmafs private data without a key\)" ||
		fail "no key: no log line"
	# a plain librpma sender (Debian's librpma when there is one)
	plain=${SEND_SEQ_LIBRPMA:-$SEND_SEQ}
	expect_rc 3 "$plain" --connect "$LAB_A:$PORT" --pdata none --count 5 2>"$WORK/plain.log"
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: sender proves no key \(no private data" ||
		fail "a plain librpma sender: no log line"
	expect_rc 3 "$plain" --connect "$LAB_A:$PORT" --pdata hex:0badc0de --count 5 2>>"$WORK/plain.log"
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: sender proves no key: foreign private data" ||
		fail "foreign private data: no log line"
	metric rpma_recv_auth_failures_total 4
	metric rpma_recv_connections_accepted_total 0
	stop_recv
	[ ! -s "$OUT" ] || fail "something was written: $(stat -c %s "$OUT") bytes"
	# a receiver without keys refuses a sender that offers one
	start_recv "${RECV_OPTS[@]}"
	expect_rc 3 sa --key "$KEYS/alpha.key" --count 5
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: sender offers a key, this receiver has none" ||
		fail "no keys here: no log line"
	stop_recv
	[ ! -s "$OUT" ] || fail "something was written without keys: $(stat -c %s "$OUT") bytes"
	echo "PASS: a wrong key, no key, a plain librpma sender, foreign data rejected and counted; a key offered to a receiver without keys refused"
	;;
replay)
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 0 sa --key "$KEYS/alpha.key" --count 3 --capture "$WORK/req.bin" \
		--expect "$WORK/e1.len"
	[ "$(stat -c %s "$WORK/req.bin")" = 56 ] || fail "the captured request is not 56 bytes"
	expect_rc 3 sa --replay "$WORK/req.bin"
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: replayed connect request \(key alpha\)" ||
		fail "the replay: no log line"
	metric rpma_recv_auth_failures_total 1
	stop_recv
	# beyond the window (a receiver that never saw it): accepted, and
	# still proves nothing: its wrong proof is dropped at once
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 6 sa --replay "$WORK/req.bin"
	wait_for "$WORK/recv.log" "key=alpha: SEND seq 0: its proof of key is wrong: dropping" ||
		fail "a replay with a wrong proof: no log line"
	# and, accepted once, it is in this receiver's window now
	expect_rc 3 sa --replay "$WORK/req.bin" --no-proof
	wait_for "$WORK/recv.log" "rejected connection from [0-9.]+:[0-9]+: replayed connect request \(key alpha\)" ||
		fail "a replay the second time: no log line"
	metric rpma_recv_auth_failures_total 2
	stop_recv
	same "$WORK/e1.len"
	echo "PASS: a replayed connect request is rejected; past the window it cannot prove the key"
	;;
no-proof)
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 0 sa --key "$KEYS/alpha.key" --no-proof --count 0
	grep -q "no proof of key within 5000 ms" "$WORK/recv.log" || fail "no proof: no log line"
	expect_rc 0 sa --key "$KEYS/alpha.key" --no-proof --count 3
	grep -q "SEND seq 0: its first SEND (80 bytes) is not the proof of key" "$WORK/recv.log" ||
		fail "a message first: no log line"
	metric rpma_recv_auth_failures_total 2
	stop_recv
	[ ! -s "$OUT" ] || fail "something was written: $(stat -c %s "$OUT") bytes"
	echo "PASS: a connection without its proof of key is dropped (none in 5 s; a message first) and writes nothing"
	;;
key-files)
	# refused at start, naming the path; exit 2 as for a bad option
	refuses() {
		local rc
		"$RPMA_RECV" --listen "$LAB_A:$PORT" "$@" >/dev/null 2>"$WORK/start.log"
		rc=$?
		[ "$rc" = 2 ] || fail "rpma-recv $* exited $rc, not 2: $(cat "$WORK/start.log")"
	}
	D=$WORK/d
	mkdir -m 700 "$D"
	head -c 32 /dev/urandom >"$D/open.key"
	chmod 644 "$D/open.key"
	refuses --keys "$D"
	grep -qF "$D/open.key: key file is readable or writable by group or others (mode 0644): chmod 600 $D/open.key" "$WORK/start.log" ||
		fail "mode 0644: $(cat "$WORK/start.log")"
	chmod 600 "$D/open.key"
	head -c 33 /dev/urandom >"$D/long.key"
	chmod 600 "$D/long.key"
	refuses --keys "$D"
	grep -qF "$D/long.key: a key file holds 32 bytes, this one 33" "$WORK/start.log" ||
		fail "33 bytes: $(cat "$WORK/start.log")"
	rm "$D/long.key" "$D/open.key"
	refuses --keys "$D"
	grep -qF "no *.key file" "$WORK/start.log" || fail "an empty dir: $(cat "$WORK/start.log")"
	grep -qF "$D" "$WORK/start.log" || fail "an empty dir, not named: $(cat "$WORK/start.log")"
	refuses --keys "$WORK/none"
	grep -qF "$WORK/none" "$WORK/start.log" || fail "no such dir: $(cat "$WORK/start.log")"
	refuses --protect encrypt
	grep -qF -- "--protect needs --keys" "$WORK/start.log" || fail "--protect alone: $(cat "$WORK/start.log")"
	# and a good one starts
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	stop_recv
	echo "PASS: unsafe or bad key files and dirs refuse the start, naming the path"
	;;
bad-tag)
	# a bad tag mid-stream: what came before is written, nothing from it on
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 0 sa --key "$KEYS/alpha.key" --count 60 --sizes 64,0,1000 --bad-at 20 \
		--expect "$WORK/e1.len"
	wait_for "$WORK/recv.log" "from [0-9.]+:[0-9]+ key=alpha: SEND seq 21: the tag of a SEND of 1016 bytes is wrong \(mac\)" ||
		fail "the bad tag: no log line"
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --encrypt --count 10 --sizes 100 --bad-at 4 \
		--expect "$WORK/e2.len" --marker ACKED
	wait_for "$WORK/recv.log" "key=alpha: SEND seq 5: the tag of a SEND of 116 bytes is wrong \(encrypt\)" ||
		fail "the bad tag (acknowledged, encrypt): no log line"
	metric rpma_recv_auth_failures_total 2
	metric rpma_recv_messages_total 24
	stop_recv
	same "$WORK/e1.len" "$WORK/e2.len"
	echo "PASS: a bad tag drops the connection; the 20 and 4 messages before it are written, nothing after"
	;;
wire)
	# the receiver on LAB_B: the sender's packets cross the veth
	# (LAB_NETDEV_A <-> LAB_NETDEV_B), where tcpdump takes them
	: "${LAB_B:?}" "${LAB_NETDEV_B:?}"
	start_b() {
		PORT=$((PORT + 1))
		: >"$WORK/recv.log"
		"$RPMA_RECV" --listen "$LAB_B:$PORT" "$@" >/dev/null 2>"$WORK/recv.log" &
		RECV_PID=$!
		PIDS+=("$RECV_PID")
		wait_for "$WORK/recv.log" "listening on" || fail "rpma-recv did not start"
	}
	# capture NAME -- tcpdump in the background, once it listens; it
	# stops by itself after CAP_PACKETS packets (an exchange of 40
	# messages, with the connect, the proof and the acknowledgements,
	# is more): its exit is the event, not a guess at when it has read
	# what went by
	CAP_PACKETS=40
	capture() {
		tcpdump -i "$LAB_NETDEV_B" --immediate-mode -U -n -c "$CAP_PACKETS" \
			-w "/tmp/auth-$1.pcap" udp port 4791 2>"$WORK/tcpdump-$1.log" &
		TCPDUMP_PID=$!
		PIDS+=("$TCPDUMP_PID")
		wait_for "$WORK/tcpdump-$1.log" "listening on" || fail "tcpdump did not start"
	}
	uncapture() {
		wait_exit "$TCPDUMP_PID" || fail "tcpdump did not take $CAP_PACKETS packets: $(cat "$WORK/tcpdump-$1.log")"
		grep -q "^$CAP_PACKETS packets captured" "$WORK/tcpdump-$1.log" ||
			fail "tcpdump: $(cat "$WORK/tcpdump-$1.log")"
	}
	TARGET=$LAB_B
	start_b --keys "$KEYS" "${RECV_OPTS[@]}"
	capture mac
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --count 40 --sizes 300 --marker MACMARKER \
		--expect "$WORK/e1.len"
	uncapture mac
	n=$(grep -ac MACMARKER /tmp/auth-mac.pcap)
	[ "$n" -gt 0 ] || fail "the capture holds no plaintext of mac: is it capturing? $(cat "$WORK/tcpdump-mac.log")"
	capture enc
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --encrypt --count 40 --sizes 300 \
		--marker ENCMARKER --expect "$WORK/e2.len"
	uncapture enc
	! grep -aq ENCMARKER /tmp/auth-enc.pcap || fail "encrypt: the marker is on the wire"
	stop_recv
	same "$WORK/e1.len" "$WORK/e2.len"
	grep -q ENCMARKER "$OUT" || fail "encrypt: the marker is not in the output"
	# --protect encrypt: the receiver's choice, for a sender that did not ask
	start_b --keys "$KEYS" --protect encrypt "${RECV_OPTS[@]}"
	capture recv
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --count 40 --sizes 300 --marker RCVMARKER \
		--expect "$WORK/e3.len"
	uncapture recv
	! grep -aq RCVMARKER /tmp/auth-recv.pcap || fail "--protect encrypt: the marker is on the wire"
	grep -q "key alpha, encrypt" "$WORK/recv.log" || fail "--protect encrypt: not in force"
	stop_recv
	same "$WORK/e1.len" "$WORK/e2.len" "$WORK/e3.len"
	echo "PASS: mac shows the marker on the wire ($n matches in $CAP_PACKETS packets); encrypt (asked, or --protect encrypt) hides it and delivers the same bytes"
	;;
flood)
	# garbage, replayed and wrong-key connects, three streams, beside an
	# honest sender
	start_recv --keys "$KEYS" "${RECV_OPTS[@]}"
	expect_rc 0 sa --key "$KEYS/alpha.key" --count 1 --capture "$WORK/req.bin" \
		--expect "$WORK/e0.len"
	plain=${SEND_SEQ_LIBRPMA:-$SEND_SEQ}
	flood() {
		local i=0
		while [ ! -e "$WORK/stop" ]; do
			case $(($1 % 3)) in
			0) "$SEND_AUTH" --connect "$LAB_A:$PORT" --replay "$WORK/req.bin" --quiet ;;
			1) "$SEND_AUTH" --connect "$LAB_A:$PORT" --key "$WORK/beta.key" --quiet ;;
			2) "$plain" --connect "$LAB_A:$PORT" --pdata "hex:52504d4603380400$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" --count 1 ;;
			esac
			[ $? = 3 ] || echo "flood $1: a hostile connect was not rejected" >>"$WORK/flood-bad.log"
			i=$((i + 1))
		done 2>/dev/null
		echo "$i" >"$WORK/flood-$1.n"
	}
	# flood_count -- hostile connects rejected so far (the receiver's log)
	flood_count() { grep -c "rejected connection" "$WORK/recv.log"; }
	FLOOD=()
	for s in 0 1 2; do
		flood $s &
		FLOOD+=($!)
		PIDS+=($!)
	done
	wait_for "$M" "^rpma_recv_auth_failures_total [1-9][0-9]" || fail "the flood does not arrive"
	before=$(flood_count)
	expect_rc 0 sa --key "$KEYS/alpha.key" --ack --count 2000 --sizes 64,0,1500 \
		--expect "$WORK/e1.len" --marker HONEST
	expect_rc 0 sa --key "$KEYS/alpha.key" --count 500 --sizes 200 \
		--expect "$WORK/e2.len" --marker HONEST2
	during=$(($(flood_count) - before))
	touch "$WORK/stop"
	for p in "${FLOOD[@]}"; do wait "$p"; done
	[ "$during" -gt 0 ] || fail "no hostile connect while the honest sender ran"
	[ ! -s "$WORK/flood-bad.log" ] || fail "$(cat "$WORK/flood-bad.log")"
	total=$(($(cat "$WORK/flood-0.n") + $(cat "$WORK/flood-1.n") + $(cat "$WORK/flood-2.n")))
	metric rpma_recv_auth_failures_total "$total"
	wait_size "$OUT" $(($(stat -c %s "$WORK/e0.len") + $(stat -c %s "$WORK/e1.len") + $(stat -c %s "$WORK/e2.len"))) ||
		fail "the honest sender's messages did not all arrive"
	stop_recv
	same "$WORK/e0.len" "$WORK/e1.len" "$WORK/e2.len"
	echo "PASS: $total hostile connects rejected ($during while the honest sender ran), the honest sender's 2501 messages all arrived"
	;;
*)
	fail "no such AUTH_CASE: $AUTH_CASE"
	;;
esac
