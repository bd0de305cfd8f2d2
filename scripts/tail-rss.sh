#!/usr/bin/env bash
# tail-rss.sh measures the memory of the real `chat tail` as messages pass
# through it: it builds chatserver and chat, starts a server (sends not rate
# limited) with its data in a temp dir, registers alice and bob, runs
# alice's `chat tail --with bob` (its output counted, then dropped), has bob
# send N messages in rounds of 10,000 (`chat send --lines`), and after each
# round, once tail has printed them all, prints tail's resident memory
# (VmRSS) and its peak (VmHWM) from /proc.
#
# Usage: scripts/tail-rss.sh [N]   (default 100000)
#        CHAT_BIN=PATH runs that chat binary as tail (an older build, to compare)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-100000}
ROUND=10000
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-tail-rss.XXXXXX")
SERVER_PID=""
TAIL_PID=""
cleanup() {
	[ -n "$TAIL_PID" ] && kill "$TAIL_PID" 2>/dev/null || true
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

(cd "$ROOT" && go build -o "$TMP/bin/" ./cmd/chatserver ./cmd/chat)
CHAT=$TMP/bin/chat
TAIL_BIN=${CHAT_BIN:-$CHAT}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export CHAT_SERVER=http://127.0.0.1:$PORT
"$TMP/bin/chatserver" --addr "127.0.0.1:$PORT" --data-dir "$TMP/data" --send-rate -1 >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fs "$CHAT_SERVER/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo alice-password-1 | CHAT_HOME=$TMP/alice "$CHAT" register alice --password-stdin >/dev/null
code=$(CHAT_HOME=$TMP/alice "$CHAT" invite)
echo bob-password-12 | CHAT_HOME=$TMP/bob "$CHAT" register bob --invite "$code" --password-stdin >/dev/null
echo hello | CHAT_HOME=$TMP/bob "$CHAT" send --to alice >/dev/null

CHAT_HOME=$TMP/alice "$TAIL_BIN" tail --with bob >"$TMP/tail.out" 2>"$TMP/tail.err" &
TAIL_PID=$!
sleep 1
rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %s MB  ", $1, int($2/1024)}' "/proc/$TAIL_PID/status"; }
echo "before: $(rss)"
sent=0
while [ "$sent" -lt "$N" ]; do
	seq $((sent + 1)) $((sent + ROUND)) | sed 's/^/line /' | CHAT_HOME=$TMP/bob "$CHAT" send --to alice --lines >/dev/null
	sent=$((sent + ROUND))
	for _ in $(seq 600); do
		[ "$(wc -l <"$TMP/tail.out")" -ge "$sent" ] && break
		sleep 0.1
	done
	echo "after $sent: printed $(wc -l <"$TMP/tail.out")  $(rss)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
