#!/usr/bin/env bash
# tui-burst.sh builds chat and chatbench and runs chatbench's tui-burst
# scenario, the figure of record for what incoming messages cost the real
# chat TUI (docs/tui.md, "Performance"): the real server and the real chat in
# tmux, bursts and a steady rate from another user, CPU from /proc net of idle.
#
# Usage: scripts/tui-burst.sh [chatbench flags]
#        e.g. scripts/tui-burst.sh --tui-burst-history 0 --tui-burst-messages 500
#        CHAT_BIN=PATH measures that chat binary (an older build, to compare)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(mktemp -d "${TMPDIR:-/tmp}/chat-tui-burst.XXXXXX")
trap 'rm -rf "$BIN"' EXIT
(cd "$ROOT" && go build -o "$BIN/" ./cmd/chat ./cmd/chatbench)
"$BIN/chatbench" --chat-bin "${CHAT_BIN:-$BIN/chat}" "$@" tui-burst
