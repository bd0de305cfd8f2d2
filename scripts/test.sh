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
eval "$(scripts/services.sh start)"
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

echo "== fuzz the protocol decoders"
go test -run '^$' -fuzz '^FuzzDecodeFrame$' -fuzztime 15s ./wire/
go test -run '^$' -fuzz '^FuzzDecodeRequests$' -fuzztime 10s ./wire/
echo "== fuzz the HTTP handlers and the terminal sanitiser"
go test -run '^$' -fuzz '^FuzzHTTPAPI$' -fuzztime 15s ./server/httpd/
go test -run '^$' -fuzz '^FuzzClean$' -fuzztime 5s ./internal/termtext/

for extra in scripts/bench-smoke.sh scripts/tmux-e2e.sh scripts/quickstart.sh; do
	if [ -x "$extra" ]; then
		echo "== $extra"
		"$extra"
	fi
done
echo "== all tests passed"
