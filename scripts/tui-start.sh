#!/usr/bin/env bash
# tui-start.sh times the real `chat` TUI's start-up to a painted inbox with a
# live server (chatserver on loopback, a real login, bob's message in the
# cache from a first run not counted), from outside: a new pane of a private
# tmux server at 120×40, polled with capture-pane until bob's message shows.
# Beside each start, interleaved, three baselines started the same way: a shell
# printing a word (tmux and the polling alone), a no-op Go process (a hello
# built here: the issue's "no-op process start", a Go runtime's start and
# nothing else, started through exec and env as chat is), and `chat --help`
# (the same binary's process start and package init, no terminal UI).
# Chat's own part is the inbox on screen minus the no-op process's word. The binary's own
# part, from runTUI to the inbox read from the cache, is the `since_start` of
# the "inbox loaded from cache" line in tui.log; with a chat that writes
# CHAT_STARTTRACE (cmd/chat/starttrace.go), also main to the inbox in the
# model and to its frame written to the terminal, the new pane to main, and
# the CPU the process used and its minor page faults before main and to that
# frame (getrusage's: a page populated ahead by madvise counts as a fault
# there too; scripts/tui-start-perf.sh counts the faults taken as traps).
# Then typing, TYPING_RUNS times (default 3): bob's chat opened, 2,000
# characters sent as keystrokes (send-keys -l, 200 at a time: a paste without
# bracketed paste), timed from the last send until the last five are on
# screen, with the chat process's CPU (utime+stime) meanwhile.
#
# Usage: scripts/tui-start.sh [RUNS]   (default 20)
#        CHAT_BIN=PATH times that chat binary (an older build, to compare)
#        CHAT_CPUPROFILE=FILE profiles the TUI starts (the last run's profile
#        is kept)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${1:-20}
. "$ROOT/scripts/tuibench-lib.sh"
tuibench_setup tui-start

# The no-op process: a Go program that prints its word and waits, so the
# pane stays open while it is read, as chat's does.
mkdir -p "$TMP/noop"
cat >"$TMP/noop/main.go" <<'GO'
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("ready")
	time.Sleep(30 * time.Second)
}
GO
(cd "$TMP/noop" && go build -o "$TMP/bin/noop" main.go)

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SERVER=http://127.0.0.1:$PORT
"$TMP/bin/chatserver" --addr "127.0.0.1:$PORT" --data-dir "$TMP/data" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fs "$SERVER/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
# alice's home is the timed binary's own: an older build refuses a cache a
# newer one has migrated.
echo alice-password-1 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$CHAT" register alice --password-stdin >/dev/null
code=$(CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$CHAT" invite)
echo bob-password-12 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" register bob --invite "$code" --password-stdin >/dev/null
echo "hello from bob" | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" send --to alice >/dev/null

python3 -u - "$CHAT" "$TMP" "$RUNS" "${CHAT_CPUPROFILE:-}" "${TYPING_RUNS:-3}" <<'PY'
import os, re, subprocess, sys, time
chat, tmp, runs, prof, typing_runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
trace = os.path.join(tmp, "starttrace")
home = os.path.join(tmp, "live")
# A tmux server per start: one killed and started again at once refuses
# ("server exited unexpectedly").
starts = 0
T = ["tmux", "-S", os.path.join(tmp, "tmux-0.sock"), "-f", "/dev/null"]

def tmux(*a):
    return subprocess.run(T + list(a), check=True, capture_output=True, text=True).stdout

def wait_for(text, timeout=60):
    t = time.perf_counter()
    while text not in tmux("capture-pane", "-p", "-t", "m"):
        if time.perf_counter() - t > timeout:
            sys.exit(f"{text!r} not on screen after {timeout} s")
    return time.perf_counter()

spawned = []  # the wall clock of each new-session, to read the traces against

def timed(cmd, text):
    global T, starts
    subprocess.run(T + ["kill-server"], capture_output=True)
    starts += 1
    T = ["tmux", "-S", os.path.join(tmp, f"tmux-{starts}.sock"), "-f", "/dev/null"]
    spawned.append(time.time())
    t = time.perf_counter()
    tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "m", cmd)
    return (wait_for(text) - t) * 1000

