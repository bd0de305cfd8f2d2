package node

import (
	"log/slog"
	"syscall"
)

// fdReserve is how many file descriptors the WebSocket cap leaves for
// everything else: health checks, logins and other plain requests, the
// database, Redis and DynamoDB connections, log files.
const fdReserve = 1024

// socketBudget is the default cap on live WebSockets: the process's open-file
// limit less fdReserve. (Go raises the soft limit to the hard one at start-up on
// Linux, so the soft limit read here is what the process can use.)
func socketBudget(log *slog.Logger) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the open-file limit; no cap on WebSockets in all", "err", err)
		return -1
	}
	if lim.Cur > 1<<30 { // unlimited, or as good as
		return -1
	}
	n := int64(lim.Cur) - fdReserve
	if n < 64 {
		log.Warn("the open-file limit leaves little room for WebSockets; raise ulimit -n", "limit", lim.Cur)
		n = 64
	}
	return int(n)
}
