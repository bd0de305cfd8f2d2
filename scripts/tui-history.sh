#!/usr/bin/env bash
# tui-history.sh times big histories in the real `chat` TUI from outside, in
# a private tmux server at 120×40, polling the pane (tmux capture-pane):
#   open   opening a chat of 50,000 cached messages at its first unread
#          (5,000 and 20,000 unread): enter to the first unread message on
#          screen; a fresh copy of the home for each run, since opening reads;
#   g      g in that chat (opened at its newest): the key to "message 1 of"
#          on screen;
#   rss    the chat process's VmRSS: inbox, chat open, after g, after 300
#          page-downs from there (15,000 lines), back at the newest (G);
#   start  start-up to the inbox with a live server (chatserver on loopback,
#          a real login; bob's message on screen), beside a shell printing a
#          word in a new pane (tmux and the polling alone).
# The cache is seeded by cmd/chat TestSeedMeasurementHome with a server
# address nothing answers on (so the open, g and rss parts read the cache
# alone, as offline).
#
# Usage: scripts/tui-history.sh [RUNS]   (default 10)
#        CHAT_BIN=PATH times that chat binary (an older build, to compare)
#        OPEN_DELAY=SECONDS waits that long after the inbox shows before the
#        open's enter (default 0: pressed while the client is still starting)
#        start-up alone: scripts/tui-start.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${1:-10}
. "$ROOT/scripts/tuibench-lib.sh"
tuibench_setup tui-history
for u in 0 5000 20000; do
	(cd "$ROOT" && CHAT_SEED_HOME=$TMP/home-$u CHAT_SEED_SHAPE=1x50000 CHAT_SEED_UNREAD=$u \
		go test ./cmd/chat -run '^TestSeedMeasurementHome$' -count=1 >/dev/null)
done

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SERVER=http://127.0.0.1:$PORT
"$TMP/bin/chatserver" --addr "127.0.0.1:$PORT" --data-dir "$TMP/data" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fs "$SERVER/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
echo alice-password-1 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$TMP/bin/chat" register alice --password-stdin >/dev/null
code=$(CHAT_SERVER=$SERVER CHAT_HOME=$TMP/live "$TMP/bin/chat" invite)
echo bob-password-12 | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" register bob --invite "$code" --password-stdin >/dev/null
echo "hello from bob" | CHAT_SERVER=$SERVER CHAT_HOME=$TMP/bob "$TMP/bin/chat" send --to alice >/dev/null

python3 -u - "$CHAT" "$TMP" "$RUNS" "${OPEN_DELAY:-0}" <<'PY'
import os, shutil, subprocess, sys, time
chat, tmp, runs, open_delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
# A tmux server per start: one killed and started again at once refuses
# ("server exited unexpectedly").
starts = 0
T = ["tmux", "-S", os.path.join(tmp, "tmux-0.sock"), "-f", "/dev/null"]

def tmux(*a):
    return subprocess.run(T + list(a), check=True, capture_output=True, text=True).stdout

def screen():
    return tmux("capture-pane", "-p", "-t", "m")

def wait_for(text, timeout=300):
    t = time.perf_counter()
    while text not in screen():
        if time.perf_counter() - t > timeout:
            sys.exit(f"{text!r} not on screen after {timeout} s:\n{screen()}")
    return time.perf_counter()

def start(home, cmd=None):
    global T, starts
    subprocess.run(T + ["kill-server"], capture_output=True)
    starts += 1
    T = ["tmux", "-S", os.path.join(tmp, f"tmux-{starts}.sock"), "-f", "/dev/null"]
    cmd = cmd or f"exec env TERM=xterm-256color CHAT_HOME={home} {chat}"
    t = time.perf_counter()
    tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "m", cmd)
    return t

def pid():
    return int(tmux("list-panes", "-t", "m", "-F", "#{pane_pid}").strip())

def rss():
    for l in open(f"/proc/{pid()}/status"):
        if l.startswith("VmRSS"):
            return int(l.split()[1]) // 1024
    return 0

def keys(*k):
    tmux("send-keys", "-t", "m", *k)

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]

def report(label, xs):
    print(f"{label:44} p50 {pct(xs, 50):8.1f} ms  max {max(xs):8.1f} ms  ({len(xs)} runs)")

for unread in (5000, 20000):
    first = 50000 - unread + 1
    xs = []
    for _ in range(runs):
        home = os.path.join(tmp, "run")
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(os.path.join(tmp, f"home-{unread}"), home)
        start(home)
        wait_for("peer0")
        time.sleep(open_delay)
        t = time.perf_counter()
        keys("Enter")
        xs.append((wait_for(f"message {first} of peer0") - t) * 1000)
    report(f"open at the first of {unread} unread", xs)

home = os.path.join(tmp, "home-0")
xs = []
for _ in range(runs):
    start(home)
    wait_for("peer0")
    keys("Enter")
    wait_for("message 50000 of peer0")
    keys("Escape")
    time.sleep(0.2)
    t = time.perf_counter()
    keys("g")
    xs.append((wait_for("message 1 of peer0") - t) * 1000)
report("g over 50,000 cached", xs)

start(home)
wait_for("peer0")
r = {"inbox": rss()}
keys("Enter"); wait_for("message 50000 of peer0"); keys("Escape"); time.sleep(0.5)
r["chat open"] = rss()
keys("g"); wait_for("message 1 of peer0"); time.sleep(0.5)
r["after g"] = rss()
for i in range(300):
    keys("PageDown")
    if i % 50 == 49:
        time.sleep(0.5)
time.sleep(2)
r["after 300 page-downs"] = rss()
keys("G"); wait_for("message 50000 of peer0"); time.sleep(0.5)
r["back at the newest (G)"] = rss()
print("RSS of the chat process, MB: " + ", ".join(f"{k} {v}" for k, v in r.items()))

live, base = [], []
for _ in range(runs):
    t = start(os.path.join(tmp, "live"))
    live.append((wait_for("hello from bob") - t) * 1000)
    t = start(None, "sh -c 'echo ready; sleep 30'")
    base.append((wait_for("ready") - t) * 1000)
report("start to the inbox on screen, server live", live)
report("a shell printing a word (tmux and polling)", base)
print("load average:", open("/proc/loadavg").read().split()[:3])
PY
