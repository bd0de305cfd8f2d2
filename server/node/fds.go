package node

import (
	"log/slog"
	"syscall"
	"time"
)

// fdReserve is how many file descriptors the connection caps leave for
// everything else: the database, Redis and DynamoDB connections, blob files,
// log files, and the moment a refused connection holds one before it is closed.
// With it kept back the listener never runs out, so health checks and other
// addresses are still accepted while one address sits at its cap.
const fdReserve = 1024

// Default time bounds of a connection (docs/security.md). 30 s idle is longer
// than a person's pause between commands in a script and shorter than the
// 90 s Go's clients keep an idle connection.
const (
	DefaultIdleTimeout = 30 * time.Second
	DefaultBodyTimeout = 30 * time.Second
)

// fdBudget is the default cap on connections in all, and on live WebSockets:
// the process's open-file limit less fdReserve. (Go raises the soft limit to
// the hard one at start-up on Linux, so the soft limit read here is what the
// process can use.)
func fdBudget(log *slog.Logger) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the open-file limit; no cap on connections in all", "err", err)
		return -1
	}
	if lim.Cur > 1<<30 { // unlimited, or as good as
		return -1
	}
	n := int64(lim.Cur) - fdReserve
	if n < 64 {
		log.Warn("the open-file limit leaves little room for connections; raise ulimit -n", "limit", lim.Cur)
		n = 64
	}
	return int(n)
}
