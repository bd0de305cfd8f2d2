#!/usr/bin/env bash
# search-bench.sh times the real `chat search --with peer0 WORD` from
# outside: it builds chat, seeds a home with two conversations of 50,000
# cached messages each (cmd/chat TestSeedMeasurementHome, a server address
# nothing answers on: the search reads the cache only), indexes it once,
# then runs each search RUNS times and prints the wall clock and the
# process's CPU (user+sys, from wait4) at p50 and p99, beside the same for
# `chat search` of a word in no message (process start and cache open).
#
# Usage: scripts/search-bench.sh [RUNS]   (default 30)
#        CHAT_BIN=PATH times that chat binary (an older build, to compare)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${1:-30}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/chat-search-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

(cd "$ROOT" && go build -o "$TMP/bin/" ./cmd/chat)
CHAT=${CHAT_BIN:-$TMP/bin/chat}
(cd "$ROOT" && CHAT_SEED_HOME=$TMP/home CHAT_SEED_SHAPE=2x50000 go test ./cmd/chat -run '^TestSeedMeasurementHome$' -count=1 >/dev/null)
export CHAT_HOME=$TMP/home
"$CHAT" search --with peer0 warmup >/dev/null 2>&1 || true # indexes the cache once

python3 - "$CHAT" "$RUNS" <<'PY'
import os, subprocess, sys, time
chat, runs = sys.argv[1], int(sys.argv[2])
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]
for label, word in [("a word in every message", "words"), ("a word in one message", "12345"), ("a word in none", "zzzzqq")]:
    wall, cpu = [], []
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.Popen([chat, "search", "--with", "peer0", word], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((ru.ru_utime + ru.ru_stime) * 1000)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"chat search {word}: exit {os.waitstatus_to_exitcode(status)}")
    print(f"{label:26} wall p50 {pct(wall, 50):6.1f} ms  p99 {pct(wall, 99):6.1f} ms   CPU p50 {pct(cpu, 50):6.1f} ms  p99 {pct(cpu, 99):6.1f} ms")
print("load average:", open("/proc/loadavg").read().split()[:3])
PY
