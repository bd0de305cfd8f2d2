# tuibench-lib.sh is sourced by scripts/tui-start.sh and scripts/tui-history.sh:
# the working directory they share (its tmux servers and chatserver stopped
# and the directory removed on exit) and the binaries they time.
#
# tuibench_setup NAME: needs ROOT (the repository); sets TMP (a new temporary
# directory), SERVER_PID (empty: a script that starts chatserver sets it) and
# CHAT (the chat binary timed: CHAT_BIN, or the one built into $TMP/bin beside
# chatserver).
tuibench_setup() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-$1.XXXXXX")
	SERVER_PID=""
	trap tuibench_cleanup EXIT
	(cd "$ROOT" && go build -o "$TMP/bin/" ./cmd/chatserver ./cmd/chat)
	CHAT=${CHAT_BIN:-$TMP/bin/chat}
}

tuibench_cleanup() {
	for s in "$TMP"/tmux-*.sock; do tmux -S "$s" kill-server 2>/dev/null || true; done
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
	rm -rf "$TMP"
}
