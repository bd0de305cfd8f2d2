#!/usr/bin/env bash
# quickstart.sh runs the README's first-run block (between the <!-- quickstart -->
# markers) as a newcomer would: typed line by line into a shell in a real
# terminal (a private tmux server), passwords typed at the prompts, in a copy of
# the working tree with a fresh data directory and a fresh HOME. The only change
# to the block is the port (a free one instead of 8080, which may be taken;
# CHATSERVER_ADDR tells the server).
# It checks that every line succeeds, that bob's history shows alice's message,
# and that the terminal UI opens on alice's inbox with the conversation.
#
# Usage: scripts/quickstart.sh          (from anywhere in the repo)
# Env:   QS_TIMEOUT  seconds to wait for each step (default 60: the first step builds)
# Exit status 0 when the block ran through; otherwise 1 with the failed step,
# the pane and the server's output on stderr. Everything it started is stopped.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIMEOUT=${QS_TIMEOUT:-60}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-quickstart.XXXXXX")
SOCK="$TMP/tmux.sock"

log() { printf 'quickstart: %s\n' "$*" >&2; }
tm() { tmux -S "$SOCK" "$@"; }

cleanup() {
	local rc=$?
	# The block starts the server in the background of the pane's shell: it
	# wrote its pid for us.
	if [[ -f $TMP/server.pid ]]; then
		kill "$(cat "$TMP/server.pid")" 2>/dev/null || true
	fi
	tm kill-server >/dev/null 2>&1 || true
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pane() { tm capture-pane -p -J -S -200 -t qs 2>/dev/null || true; }

fail() {
	log "FAIL: $*"
	printf -- '----- the terminal -----\n' >&2
	pane >&2
	exit 1
}

# wait_for TEXT WHAT: until the pane shows TEXT.
wait_for() {
	local deadline=$((SECONDS + TIMEOUT))
	until pane | grep -qF -- "$1"; do
		((SECONDS < deadline)) || fail "no \"$1\" on the screen within ${TIMEOUT}s ($2)"
		sleep 0.2
	done
}

command -v tmux >/dev/null || fail "tmux is not installed"

# The block, as the README has it.
block=$(awk '/<!-- quickstart -->/ {on = 1; next} /<!-- \/quickstart -->/ {on = 0} on && !/^```/' "$ROOT/README.md")
[[ -n $block ]] || fail "README.md has no <!-- quickstart --> block"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
block=${block//8080/$port}

# A copy of the working tree without builds or data: a fresh clone's view.
mkdir -p "$TMP/tree" "$TMP/home"
(cd "$ROOT" && tar --exclude=./.git --exclude=./bin --exclude=./data -cf - .) | tar -xf - -C "$TMP/tree"

tm -f /dev/null new-session -d -s qs -x 160 -y 50 -c "$TMP/tree" \
	"env -i PS1='qs\$ ' CHATSERVER_ADDR=127.0.0.1:$port HOME=$TMP/home PATH=$PATH TERM=xterm-256color GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOFLAGS=$(go env GOFLAGS) bash --norc --noprofile"
tm set-option -t qs remain-on-exit on >/dev/null
wait_for 'qs' "the shell's prompt"

# type LINE: one line into the shell, then wait until it has finished (a marker
# with its exit status is printed after it).
n=0
run() {
	local line=$1
	n=$((n + 1))
	log "\$ $line"
	tm send-keys -t qs -l -- "$line"
	tm send-keys -t qs Enter
}
status_after() {
	tm send-keys -t qs -l -- "echo \"step-$n-exit=\$?\""
	tm send-keys -t qs Enter
	local deadline=$((SECONDS + TIMEOUT))
	until pane | grep -q "^step-$n-exit="; do
		((SECONDS < deadline)) || fail "step $n did not finish within ${TIMEOUT}s"
		sleep 0.2
	done
	pane | grep -q "^step-$n-exit=0$" || fail "step $n failed: $(pane | grep "^step-$n-exit=")"
}

while IFS= read -r line; do
	[[ -z $line ]] && continue
	case $line in
	*"chat register"*)
		run "$line"
		wait_for "Password:" "the password prompt (step $n)"
		tm send-keys -t qs -l -- "pw-of-step-$n"
		tm send-keys -t qs Enter
		wait_for "Again:" "the password confirmation (step $n)"
		tm send-keys -t qs -l -- "pw-of-step-$n"
		tm send-keys -t qs Enter
		status_after
		;;
	*"bin/chatserver &"*)
		run "$line"
		tm send-keys -t qs -l -- "echo \$! > $TMP/server.pid"
		tm send-keys -t qs Enter
		deadline=$((SECONDS + TIMEOUT))
		until curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
			((SECONDS < deadline)) || fail "the server did not answer on port $port within ${TIMEOUT}s"
			sleep 0.2
		done
		;;
	"bin/chat "*"# the terminal UI"*)
		run "$line"
		# The UI draws on the terminal's alternate screen: what the pane shows
		# then is the UI alone.
		wait_for "connected · alice" "the terminal UI, connected as alice"
		ui=$(pane)
		grep -q "bob" <<<"$ui" && grep -q "deploy finished" <<<"$ui" ||
			fail "the terminal UI's inbox does not show the conversation with bob and its last message"
		tm send-keys -t qs C-c
		deadline=$((SECONDS + TIMEOUT))
		until [[ $(tm display-message -p -t qs '#{alternate_on}') == 0 ]]; do
			((SECONDS < deadline)) || fail "the terminal UI did not quit on ctrl+c"
			sleep 0.2
		done
		status_after
		;;
	*"history --with alice"*)
		run "$line"
		status_after
		pane | grep -q "alice: deploy finished" || fail "bob's history does not show alice's message"
		;;
	*)
		run "$line"
		status_after
		;;
	esac
done <<<"$block"

log "PASS"
