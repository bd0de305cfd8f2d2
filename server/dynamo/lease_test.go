package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/server/dynamo"
)

// TestLease: of two nodes taking the lease together only one gets it; the
// holder renews it, the other is refused until it expires (its holder died),
// then takes it over; a release lets the next taker in at once.
func TestLease(t *testing.T) {
	meter := dynamo.NewMeter()
	s := open(t, dynamo.Options{Meter: meter})
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	ttl := 90 * time.Minute

	var wg sync.WaitGroup
	got := make([]bool, 2)
	for i, owner := range []string{"node-a", "node-b"} {
		wg.Go(func() {
			ok, err := s.TakeLease(ctx, "archiver", owner, t0, t0.Add(ttl))
			if err != nil {
				t.Error(err)
			}
			got[i] = ok
		})
	}
	wg.Wait()
	if got[0] == got[1] {
		t.Fatalf("two nodes taking the lease together: %v; want exactly one", got)
	}
	holder, other := "node-a", "node-b"
	if got[1] {
		holder, other = other, holder
	}
	take := func(owner string, now time.Time, want bool) {
		t.Helper()
		ok, err := s.TakeLease(ctx, "archiver", owner, now, now.Add(ttl))
		if err != nil || ok != want {
			t.Fatalf("%s takes the lease at %v: %v, %v; want %v", owner, now.Sub(t0), ok, err, want)
		}
	}
	meter.Reset()
	take(holder, t0.Add(time.Hour), true) // renewed: now until t0+2h30
	take(other, t0.Add(2*time.Hour), false)
	// docs/dynamodb.md: 1 WCU a take, whether it gets the lease or not.
	if u := meter.Units(); u != 2 {
		t.Errorf("a renewal and a refusal cost %v WCU, want 2 (%s)", u, meter)
	}
	if ok, err := s.TakeLease(ctx, "other job", other, t0, t0.Add(ttl)); err != nil || !ok {
		t.Fatalf("a lease of another name: %v, %v", ok, err)
	}
	take(other, t0.Add(2*time.Hour+31*time.Minute), true) // the holder died
	take(holder, t0.Add(2*time.Hour+32*time.Minute), false)

	if err := s.ReleaseLease(ctx, "archiver", holder); err != nil { // not its lease any more
		t.Fatal(err)
	}
	take(holder, t0.Add(2*time.Hour+33*time.Minute), false)
	if err := s.ReleaseLease(ctx, "archiver", other); err != nil {
		t.Fatal(err)
	}
	take(holder, t0.Add(2*time.Hour+34*time.Minute), true)
}
