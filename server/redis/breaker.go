package redis

import (
	"time"

	"github.com/chatterm/chat/server/breaker"
)

// BreakerOptions tune the circuit breaker around Redis; zero fields take the
// defaults below.
type BreakerOptions = breaker.Options

// breakerDefaults: Redis is a cache and counter service with a fallback for every
// role, so it may trip early: half the calls failing over 10 s (at least 20).
var breakerDefaults = breaker.Options{Window: 10 * time.Second, MinRequests: 20, FailureRatio: 0.5}
