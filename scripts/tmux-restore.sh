#!/usr/bin/env bash
# tmux-restore.sh drives a restore end to end with the real binaries: a
# chatserver on the embedded backend, bob's and alice's `chat` TUIs in a
# private tmux server, alice sending with `chat send` (from the home her TUI
# uses: one device). alice sends 12 messages, the server is backed up
# (chatserver backup, while it serves), alice sends a 13th and bob answers it
# from the TUI; the server is stopped (SIGTERM), restored from the backup
# (chatserver restore --force) and started again on the same port, and alice
# sends a new message, which the server stores under a number the lost ones
# had. The devices that hold their own lost messages send them again (bob's
# answer from his, alice's 13th from hers, same message_ids), so nothing
# acknowledged is lost: the server must then hold the new message, the lost
# 13th and bob's answer once each, and both TUIs must show each of them once,
# in the server's order (never a lost message under a number the server gave
# to another), bob's saying once that the server was restored; `chat search`
# must find the new message in bob's cache.
# Usage: scripts/tmux-restore.sh        (from anywhere in the repo)
# Env:   E2E_TIMEOUT  seconds to wait for each screen (default 20)
#        E2E_KEEP=1   keep the temp dir (logs, data) for a post-mortem
# Exit status 0 when every check passed; otherwise 1, with the failed check,
# the panes and the logs on stderr. Every process it started is stopped.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIMEOUT=${E2E_TIMEOUT:-20}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-tmux-restore.XXXXXX")
SOCK="$TMP/tmux.sock" # a private tmux server: the user's sessions are never touched
SERVER_PID=""

log() { printf 'tmux-restore: %s\n' "$*" >&2; }
tm() { tmux -S "$SOCK" "$@"; }

stop_server() {
	if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	SERVER_PID=""
}

cleanup() {
	local rc=$?
	tm kill-server >/dev/null 2>&1 || true
	stop_server
	if [[ ${E2E_KEEP:-} == 1 ]]; then
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
	for who in bob alice; do
		if tm has-session -t "$who" 2>/dev/null; then
			printf -- '----- %s pane -----\n' "$who" >&2
			tm capture-pane -p -t "$who" >&2 || true
		fi
	done
	for f in "$TMP/bob/tui.log" "$TMP/alice/tui.log" "$TMP/server.log"; do
		if [[ -f $f ]]; then
			printf -- '----- %s (tail) -----\n' "${f#"$TMP"/}" >&2
			tail -n 20 "$f" >&2 || true
		fi
	done
	exit 1
}

for tool in go tmux curl; do
	command -v "$tool" >/dev/null || fail "$tool is not installed"
done

log "building into $TMP/bin"
(cd "$ROOT" && go build -o "$TMP/bin/chatserver" ./cmd/chatserver && go build -o "$TMP/bin/chat" ./cmd/chat) ||
	fail "build failed"

