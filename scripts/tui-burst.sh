#!/usr/bin/env bash
# tui-burst.sh measures what incoming messages cost the real chat TUI: it
# builds chatserver, chat and scripts/tuiburst, starts a server (sends not
# rate limited) with its data in a temp dir, registers alice and bob, runs
# alice's `chat` in a private tmux server (120×40: the chat with the
# conversation list beside it), reads its CPU (utime+stime in /proc/PID/stat)
# over 10 s idle, then over a burst of N messages from bob until a second
# costs no more than an idle one, and prints µs of CPU per message.
#
# Usage: scripts/tui-burst.sh [chat|inbox] [N]   (default: chat 2000)
#        CHAT_BIN=PATH uses that chat binary (an older build, to compare)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE=${1:-chat}
N=${2:-2000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-tui-burst.XXXXXX")
T="tmux -S $TMP/tmux.sock -f /dev/null"
SERVER_PID=""
cleanup() {
	$T kill-server 2>/dev/null || true
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

(cd "$ROOT" && go build -o "$TMP/bin/" ./cmd/chatserver ./cmd/chat ./scripts/tuiburst)
CHAT=${CHAT_BIN:-$TMP/bin/chat}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export CHAT_SERVER=http://127.0.0.1:$PORT
"$TMP/bin/chatserver" --addr "127.0.0.1:$PORT" --data-dir "$TMP/data" --send-rate -1 >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fs "$CHAT_SERVER/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo alice-password-1 | CHAT_HOME=$TMP/alice "$TMP/bin/chat" register alice --password-stdin >/dev/null
code=$(CHAT_HOME=$TMP/alice "$TMP/bin/chat" invite)
echo bob-password-12 | CHAT_HOME=$TMP/bob "$TMP/bin/chat" register bob --invite "$code" --password-stdin >/dev/null
echo hello | CHAT_HOME=$TMP/bob "$TMP/bin/chat" send --to alice >/dev/null

$T new-session -d -x 120 -y 40 -s m "exec env TERM=xterm-256color CHAT_HOME=$TMP/alice $CHAT"
pid=$($T list-panes -t m -F '#{pane_pid}')
for _ in $(seq 100); do $T capture-pane -p -t m | grep -q "● connected" && break; sleep 0.1; done
if [ "$MODE" = chat ]; then
	$T send-keys -t m Enter
	for _ in $(seq 100); do $T capture-pane -p -t m | grep -q "direct" && break; sleep 0.1; done
fi
sleep 2
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
a=$(cpu); sleep 10; b=$(cpu)
echo "idle: $(((b - a) * 1000 / tck)) ms of CPU in 10 s"
# The burst is over when a second costs no more than an idle second (the
# composer's cursor blinks in an open chat, so "no growth at all" may never
# come): the idle rate rounded up, in clock ticks.
quiet=$(((b - a + 9) / 10))
a=$(cpu)
start=$(date +%s%N)
CHAT_HOME=$TMP/bob "$TMP/bin/tuiburst" dm:alice:bob "$N"
sent=$(date +%s%N)
prev=-1
while :; do sleep 1; c=$(cpu); [ "$prev" -ge 0 ] && [ $((c - prev)) -le "$quiet" ] && break; prev=$c; done
b=$(cpu)
echo "$MODE: $N messages sent in $(((sent - start) / 1000000)) ms; $(((b - a) * 1000000 / tck / N)) µs of CPU per message (with about 1 s idle at the end)"
