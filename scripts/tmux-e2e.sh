#!/usr/bin/env bash
# tmux-e2e.sh drives the real binaries end to end: it builds chatserver and chat,
# starts a server on a free loopback port with its data in a temp dir, registers
# alice and bob with `chat register --password-stdin`, runs two `chat` TUIs in a
# private tmux server (separate CHAT_HOMEs), types messages both ways, and checks
# the screens with capture-pane: the messages appear on both sides, and alice's
# tick turns to read (blue) once bob opens the conversation, and a mention of
# bob in the chat he muted is counted on his inbox row and in his window title.
#
# Usage: scripts/tmux-e2e.sh            (from anywhere in the repo)
# Env:   E2E_TIMEOUT  seconds to wait for each screen (default 15)
#        E2E_KEEP=1   keep the temp dir (logs, data) for a post-mortem
# Exit status 0 when every check passed; otherwise 1, with the failed check, the
# panes and the logs on stderr. Every process it started is stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIMEOUT=${E2E_TIMEOUT:-15}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-tmux-e2e.XXXXXX")
SOCK="$TMP/tmux.sock" # a private tmux server: the user's sessions are never touched
SERVER_PID=""

log() { printf 'tmux-e2e: %s\n' "$*" >&2; }

tm() { tmux -S "$SOCK" "$@"; }

cleanup() {
	local rc=$?
	tm kill-server >/dev/null 2>&1 || true
	if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	if [[ ${E2E_KEEP:-} == 1 || $rc -ne 0 && -n ${E2E_KEEP_ON_FAIL:-} ]]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	log "FAIL: $*"
	for s in alice bob; do
		if tm has-session -t "$s" 2>/dev/null; then
			printf -- '----- %s pane -----\n' "$s" >&2
			tm capture-pane -p -t "$s" >&2 || true
		fi
		if [[ -f $TMP/$s/tui.log ]]; then
			printf -- '----- %s tui.log (tail) -----\n' "$s" >&2
			tail -n 20 "$TMP/$s/tui.log" >&2 || true
		fi
	done
	if [[ -f $TMP/server.log ]]; then
		printf -- '----- server.log (tail) -----\n' >&2
		tail -n 20 "$TMP/server.log" >&2 || true
	fi
	exit 1
}

for tool in go tmux perl curl; do
	command -v "$tool" >/dev/null || fail "$tool is not installed"
done

# --- build -------------------------------------------------------------------
log "building into $TMP/bin"
(cd "$ROOT" && go build -o "$TMP/bin/chatserver" ./cmd/chatserver && go build -o "$TMP/bin/chat" ./cmd/chat) ||
	fail "build failed"

# --- server ------------------------------------------------------------------
# Port 0: the kernel picks a free port (no race with other tests), and the
# server's "listening" log line says which.
# The log exists before the server starts: the shell opens it in the forked
# child, and a read racing that (a loaded machine) made sed fail the script.
: >"$TMP/server.log"
"$TMP/bin/chatserver" --addr 127.0.0.1:0 --data-dir "$TMP/data" --registration open >"$TMP/server.log" 2>&1 &
SERVER_PID=$!

