#!/bin/sh
# Installs (when missing) and starts the services the integration tests use:
# redis-server and moto (DynamoDB and S3 API), each on a port of its own, and on
# request a Redis Cluster of three masters with a replica each. Prints the
# environment the tests read, as export lines on stdout (progress goes to stderr):
#
#   eval "$(scripts/services.sh)"          # start, then go test ./server/redis/...
#   eval "$(scripts/services.sh cluster)"  # also the cluster: CHAT_TEST_REDIS_CLUSTER_ADDR
#   scripts/services.sh stop               # stop what this script started
#
# Ports: free ones, picked at start, unless CHAT_REDIS_PORT / CHAT_MOTO_PORT name
# them. A service is reused only when this script started it: its pid is in the
# state directory (CHAT_SERVICES_DIR, /tmp/chat-services by default) with the port
# it listens on, and it still runs. Something else answering on a port named by a
# variable is an error, never taken for ours: it may be another user's Redis.
# Moto goes to CHAT_MOTO_DIR (/opt/moto) and runs on /usr/bin/python3, not whatever
# python3 is first on PATH. Needs root for apt-get when something must be installed
# (moto comes from Debian 13's package, which runs on Debian 12's Python libraries).
set -eu

REDIS_PORT=${CHAT_REDIS_PORT:-}
MOTO_PORT=${CHAT_MOTO_PORT:-}
MOTO_DIR=${CHAT_MOTO_DIR:-/opt/moto}
STATE=${CHAT_SERVICES_DIR:-/tmp/chat-services}
PY=/usr/bin/python3
MOTO_PATH="$MOTO_DIR/root/usr/lib/python3/dist-packages"

log() { echo "services: $*" >&2; }

# answers PORT: something accepts TCP connections on 127.0.0.1:PORT.
answers() {
	$PY -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5).close()' "$1" 2>/dev/null
}

# free_port [BUS]: a port nothing listens on; with BUS, one whose cluster bus
# port (port + 10000) is free too.
free_port() {
	$PY - "${1:-}" <<'PYEOF'
import random, socket, sys
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
bus = sys.argv[1] == "bus"
for _ in range(200):
    p = random.randint(20000, 55000)
    if free(p) and (not bus or free(p + 10000)):
        print(p)
        sys.exit(0)
sys.exit("no free port found")
PYEOF
}

# ours NAME: the port NAME runs on, when this script started it (pid and port in
# $STATE) and it still runs and answers; nothing otherwise.
ours() {
	[ -f "$STATE/$1.pid" ] && [ -f "$STATE/$1.port" ] || return 1
	kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null || return 1
	answers "$(cat "$STATE/$1.port")" || return 1
	cat "$STATE/$1.port"
}

# pick NAME WANTED: the port to start NAME on: WANTED (a variable named it),
# which must be free, or a free one.
pick() {
	if [ -n "$2" ]; then
		if answers "$2"; then
			log "something that this script did not start (with state in $STATE) answers on port $2: stop it, or choose another port (unset the variable to take a free one)"
			exit 1
		fi
		echo "$2"
	else
		free_port
	fi
}

# wait_for NAME PORT: up to 20 s.
wait_for() {
	i=0
	until answers "$2"; do
		i=$((i + 1))
		if [ $i -gt 200 ]; then
			log "$1 did not come up on port $2; log: $STATE/$1.log"
			tail -20 "$STATE/$1.log" >&2 || true
			exit 1
		fi
		sleep 0.1
	done
}

# cluster_names: the cluster nodes recorded in $STATE.
cluster_names() { (cd "$STATE" 2>/dev/null && ls cluster-*.pid 2>/dev/null | sed 's/\.pid$//') || true; }

stop() { stop_names redis moto $(cluster_names); }

# stop_names NAME...: stop what this script started under those names.
stop_names() {
	for name in "$@"; do
		if [ -f "$STATE/$name.pid" ]; then
			pid=$(cat "$STATE/$name.pid")
			if kill "$pid" 2>/dev/null; then
				# Wait until it is gone: a run started right after this one must not
				# find the port still answering and take a dying service for its own.
				i=0
				while kill -0 "$pid" 2>/dev/null; do
					i=$((i + 1))
					if [ $i -gt 50 ]; then
						kill -9 "$pid" 2>/dev/null || true
						break
					fi
					sleep 0.1
				done
				log "stopped $name (pid $pid)"
			fi
			rm -f "$STATE/$name.pid" "$STATE/$name.port"
		fi
	done
}

