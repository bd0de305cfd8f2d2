#!/usr/bin/env bash
# media-flood.sh measures what one member's upload flood stores and costs
# everyone else: it starts chatserver (embedded, on a free port, flags from
# $EXTRA), and for 14 s four loops upload 32 MiB files as one user as fast as
# the server lets them, while another user sends 60 messages (curl timings).
# It prints the flooder's GET /v1/media/usage, the blobs on disk, and the
# sends' p50/p90. The loops run on the same machine: their CPU counts too.
#
#   scripts/media-flood.sh                                        # the defaults
#   EXTRA="--media-rate -1 --media-quota -1" scripts/media-flood.sh   # no byte limits
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
D=$(mktemp -d)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$D/bin/" ./cmd/chatserver)
head -c 33554432 /dev/urandom >"$D/big.bin"
# shellcheck disable=SC2086 # EXTRA is a list of flags
"$D/bin/chatserver" --addr 127.0.0.1:0 --data-dir "$D/data" --registration open --auth-rate -1 ${EXTRA:-} >"$D/log" 2>&1 &
pids+=($!)
PORT=""
for _ in $(seq 100); do
	PORT=$(sed -n 's/.*chatserver listening.*addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$D/log" 2>/dev/null | head -n 1)
	[[ -n $PORT ]] && break
	sleep 0.1
done
[[ -n $PORT ]] || { echo "media-flood: chatserver did not start: $(cat "$D/log")" >&2; exit 1; }
U=http://127.0.0.1:$PORT
token() { curl -s -X POST "$U/v1/register" -d "{\"user_id\":\"$1\",\"password\":\"password-$1\"}" | sed 's/.*"token":"\([^"]*\)".*/\1/'; }
token admin >/dev/null
M=$(token mallory)
B=$(token bob)
token carol >/dev/null
CONV=$(curl -s -X POST -H "Authorization: Bearer $B" "$U/v1/conversations" -d '{"type":"direct","members":["carol"]}' |
	sed 's/.*"conversation_id":"\([^"]*\)".*/\1/')
end=$((SECONDS + 14))
flood() {
	while [[ $SECONDS -lt $end ]]; do
		url=$(curl -s -X POST -H "Authorization: Bearer $M" "$U/v1/media" -d '{"content_type":"application/octet-stream","size":33554432}' |
			sed -n 's/.*"upload_url":"\([^"]*\)".*/\1/p' | sed 's/\\u0026/\&/g')
		if [[ -n $url ]]; then
			curl -s -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$D/big.bin" "$url"
		fi
	done
}
for _ in 1 2 3 4; do
	flood &
	pids+=($!)
done
sleep 1
for i in $(seq 60); do
	curl -s -o /dev/null -w '%{time_total}\n' -X POST -H "Authorization: Bearer $B" "$U/v1/conversations/$CONV/messages" \
		-d "{\"message_id\":\"m$i\",\"content\":\"hi $i\"}" >>"$D/lat"
	sleep 0.15
done
wait "${pids[@]:1}"
curl -s -H "Authorization: Bearer $M" "$U/v1/media/usage"
echo
echo "blobs on disk: $(du -sm "$D/data/blobs" | cut -f1) MiB"
sort -n "$D/lat" | awk '{a[NR]=$1} END {printf "bob'"'"'s sends during the flood: n=%d p50 %.0f ms p90 %.0f ms\n", NR, a[int(NR*0.5)]*1000, a[int(NR*0.9)]*1000}'
