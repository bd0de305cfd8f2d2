package client

import (
	"testing"
	"time"
)

// A stream's batches are held longer the longer it lasts: none for a
// message after a quiet spell, then receiveHold for steadyAfter batches,
// receiveHoldSteady up to longAfter, and receiveHoldLong after; a quiet
// spell starts the count again.
func TestHoldGrowsWithTheStream(t *testing.T) {
	var p receivePace
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	// batch is one batch of a stream: it comes 5 ms after the last commit,
	// waits its hold, and is committed.
	batch := func() time.Duration {
		now = now.Add(5 * time.Millisecond)
		h := p.hold(now)
		now = now.Add(h)
		p.stored(now)
		return h
	}
	p.stored(now.Add(-time.Hour))
	if h := p.hold(now); h != 0 {
		t.Fatalf("a message after a quiet spell held %v, want 0", h)
	}
	p.stored(now)
	for i := 1; i <= longAfter+5; i++ {
		want := receiveHold
		switch {
		case i > longAfter:
			want = receiveHoldLong
		case i > steadyAfter:
			want = receiveHoldSteady
		}
		if h := batch(); h != want {
			t.Fatalf("batch %d of a stream held %v, want %v", i, h, want)
		}
	}
	// A quiet spell (the stream stopped for receiveStreaming): the next
	// message is stored at once, and the stream's count starts again.
	now = now.Add(receiveStreaming)
	if h := p.hold(now); h != 0 {
		t.Fatalf("a message after a pause of %v held %v, want 0", receiveStreaming, h)
	}
	p.stored(now)
	if h := batch(); h != receiveHold {
		t.Fatalf("the first batch of the next stream held %v, want %v", h, receiveHold)
	}
}