apt_updated=
apt_install() {
	[ -n "$apt_updated" ] || { apt-get update -q >/dev/null; apt_updated=1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

install_redis() {
	command -v redis-server >/dev/null && return
	log "installing redis-server"
	apt_install redis-server
}

# install_moto: Debian 12 has no moto; Debian 13's pure-Python package runs on
# Debian 12's Python libraries. Fetched into $MOTO_DIR without touching the system's
# apt sources.
install_moto() {
	[ -d "$MOTO_PATH/moto" ] && return
	log "installing moto into $MOTO_DIR"
	apt_install python3-boto3 python3-botocore python3-flask python3-flask-cors python3-werkzeug \
		python3-jinja2 python3-requests python3-responses python3-xmltodict python3-cryptography \
		python3-dateutil python3-yaml python3-antlr4
	mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$mirror" ] || { log "no Debian mirror found in the apt sources"; exit 1; }
	mkdir -p "$MOTO_DIR/apt/lists/partial" "$MOTO_DIR/apt/cache/archives/partial"
	echo "deb $mirror trixie main" >"$MOTO_DIR/apt/sources.list"
	: >"$MOTO_DIR/apt/status"
	o="-o Dir::Etc::SourceList=$MOTO_DIR/apt/sources.list -o Dir::Etc::SourceParts=/nonexistent"
	o="$o -o Dir::State::Lists=$MOTO_DIR/apt/lists -o Dir::Cache=$MOTO_DIR/apt/cache -o Dir::State::status=$MOTO_DIR/apt/status"
	o="$o -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
	o="$o -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
	o="$o -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
	# shellcheck disable=SC2086 # $o is a list of options
	apt-get $o update -q >/dev/null
	# shellcheck disable=SC2086
	(cd "$MOTO_DIR" && apt-get $o download python3-moto >/dev/null)
	dpkg -x "$MOTO_DIR"/python3-moto_*_all.deb "$MOTO_DIR/root"
}

start() {
	mkdir -p "$STATE"
	# The port checks below and moto itself run on the system's Python.
	[ -x "$PY" ] || apt_install python3
	if port=$(ours redis); then
		log "redis already running on $port (started by this script)"
		REDIS_PORT=$port
	else
		REDIS_PORT=$(pick redis "$REDIS_PORT")
		install_redis
		redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
			--daemonize yes --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log"
		wait_for redis "$REDIS_PORT"
		echo "$REDIS_PORT" >"$STATE/redis.port"
		log "redis started on $REDIS_PORT"
	fi
	if port=$(ours moto); then
		log "moto already running on $port (started by this script)"
		MOTO_PORT=$port
	else
		MOTO_PORT=$(pick moto "$MOTO_PORT")
		install_moto
		# Unknown regions allowed: tests give each store a region of its own, which
		# moto keeps apart (its transactions snapshot and restore a whole region).
		MOTO_ALLOW_NONEXISTENT_REGION=true PYTHONPATH="$MOTO_PATH" nohup setsid $PY -m moto.server -H 127.0.0.1 -p "$MOTO_PORT" \
			>"$STATE/moto.log" 2>&1 </dev/null &
		echo $! >"$STATE/moto.pid"
		wait_for moto "$MOTO_PORT"
		echo "$MOTO_PORT" >"$STATE/moto.port"
		log "moto started on $MOTO_PORT"
	fi
	echo "export CHAT_TEST_REDIS_ADDR=127.0.0.1:$REDIS_PORT"
	echo "export CHAT_TEST_DYNAMO_ENDPOINT=http://127.0.0.1:$MOTO_PORT"
}

# cluster: a Redis Cluster of three masters with one replica each, on free ports
# (each with its bus port, + 10000), for the cluster tests (replica reads among
# them). Prints its first node's address, the way an operator gives a
# configuration endpoint; the tests find the others with CLUSTER NODES.
cluster() {
	mkdir -p "$STATE"
	if port=$(ours cluster-1) && redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; then
		log "redis cluster already running from $port (started by this script)"
		echo "export CHAT_TEST_REDIS_CLUSTER_ADDR=127.0.0.1:$port"
		return
	fi
	# What is left of an earlier cluster (a node died) goes: a new one is made
	# whole, on new ports.
	# shellcheck disable=SC2046 # a list of names
	stop_names $(cluster_names)
	install_redis
	addrs=
	for n in 1 2 3 4 5 6; do
		p=$(free_port bus)
		# A fresh directory: a nodes.conf left from an earlier cluster would rejoin it.
		rm -rf "$STATE/cluster-$n"
		mkdir -p "$STATE/cluster-$n"
		redis-server --port "$p" --bind 127.0.0.1 --save "" --appendonly no \
			--cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
			--dir "$STATE/cluster-$n" --daemonize yes --pidfile "$STATE/cluster-$n.pid" --logfile "$STATE/cluster-$n.log"
		wait_for "cluster-$n" "$p"
		echo "$p" >"$STATE/cluster-$n.port"
		addrs="$addrs 127.0.0.1:$p"
	done
	# shellcheck disable=SC2086 # $addrs is a list
	redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes >"$STATE/cluster-create.log" 2>&1 ||
		{ log "redis-cli --cluster create failed; log: $STATE/cluster-create.log"; tail -20 "$STATE/cluster-create.log" >&2; exit 1; }
	# Ready when every node says ok and every replica has its master's data
	# link up: a read sent to a replica before that is answered by a node that
	# does not yet serve its slots.
	i=0
	for a in $addrs; do
		p=${a#127.0.0.1:}
		until redis-cli -p "$p" cluster info | grep -q '^cluster_state:ok' &&
			! redis-cli -p "$p" info replication | grep -q '^master_link_status:down'; do
			i=$((i + 1))
			if [ $i -gt 300 ]; then
				log "the cluster did not settle; node $p says:"
				redis-cli -p "$p" cluster info >&2 || true
				exit 1
			fi
			sleep 0.1
		done
	done
	first=$(cat "$STATE/cluster-1.port")
	log "redis cluster (3 masters, 3 replicas) started:$addrs"
	echo "export CHAT_TEST_REDIS_CLUSTER_ADDR=127.0.0.1:$first"
}

case "${1:-start}" in
start) start ;;
cluster)
	start
	cluster
	;;
stop) stop ;;
*)
	echo "usage: $0 [start|cluster|stop]" >&2
	exit 2
	;;
esac
