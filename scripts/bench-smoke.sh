#!/usr/bin/env bash
# Runs every chatbench scenario at a small size (a few seconds each) against
# fresh embedded servers. It checks that each scenario runs and that no message
# is lost, duplicated or reordered; it does not judge the figures (those belong
# in docs/benchmarks.md, measured at full size). chatbench exits non-zero when a
# scenario fails or loses a message, and so does this script.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

go build -o "$out/chatbench" ./cmd/chatbench
go build -o "$out/chat" ./cmd/chat # the cli and tui scenarios find it beside chatbench
"$out/chatbench" \
	--duration 2s --users 20 --window 8 \
	--groups 10,100 --fanout-duration 1s \
	--idle-conns 300 \
	--history-messages 2000 --history-pages 100 \
	--reconnect-clients 30 \
	--cli-runs 20 \
	--tui-messages 2000 --tui-runs 3 \
	--json "$out/smoke.json" \
	all
echo "bench smoke: every scenario ran; nothing lost"
