#!/usr/bin/env bash
# Runs every chatbench scenario at a small size (a few seconds each) against
# fresh embedded servers. It checks that each scenario runs and that no message
# is lost, duplicated or reordered; it does not judge the figures (those belong
# in docs/benchmarks.md, measured at full size). chatbench exits non-zero when a
# scenario fails or loses a message, and so does this script.
#
# The servers' delivery worker runs with a 1 s grace period (3 s by default) and
# fanout runs 2.5 s per group, so each group's first messages pass two
# grace-period checks while their receivers are connected and acking: a message
# sent again after its ack fails the run, as it would at full size.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

go build -o "$out/chatbench" ./cmd/chatbench
go build -o "$out/chat" ./cmd/chat # the cli and tui scenarios find it beside chatbench
"$out/chatbench" \
	--duration 2s --users 20 --window 8 \
	--server-redeliver-after 1s \
	--groups 10,100 --fanout-duration 2500ms --fanout-ack-interval 200ms \
	--idle-conns 300 \
	--history-messages 2000 --history-pages 100 \
	--reconnect-clients 30 \
	--cli-runs 20 \
	--tui-messages 2000 --tui-runs 3 \
	--json "$out/smoke.json" \
	all
echo "bench smoke: every scenario ran; nothing lost"
