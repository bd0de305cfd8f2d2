#!/usr/bin/env bash
# The project's test command (README, and .ci/run calls it): starts the real
# services the integration tests need (redis-server, moto), then runs every test —
# unit and end to end on the embedded backend under the race detector, the
# conformance suites against Redis, moto and S3, end to end on the production
# backend, a short fuzz of the protocol decoders, the benchmark scenarios at a
# small size, and the tmux drive of the real binaries.
set -euo pipefail
cd "$(dirname "$0")/.."

# Integration tests fail instead of skipping when their services are missing.
export CI=${CI:-true}

# A state directory of this run's own: at exit it stops only what it started, not
# services that were already answering on those ports.
export CHAT_SERVICES_DIR=${CHAT_SERVICES_DIR:-$(mktemp -d)}
# The cluster too (three masters, a replica each): the topology and replica-read
# tests run on it.
eval "$(scripts/services.sh cluster)"
trap 'scripts/services.sh stop >/dev/null 2>&1 || true' EXIT

echo "== generated code is what go generate makes"
generated() { cat wire/*_easyjson.go | sha256sum; }
before=$(generated)
go generate ./...
if [ "$(generated)" != "$before" ]; then
	echo "go generate changed wire/*_easyjson.go: keep what it made (git diff shows it) and commit it" >&2
	exit 1
fi

echo "== the repository explains itself: no pointer to documents outside it"
if grep -rnE 'seeds? 00[0-9]|DESIGN\.md|\.\./shared' --include='*.go' --include='*.md' . ; then
	echo "the lines above point outside the repository: say it here, or point into docs/" >&2
	exit 1
fi

echo "== nothing test-only in the binaries"
if go list -deps ./cmd/chat ./cmd/chatserver | grep -qx testing; then
	echo "cmd/chat or cmd/chatserver links package testing: move test helpers out of non-test files" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

# Under the race detector: the server hands every message between goroutines
# (reader, worker, store writer, socket writers), and a race there is how a
# message would be lost or duplicated. The suites against Redis, moto and S3
# run after, apart and without it: they wait on those services with short
# timeouts, and race-instrumented tests beside them loaded the machine enough
# to miss some.
services='/server/(dynamo|redis|s3)$|/cmd/chaos$'
echo "== go test -race (everything but the suites against the services)"
race_log=$(mktemp)
if ! go test -race -count=1 -timeout 20m $(go list ./... | grep -Ev "$services") 2>&1 | tee "$race_log"; then
	# CI shows the end of the output: put the first race report and the
	# failures there, whole.
	echo "== the race run failed; its first data race report, then its failures:"
	awk '/^WARNING: DATA RACE/ {p = 1} p {print} p && /^==================$/ {exit}' "$race_log" | head -120
	grep -E '^(--- FAIL|FAIL|panic:)' "$race_log" || true
	exit 1
fi
echo "== go test (Redis/DynamoDB/S3 suites and the chaos run, against the services)"
go test -count=1 -timeout 15m $(go list ./... | grep -E "$services")

echo "== end-to-end tests on the production backend (DynamoDB + Redis + S3)"
CHATSERVER_TEST_BACKEND=production go test -count=1 -timeout 15m ./server/e2e/

# Fuzz budgets are counts of inputs, not durations: with a duration, Go 1.26's
# fuzzing coordinator can fail a clean run with "context deadline exceeded" when
# the time runs out while a worker is busy (go.dev/issue/75804, fixed in Go
# 1.27); a .ci/run failed so on FuzzDecodeRequests. A count has no deadline to
# race. Each count is about the old duration's worth on a 2-core machine, and
# minimizing a new input is capped so that a slow one cannot stretch the run.
fuzz() { go test -run '^$' -fuzz "^$1\$" -fuzztime "$2" -fuzzminimizetime 3s "$3"; }
echo "== fuzz the protocol decoders"
fuzz FuzzDecodeFrame 450000x ./wire/
fuzz FuzzDecodeRequests 400000x ./wire/
echo "== fuzz the HTTP handlers and the terminal sanitiser"
fuzz FuzzHTTPAPI 40000x ./server/httpd/
fuzz FuzzClean 250000x ./internal/termtext/
fuzz FuzzFileName 100000x ./internal/termtext/

for extra in scripts/bench-smoke.sh scripts/tmux-e2e.sh scripts/tmux-restore.sh scripts/quickstart.sh; do
	if [ -x "$extra" ]; then
		echo "== $extra"
		"$extra"
	fi
done
echo "== all tests passed"