# start_server ADDR: start chatserver on ADDR (127.0.0.1:0 the first time,
# the same port after the restore) and set PORT once it answers.
start_server() {
	: >"$TMP/server.log"
	"$TMP/bin/chatserver" --addr "$1" --data-dir "$TMP/data" --registration open >>"$TMP/server.log" 2>&1 &
	SERVER_PID=$!
	local deadline=$((SECONDS + TIMEOUT))
	PORT=""
	until [[ -n $PORT ]]; do
		PORT=$(sed -n 's/.*chatserver listening.*addr[=":]*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$TMP/server.log" 2>/dev/null | head -n 1)
		[[ -n $PORT ]] && break
		kill -0 "$SERVER_PID" 2>/dev/null || fail "chatserver exited during start"
		((SECONDS < deadline)) || fail "chatserver did not say it was listening within ${TIMEOUT}s"
		sleep 0.1
	done
	until curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; do
		((SECONDS < deadline)) || fail "chatserver did not answer /healthz within ${TIMEOUT}s"
		sleep 0.1
	done
}
start_server 127.0.0.1:0
URL="http://127.0.0.1:$PORT"
log "server up at $URL"

chat() { # chat USER ARGS...: the chat command as USER
	local u=$1
	shift
	CHAT_HOME="$TMP/$u" "$TMP/bin/chat" --server "$URL" "$@"
}
for u in alice bob; do
	mkdir -p "$TMP/$u"
	printf '%s\n' "password-of-$u" | chat "$u" register "$u" --password-stdin >"$TMP/$u.register.log" 2>&1 ||
		fail "chat register $u: $(cat "$TMP/$u.register.log")"
done

# start_tui USER: USER's chat TUI in a session of that name; its exit status
# goes to $TMP/USER.exit.
start_tui() {
	tm new-session -d -s "$1" -x 100 -y 40 \
		"env CHAT_HOME='$TMP/$1' TERM=xterm-256color COLORTERM= '$TMP/bin/chat' --server '$URL'; echo \$? >'$TMP/$1.exit'"
	tm set-option -t "$1" remain-on-exit on >/dev/null
}
# wait_on USER TEXT WHAT: poll USER's pane until TEXT shows.
wait_on() {
	local who=$1 text=$2 what=$3
	local deadline=$((SECONDS + TIMEOUT))
	while ((SECONDS < deadline)); do
		tm capture-pane -p -t "$who" | grep -qF -- "$text" && return 0
		[[ -e $TMP/$who.exit ]] && fail "$who's chat exited (status $(cat "$TMP/$who.exit")) while waiting for $what"
		sleep 0.1
	done
	fail "timed out after ${TIMEOUT}s waiting for $what"
}
screen() { tm capture-pane -p -t bob; }
wait_for() { wait_on bob "$1" "${2:-"\"$1\" on bob's screen"}"; } # wait_for TEXT [WHAT]
alice_wait_for() { wait_on alice "$1" "$2"; }                      # alice_wait_for TEXT WHAT

start_tui bob
wait_for "connected · bob" "bob's TUI to connect"
start_tui alice
alice_wait_for "connected · alice" "alice's TUI to connect"

for i in $(seq 1 12); do
	echo "message $i" | chat alice send --to bob >/dev/null || fail "chat send $i"
done
wait_for "message 12" "alice's 12th message in bob's inbox"
tm send-keys -t bob Enter
wait_for "alice  direct" "bob's chat with alice to open"
alice_wait_for "message 12" "alice's 12th message in her own inbox"
tm send-keys -t alice Enter
alice_wait_for "bob  direct" "alice's chat with bob to open"

"$TMP/bin/chatserver" backup --data-dir "$TMP/data" "$TMP/backup.tar.gz" 2>"$TMP/backup.log" ||
	fail "chatserver backup: $(cat "$TMP/backup.log")"
log "backed up at 12: $(cat "$TMP/backup.log")"

echo "the lost thirteenth" | chat alice send --to bob >/dev/null || fail "chat send 13"
wait_for "the lost thirteenth"
tm send-keys -t bob -l -- "bob answers the lost one"
tm send-keys -t bob Enter
deadline=$((SECONDS + TIMEOUT))
until chat alice history --with bob --limit 5 2>/dev/null | grep -qF "bob answers the lost one"; do
	((SECONDS < deadline)) || fail "bob's answer did not reach the server"
	sleep 0.1
done
alice_wait_for "bob answers the lost one" "bob's answer to the lost 13th on alice's screen"
log "13 and 14 stored and on both screens"

stop_server
"$TMP/bin/chatserver" restore --data-dir "$TMP/data" --force "$TMP/backup.tar.gz" 2>"$TMP/restore.log" ||
	fail "chatserver restore: $(cat "$TMP/restore.log")"
log "restored: $(cat "$TMP/restore.log")"
start_server "127.0.0.1:$PORT"
echo "the new thirteenth" | chat alice send --to bob >/dev/null || fail "chat send after the restore"

wait_for "the new thirteenth" "the message stored after the restore on bob's screen"
wait_for "restored from a backup" "the notice in bob's status line"
log "bob's status line: $(screen | tail -n 1)"
alice_wait_for "the new thirteenth" "the message stored after the restore on alice's screen"

# order_of: the three texts that matter as they occur on stdin, one line
# per occurrence (a text shown twice is listed twice).
order_of() { grep -oF -e "the new thirteenth" -e "the lost thirteenth" -e "bob answers the lost one"; }
deadline=$((SECONDS + TIMEOUT))
until [[ $(chat alice history --with bob --limit 20 2>/dev/null | order_of | sort | uniq -c | awk '$1 == 1' | wc -l) == 3 &&
	$(chat alice history --with bob --limit 20 2>/dev/null | order_of | wc -l) == 3 ]]; do
	((SECONDS < deadline)) || fail "the server does not hold the new 13th, the lost 13th and bob's answer once each: $(chat alice history --with bob --limit 20 2>&1)"
	sleep 0.1
done
want=$(chat alice history --with bob --limit 20 | order_of | tr '\n' '|')
log "the server's order: $want"
for who in bob alice; do
	deadline=$((SECONDS + TIMEOUT))
	until [[ $(tm capture-pane -p -t "$who" | order_of | tr '\n' '|') == "$want" ]]; do
		((SECONDS < deadline)) || fail "$who's screen does not show the server's messages once each in its order (want $want, shown $(tm capture-pane -p -t "$who" | order_of | tr '\n' '|'))"
		sleep 0.1
	done
done
chat bob search "new thirteenth" | grep -qF "the new thirteenth" || fail "chat search does not find the new message"
[[ $(chat bob search "lost thirteenth" | grep -cF "the lost thirteenth") == 1 ]] || fail "chat search does not find the lost 13th, sent again, once"
log "server history after the restore:"
chat alice history --with bob --limit 4 >&2

for who in bob alice; do
	tm send-keys -t "$who" C-c
	deadline=$((SECONDS + TIMEOUT))
	until [[ -s $TMP/$who.exit ]]; do
		((SECONDS < deadline)) || fail "$who's chat did not quit on ctrl+c"
		sleep 0.1
	done
	[[ $(cat "$TMP/$who.exit") == 0 ]] || fail "$who's chat exited with status $(cat "$TMP/$who.exit")"
done
log "PASS"
