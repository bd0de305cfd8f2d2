package dynamo

import (
	"time"

	"github.com/chatterm/chat/server/breaker"
)

// BreakerOptions tune the circuit breaker around DynamoDB; zero fields take the
// defaults below.
type BreakerOptions = breaker.Options

// breakerDefaults: the design's SLO-driven threshold, 1% errors over 30 s (with at
// least 100 requests, so one failure at night does not open it).
var breakerDefaults = breaker.Options{Window: 30 * time.Second, MinRequests: 100, FailureRatio: 0.01}
