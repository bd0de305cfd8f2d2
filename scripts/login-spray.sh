#!/usr/bin/env bash
# login-spray.sh measures what a password spray costs everyone else: it starts
# chatserver (embedded, on a free port, flags from $EXTRA), times 60 `chat send`
# runs, then times 60 more while 12 loops send wrong passwords for 12 accounts
# from 12 loopback addresses, and prints p50/p90/max of each. The spray runs on
# the same machine, so some of the difference is its own CPU.
#
#   scripts/login-spray.sh                                   # the defaults
#   EXTRA="--auth-rate -1 --max-hashing 16" scripts/login-spray.sh   # no limits
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
D=$(mktemp -d)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$D/bin/" ./cmd/chat ./cmd/chatserver)
# shellcheck disable=SC2086 # EXTRA is a list of flags
"$D/bin/chatserver" --addr 127.0.0.1:0 --data-dir "$D/data" --registration open ${EXTRA:-} >"$D/log" 2>&1 &
pids+=($!)
PORT=""
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*chatserver listening.*addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$D/log" 2>/dev/null | head -n 1)
	[[ -n $PORT ]] && break
	sleep 0.1
done
[[ -n $PORT ]] || { echo "login-spray: chatserver did not start: $(cat "$D/log")" >&2; exit 1; }
export CHAT_SERVER=http://127.0.0.1:$PORT
for u in alice bob; do echo "password-$u" | CHAT_HOME="$D/$u" "$D/bin/chat" register "$u" --password-stdin >/dev/null; done
for i in $(seq 1 12); do
	curl -s -o /dev/null --interface "127.0.0.$((i + 10))" -H 'Content-Type: application/json' \
		-d "{\"user_id\":\"victim$i\",\"password\":\"password-victim$i\"}" "$CHAT_SERVER/v1/register"
done
measure() {
	local t0 t1 all=()
	for n in $(seq 1 60); do
		t0=$(date +%s%N)
		CHAT_HOME="$D/alice" "$D/bin/chat" send --to bob "m $n" >/dev/null
		t1=$(date +%s%N)
		all+=($(((t1 - t0) / 1000)))
	done
	printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR]=$1} END {printf "p50 %.1f ms, p90 %.1f ms, max %.1f ms\n", a[int(NR*0.5)]/1000, a[int(NR*0.9)]/1000, a[NR]/1000}'
}
echo "chat send, quiet:            $(measure)"
for i in $(seq 1 12); do
	(while true; do
		curl -s -o /dev/null --interface "127.0.0.$((i + 10))" -H 'Content-Type: application/json' \
			-d "{\"user_id\":\"victim$i\",\"password\":\"wrong-$RANDOM\"}" "$CHAT_SERVER/v1/login"
	done) &
	pids+=($!)
done
sleep 1
echo "chat send, during the spray: $(measure)"