def read_trace(t0):
    """main, the inbox in the model and its frame written, in ms from the new pane."""
    at = {}
    try:
        lines = open(trace).read().splitlines()
    except FileNotFoundError:
        return at
    os.remove(trace)
    for line in lines:
        f = line.split(" ", 7)
        if len(f) < 8 or f[6] != "faults":  # a chat from before session 20 traces no faults
            f = f[:5] + ["-1", "faults", line.split(" ", 5)[5]]
        us, _, _, cpu, _, faults, _, what = f
        ms = (int(us) / 1e6 - t0) * 1000
        if what == "main":
            at.setdefault("main", ms)
            at.setdefault("main cpu", float(cpu))
            at.setdefault("main faults", int(faults))
        elif what.startswith("Update tui.inboxLoadedMsg"):
            at.setdefault("inbox", ms)
        elif "inbox" in at and what.startswith("write ") and int(what.split()[1]) > 100:
            at.setdefault("frame", ms)
            at.setdefault("frame cpu", float(cpu))
            at.setdefault("frame faults", int(faults))
    return at

env = f"env TERM=xterm-256color CHAT_HOME={home} CHAT_STARTTRACE={trace}"
if prof:
    env += f" CHAT_CPUPROFILE={prof}"
tui = f"exec {env} {chat}"
version = f"sh -c '{chat} --help >/dev/null 2>&1; echo ready; sleep 30'"
shell = "sh -c 'echo ready; sleep 30'"
noop = f"exec {env} {os.path.join(tmp, 'bin', 'noop')}"

# The first start syncs bob's message into the cache; every later one paints
# it from the cache.
timed(tui, "hello from bob")
log = os.path.join(home, "tui.log")
skip = sum(1 for _ in open(log))

if os.path.exists(trace):
    os.remove(trace)
live, ver, base, nop, traced = [], [], [], [], []
for _ in range(runs):
    live.append(timed(tui, "hello from bob"))
    traced.append(read_trace(spawned[-1]))
    ver.append(timed(version, "ready"))
    base.append(timed(shell, "ready"))
    nop.append(timed(noop, "ready"))
subprocess.run(T + ["kill-server"], capture_output=True)
inner = []
for line in list(open(log))[skip:]:
    m = re.search(r"inbox loaded from cache.* since_start=([0-9.]+)(µs|ms|s)", line)
    if m:
        inner.append(float(m.group(1)) * {"µs": 0.001, "ms": 1, "s": 1000}[m.group(2)])

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]

def report(label, xs):
    if xs:
        print(f"{label:52} p50 {pct(xs, 50):7.1f} ms  p90 {pct(xs, 90):7.1f} ms  ({len(xs)} runs)")

def faults(label, xs):
    if xs:
        print(f"{label:52} p50 {pct(xs, 50):7d}     p90 {pct(xs, 90):7d}     ({len(xs)} runs)")

report("new pane to the inbox on screen, server live", live)
report("in the binary: runTUI to the inbox from the cache", inner)
traced = [a for a in traced if "frame" in a]
report("new pane to main (CHAT_STARTTRACE)", [a["main"] for a in traced])
report("in the binary: main to the inbox in the model", [a["inbox"] - a["main"] for a in traced])
report("in the binary: main to the inbox's frame written", [a["frame"] - a["main"] for a in traced])
report("CPU of the process before main", [a["main cpu"] for a in traced])
report("CPU of the process to the inbox's frame written", [a["frame cpu"] for a in traced])
faults("minor page faults before main", [a["main faults"] for a in traced if a["main faults"] >= 0])
faults("minor page faults to the inbox's frame written", [a["frame faults"] for a in traced if a["frame faults"] >= 0])
report("new pane to `chat --help` done", ver)
report("new pane to a shell's word (tmux and polling)", base)
report("new pane to a no-op Go process's word", nop)
if live and nop:
    # Chat's own part: each start less the no-op start beside it.
    report("chat's part: the inbox less the no-op beside it", [a - b for a, b in zip(live, nop)])
print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

text = ("the quick brown fox jumps over the lazy dog " * 50)[:1995] + "ZZEND"
for _ in range(typing_runs):
    timed(tui, "hello from bob")
    tmux("send-keys", "-t", "m", "Enter")
    wait_for("direct")  # the chat's header: "bob  direct"
    time.sleep(1)
    pid = int(tmux("list-panes", "-t", "m", "-F", "#{pane_pid}").strip())
    c0 = cpu(pid)
    for i in range(0, len(text), 200):
        tmux("send-keys", "-t", "m", "-l", text[i:i + 200])
    t = time.perf_counter()
    shown = (wait_for("ZZEND") - t) * 1000
    time.sleep(0.3)
    print(f"typing 2,000 characters: on screen {shown:.0f} ms after the last key, {cpu(pid) - c0:.2f} s of CPU")
    tmux("send-keys", "-t", "m", "C-u")  # no draft left for the next start
    time.sleep(0.3)
subprocess.run(T + ["kill-server"], capture_output=True)
print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
PY
