package server

import (
	"testing"
	"time"
)

func TestRetryAfterMsRoundsUp(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 1},
		{-time.Second, 1},
		{time.Microsecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + time.Nanosecond, 2},
		{700*time.Millisecond + 400*time.Microsecond, 701},
		{time.Second, 1000},
	} {
		if got := retryAfterMs(c.d); got != c.want {
			t.Errorf("retryAfterMs(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}
