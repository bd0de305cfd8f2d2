#!/bin/sh
# Installs (when missing) and starts the services the integration tests use:
# redis-server and moto (DynamoDB and S3 API), each on a port of its own. Idempotent:
# a service already answering on its port is left alone. Prints the environment the
# tests read, as export lines on stdout (progress goes to stderr):
#
#   eval "$(scripts/services.sh)"        # start, then go test ./server/redis/...
#   scripts/services.sh stop             # stop what this script started
#
# Ports: CHAT_REDIS_PORT (6390), CHAT_MOTO_PORT (5055). Moto goes to CHAT_MOTO_DIR
# (/opt/moto) and runs on /usr/bin/python3, not whatever python3 is first on PATH.
# Needs root for apt-get when something must be installed (moto comes from
# Debian 13's package, which runs on Debian 12's Python libraries).
set -eu

REDIS_PORT=${CHAT_REDIS_PORT:-6390}
MOTO_PORT=${CHAT_MOTO_PORT:-5055}
MOTO_DIR=${CHAT_MOTO_DIR:-/opt/moto}
STATE=${CHAT_SERVICES_DIR:-/tmp/chat-services}
PY=/usr/bin/python3
MOTO_PATH="$MOTO_DIR/root/usr/lib/python3/dist-packages"

log() { echo "services: $*" >&2; }

# answers PORT: something accepts TCP connections on 127.0.0.1:PORT.
answers() {
	$PY -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5).close()' "$1" 2>/dev/null
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

stop() {
	for name in redis moto; do
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
			rm -f "$STATE/$name.pid"
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
	if answers "$REDIS_PORT"; then
		log "redis already answering on $REDIS_PORT"
	else
		install_redis
		redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
			--daemonize yes --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log"
		wait_for redis "$REDIS_PORT"
		log "redis started on $REDIS_PORT"
	fi
	if answers "$MOTO_PORT"; then
		log "moto already answering on $MOTO_PORT"
	else
		install_moto
		# Unknown regions allowed: tests give each store a region of its own, which
		# moto keeps apart (its transactions snapshot and restore a whole region).
		MOTO_ALLOW_NONEXISTENT_REGION=true PYTHONPATH="$MOTO_PATH" nohup setsid $PY -m moto.server -H 127.0.0.1 -p "$MOTO_PORT" \
			>"$STATE/moto.log" 2>&1 </dev/null &
		echo $! >"$STATE/moto.pid"
		wait_for moto "$MOTO_PORT"
		log "moto started on $MOTO_PORT"
	fi
	echo "export CHAT_TEST_REDIS_ADDR=127.0.0.1:$REDIS_PORT"
	echo "export CHAT_TEST_DYNAMO_ENDPOINT=http://127.0.0.1:$MOTO_PORT"
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 [start|stop]" >&2
	exit 2
	;;
esac
