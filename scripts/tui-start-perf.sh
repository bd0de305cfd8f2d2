#!/usr/bin/env bash
# tui-start-perf.sh counts what whole TUI starts cost the kernel, under
# `perf stat`: page faults taken as traps and the process's CPU (task-clock),
# for several chat binaries alternated start by start, against a live
# chatserver on loopback (the same setting as scripts/tui-start.sh: alice's
# cache holds bob's message, a new tmux pane at 120×40 per start). Each start
# runs until bob's message is on screen and 0.3 s more, then gets SIGTERM.
# Each binary has a home of its own, logged in and synced by its first start
# (not counted): an older build refuses a cache a newer one has migrated.
#
# Trap faults are what the start's fresh memory costs on a virtual machine
# (15–150 µs each here). getrusage's minor faults, which CHAT_STARTTRACE and
# scripts/tui-start.sh report, count a page populated by madvise as a fault
# too; perf's page-faults event counts only the traps (docs/tui.md "Time to
# a painted inbox with the server live").
#
# Usage: scripts/tui-start-perf.sh RUNS LABEL=BIN[:ENV] ...
#   e.g. scripts/tui-start-perf.sh 20 base=/tmp/base/chat new=/tmp/new/chat
#   ENV is put before the binary: new=/tmp/new/chat:CHAT_STARTTRACE=/tmp/t
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${1:?usage: $0 RUNS LABEL=BIN[:ENV] ...}
shift
[ $# -gt 0 ] || { echo "usage: $0 RUNS LABEL=BIN[:ENV] ..." >&2; exit 2; }
command -v perf >/dev/null || { echo "$0: perf is not installed" >&2; exit 1; }
. "$ROOT/scripts/tuibench-lib.sh"
tuibench_setup tui-start-perf

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SERVER=http://127.0.0.1:$PORT
"$TMP/bin/chatserver" --addr "127.0.0.1:$PORT" --data-dir "$TMP/data" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fs "$SERVER/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo alice-password-1 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$TMP/bin/chat" register alice --password-stdin >/dev/null
code=$(CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$TMP/bin/chat" invite)
echo bob-password-12 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" register bob --invite "$code" --password-stdin >/dev/null
echo "hello from bob" | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" send --to alice >/dev/null

python3 -u - "$TMP" "$RUNS" "$SERVER" "$@" <<'PY'
import os, statistics, subprocess, sys, time
tmp, runs, server, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
out = os.path.join(tmp, "perf.out")
starts = 0

def pane(cmd):
    """A tmux server of its own for each start (one killed and started again at once refuses)."""
    global starts
    starts += 1
    T = ["tmux", "-S", os.path.join(tmp, f"tmux-{starts}.sock"), "-f", "/dev/null"]
    subprocess.run(T + ["new-session", "-d", "-x", "120", "-y", "40", "-s", "m", cmd], check=True)
    return T

def start(label, binary, env):
    home = os.path.join(tmp, "home-" + label)
    if os.path.exists(out):
        os.remove(out)
    T = pane(f"exec env TERM=xterm-256color CHAT_HOME={home} {env} "
             f"perf stat -x, -o {out} -e page-faults,task-clock {binary}")
    t = time.time()
    while "hello from bob" not in subprocess.run(T + ["capture-pane", "-p", "-t", "m"], capture_output=True, text=True).stdout:
        if time.time() - t > 60:
            sys.exit(f"{binary}: bob's message not on screen after 60 s")
    time.sleep(0.3)
    perf = subprocess.run(T + ["list-panes", "-t", "m", "-F", "#{pane_pid}"], capture_output=True, text=True).stdout.strip()
    for chat in subprocess.run(["pgrep", "-P", perf], capture_output=True, text=True).stdout.split():
        os.kill(int(chat), 15)
    for _ in range(200):
        if os.path.exists(out) and "task-clock" in open(out).read():
            break
        time.sleep(0.05)
    subprocess.run(T + ["kill-server"], capture_output=True)
    got = {}
    for line in open(out):
        f = line.strip().split(",")
        if len(f) > 2 and f[0][:1].isdigit():
            got[f[2]] = float(f[0])
    return got

parsed = []
for c in cases:
    label, spec = c.split("=", 1)
    binary, _, env = spec.partition(":")
    parsed.append((label, binary, env))
for label, binary, env in parsed:
    subprocess.run([binary, "login", "alice", "--password-stdin"], input="alice-password-1\n", text=True, check=True,
                   capture_output=True, env=dict(os.environ, CHAT_SERVER=server, CHAT_HOME=os.path.join(tmp, "home-" + label)))
    start(label, binary, env)  # syncs bob's message into this binary's cache
res = {label: [] for label, _, _ in parsed}
for _ in range(runs):
    for label, binary, env in parsed:
        res[label].append(start(label, binary, env))
for label, _, _ in parsed:
    # A start whose perf ended without its counts (killed with the pane) is
    # left out, and said.
    xs = [x for x in res[label] if "page-faults" in x and "task-clock" in x]
    if len(xs) < len(res[label]):
        print(f"{label}: {len(res[label]) - len(xs)} starts without perf's counts, left out")
    if not xs:
        continue
    faults = sorted(x["page-faults"] for x in xs)
    cpu = sorted(x["task-clock"] for x in xs)
    print(f"{label:12} {len(xs)} starts: trap page faults p50 {statistics.median(faults):6.0f} "
          f"(min {faults[0]:.0f}, max {faults[-1]:.0f});  CPU (task-clock) p50 {statistics.median(cpu):6.1f} ms "
          f"(min {cpu[0]:.1f}, max {cpu[-1]:.1f})")
print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
PY
