package httpd

import (
	"testing"
	"time"
)

// SetWriteTimeout shortens how long a burst of socket writes may block, until
// the test ends.
func SetWriteTimeout(tb testing.TB, d time.Duration) {
	shortWriteTimeout.Store(int64(d))
	tb.Cleanup(func() { shortWriteTimeout.Store(0) })
}