deadline=$((SECONDS + TIMEOUT))
PORT=""
until [[ -n $PORT ]]; do
	PORT=$(sed -n 's/.*chatserver listening.*addr[=":]*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$TMP/server.log" 2>/dev/null | head -n 1)
	[[ -n $PORT ]] && break
	kill -0 "$SERVER_PID" 2>/dev/null || fail "chatserver exited during start"
	((SECONDS < deadline)) || fail "chatserver did not say it was listening within ${TIMEOUT}s"
	sleep 0.1
done
URL="http://127.0.0.1:$PORT"
until curl -fsS "$URL/healthz" >/dev/null 2>&1; do
	kill -0 "$SERVER_PID" 2>/dev/null || fail "chatserver exited during start"
	((SECONDS < deadline)) || fail "chatserver did not answer $URL/healthz within ${TIMEOUT}s"
	sleep 0.1
done
log "server up at $URL"

# --- accounts ----------------------------------------------------------------
for u in alice bob; do
	mkdir -p "$TMP/$u"
	printf '%s\n' "password-of-$u" |
		CHAT_HOME="$TMP/$u" "$TMP/bin/chat" --server "$URL" register "$u" --password-stdin >"$TMP/$u.register.log" 2>&1 ||
		fail "chat register $u: $(cat "$TMP/$u.register.log")"
done

# --- the TUIs ----------------------------------------------------------------
# remain-on-exit keeps a crashed TUI's last screen for the failure report.
start_tui() {
	local u=$1
	# The shell records chat's exit status (128+N for a signal) when it ends.
	tm new-session -d -s "$u" -x 100 -y 30 \
		"env CHAT_HOME='$TMP/$u' TERM=xterm-256color COLORTERM= '$TMP/bin/chat' --server '$URL'; echo \$? >'$TMP/$u.exit'"
	tm set-option -t "$u" remain-on-exit on >/dev/null
}
start_tui alice
start_tui bob

screen() { tm capture-pane -p -t "$1"; }
screen_esc() { tm capture-pane -e -p -t "$1"; }

# wait_for SESSION TEXT [WHAT]: poll the pane until TEXT (fixed string) shows.
wait_for() {
	local s=$1 text=$2 what=${3:-"\"$2\" on $1's screen"}
	local deadline=$((SECONDS + TIMEOUT))
	while ((SECONDS < deadline)); do
		if screen "$s" | grep -qF -- "$text"; then
			return 0
		fi
		if [[ -e $TMP/$s.exit ]]; then
			fail "$s's chat exited (status $(cat "$TMP/$s.exit")) while waiting for $what"
		fi
		sleep 0.1
	done
	fail "timed out after ${TIMEOUT}s waiting for $what"
}

# tick SESSION TEXT: the tick at the end of the line holding TEXT: "pending",
# "sent", "delivered", "read" (the double tick in the bold blue read style), or
# "none".
tick() {
	screen_esc "$1" | TEXT="$2" perl -CSD -ne '
		next unless index($_, $ENV{TEXT}) >= 0;
		if (/((?:\e\[[\d;:]*m)*)\x{2713}\x{2713}(?:\e\[[\d;:]*m|\s)*$/) {
			# Only the read tick is bold: an SGR starting with parameter 1.
			print(($1 =~ /\e\[1[;m]/) ? "read\n" : "delivered\n"); exit;
		}
		if (/\x{2713}(?:\e\[[\d;:]*m|\s)*$/) { print "sent\n"; exit }
		if (/\x{25F7}(?:\e\[[\d;:]*m|\s)*$/) { print "pending\n"; exit }
		print "none\n"; exit;'
}

# wait_tick SESSION TEXT WANT...: poll until the tick is one of WANT.
wait_tick() {
	local s=$1 text=$2
	shift 2
	local deadline=$((SECONDS + TIMEOUT)) got=""
	while ((SECONDS < deadline)); do
		got=$(tick "$s" "$text")
		for w in "$@"; do
			[[ $got == "$w" ]] && return 0
		done
		sleep 0.1
	done
	fail "tick of \"$text\" on $s's screen is \"$got\", want one of: $*"
}

type_line() { # type_line SESSION TEXT: type literally, then Enter
	tm send-keys -t "$1" -l -- "$2"
	tm send-keys -t "$1" Enter
}

wait_for alice "Conversations" "alice's inbox"
wait_for bob "Conversations" "bob's inbox"
wait_for alice "connected · alice" "alice's status line to say connected"
wait_for bob "connected · bob" "bob's status line to say connected"
log "both TUIs show their inbox"

# alice starts a direct chat with bob (n, the user id, enter) and writes.
tm send-keys -t alice n
wait_for alice "New direct chat"
type_line alice bob
wait_for alice "bob  direct" "alice's chat with bob to open"
type_line alice "hello from alice"
wait_for alice "hello from alice"
# Stored (✓), and delivered (✓✓) as soon as bob's client acks; not read yet.
wait_tick alice "hello from alice" sent delivered
log "alice's message is stored: $(tick alice 'hello from alice')"

# bob sees it in his inbox, unread, and opens it.
wait_for bob "hello from alice" "alice's message in bob's inbox"
wait_for bob "1 unread" "bob's unread count"
wait_tick alice "hello from alice" delivered
[[ $(tick alice "hello from alice") != read ]] || fail "alice's tick is read before bob opened the chat"
tm send-keys -t bob Enter
wait_for bob "alice  direct" "bob's chat with alice to open"
wait_tick alice "hello from alice" read
log "alice's tick turned read after bob opened the chat"

# And back: bob answers, alice (who has the chat open) sees it.
type_line bob "hi alice, got it"
wait_for alice "hi alice, got it" "bob's answer on alice's screen"
wait_tick bob "hi alice, got it" read
log "bob's answer arrived and shows read"

# A multi-line message with alt+enter.
tm send-keys -t alice -l -- "line one"
tm send-keys -t alice M-Enter
type_line alice "line two"
wait_for bob "line two" "the second line of alice's multi-line message"
screen bob | grep -qF "line one" || fail "the first line of alice's multi-line message is missing on bob's screen"

# A reply and a reaction: bob replies to alice's newest message (r), then
# reacts to the newest (+, his reply); alice sees the quoted line and the
# reaction under the message.
# Escape then a key at once reads as alt+key: wait for reading mode first.
tm send-keys -t bob Escape
wait_for bob "i write" "bob's chat to be in reading mode"
tm send-keys -t bob r
wait_for bob "replying to alice" "bob's composer to say he replies to alice"
type_line bob "a reply to that"
wait_for alice "a reply to that" "bob's reply on alice's screen"
screen alice | grep -qF "↪ alice: line one" || fail "bob's reply shows no quoted line on alice's screen"
tm send-keys -t bob Escape
wait_for bob "i write" "bob's chat to be in reading mode"
tm send-keys -t bob +
wait_for bob "react to bob's message" "bob's composer to ask for a reaction"
type_line bob "👍"
wait_for alice "👍 1" "bob's reaction under his reply on alice's screen"
log "a reply with its quote and a reaction crossed between the two clients"

# Search and jump: alice searches her chat for her first message and lands on
# it, selected.
tm send-keys -t alice Escape
wait_for alice "i write" "alice's chat to be in reading mode"
tm send-keys -t alice /
wait_for alice "Search bob" "alice's search box"
tm send-keys -t alice -l -- "hello"
wait_for alice "▌" "the search result (its cursor bar)"
tm send-keys -t alice Enter
deadline=$((SECONDS + TIMEOUT))
until screen alice | grep -q "▶.*hello from alice"; do
	((SECONDS < deadline)) || fail "enter on the search result did not select alice's first message"
	sleep 0.1
done
log "a search found alice's first message and jumped to it"

# A mention in a muted chat: bob mutes his chat with alice and goes back to
# the inbox; alice writes "@bob ...". bob's inbox row and window title count
# the mention (a muted chat counts nothing else), and @ lists it.
tm send-keys -t bob M
wait_for bob "muted" "bob's chat to say it is muted"
tm send-keys -t bob Escape
wait_for bob "Conversations" "bob's inbox"
# Each key waits for the screen it leads to: an escape followed at once by
# `i` reads as alt+i to the terminal.
tm send-keys -t alice Escape
deadline=$((SECONDS + TIMEOUT))
while screen alice | grep -q "▶"; do
	((SECONDS < deadline)) || fail "escape did not clear alice's selection"
	sleep 0.1
done
tm send-keys -t alice i
wait_for alice "esc read" "alice's composer to take her text"
type_line alice "@bob look at the demo"
wait_for bob "@1(1)" "the mention counted on bob's inbox row"
title=$(tm display-message -p -t bob '#{pane_title}')
[[ $title == *" @1" ]] || fail "bob's window title \"$title\" does not count the mention"
tm send-keys -t bob @
wait_for bob "Mentions of you" "bob's mentions view"
wait_for bob "@bob look at the demo" "alice's mention in bob's mentions view"
tm send-keys -t bob Enter
wait_for bob "alice  direct" "bob's chat with alice, opened from the mentions view"
log "a mention in a muted chat was counted, titled and listed"

# Quit cleanly with ctrl+c: chat exits with status 0.
for s in alice bob; do
	tm send-keys -t "$s" C-c
done
for s in alice bob; do
	deadline=$((SECONDS + TIMEOUT))
	until [[ -s $TMP/$s.exit ]]; do
		((SECONDS < deadline)) || fail "$s's chat did not quit on ctrl+c"
		sleep 0.1
	done
	st=$(cat "$TMP/$s.exit")
	[[ $st == 0 ]] || fail "$s's chat exited with status $st on ctrl+c"
done
log "PASS"
