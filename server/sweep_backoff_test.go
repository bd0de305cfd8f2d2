package server_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
)

// sweepReads is a real store that records when each pending read of one user
// was made and whether it was refused (as a DynamoDB behind an open circuit
// refuses it) while down is set.
type sweepReads struct {
	*sqlite.Store
	user string
	down atomic.Bool

	mu    sync.Mutex
	reads []sweepRead
}

type sweepRead struct {
	at      time.Time
	refused bool
}

func (s *sweepReads) ListPending(ctx context.Context, userID string) ([]server.Pending, error) {
	if userID == s.user {
		down := s.down.Load()
		s.mu.Lock()
		s.reads = append(s.reads, sweepRead{at: time.Now(), refused: down})
		s.mu.Unlock()
		if down {
			return nil, fmt.Errorf("store: %w: %w: circuit open", server.ErrUnavailable, server.ErrNotApplied)
		}
	}
	return s.Store.ListPending(ctx, userID)
}

// since returns the reads made from index i on.
func (s *sweepReads) since(i int) []sweepRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.reads) {
		return nil
	}
	return append([]sweepRead(nil), s.reads[i:]...)
}

func (s *sweepReads) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reads)
}

// A sweep whose store read is refused comes again a grace period later, then
// two, four… up to the sweep period (ten grace periods), not a whole period
// later: the store may answer a moment after. One sweep that reads again
// starts the backoff over, so the next refusal is retried a grace period
// later, not at the longest wait the last outage reached.
//
// Gaps are compared with the period's halves, not measured to the
// millisecond: on a loaded machine a sweep runs late, never early.
func TestRefusedSweepBacksOff(t *testing.T) {
	const grace = 200 * time.Millisecond
	const period = 10 * grace // server/protocol's sweepEvery
	store := &sweepReads{Store: openStore(t), user: "bob"}
	svc := serviceOn(t, store, server.Config{SendRate: -1, RedeliverAfter: grace})
	registerAliceAndBob(t, svc)
	eng := engineOf(t, svc)
	_, _ = watchDevice(t, eng, "bob", "bob-1")
	// The connect's catch-up reads once, with the store up.
	testenv.WaitFor(t, 5*time.Second, func() bool { return store.count() >= 1 })

	// refusals waits for n refused sweeps from read index from and returns
	// the gaps between them.
	refusals := func(from, n int, within time.Duration) []time.Duration {
		t.Helper()
		var got []sweepRead
		testenv.WaitFor(t, within, func() bool {
			got = got[:0]
			for _, r := range store.since(from) {
				if r.refused {
					got = append(got, r)
				}
			}
			return len(got) >= n
		})
		gaps := make([]time.Duration, n-1)
		for i := range gaps {
			gaps[i] = got[i+1].at.Sub(got[i].at)
		}
		return gaps
	}

	store.down.Store(true)
	// Refused at 0, then a grace period later (0.2 s), 2 (0.6 s), 4 (1.4 s),
	// 8 (3 s), then the period (5 s). Without the backoff the second comes a
	// period after the first; without the doubling there are ten a period.
	gaps := refusals(0, 6, 20*period)
	t.Logf("gaps between refused sweeps: %v", gaps)
	if gaps[0] >= period/2 {
		t.Fatalf("second refused sweep %v after the first; want about a grace period (%v), not the period (%v)", gaps[0], grace, period)
	}
	if first3 := gaps[0] + gaps[1] + gaps[2]; first3 < 5*grace {
		t.Fatalf("three retries within %v of the first refusal (gaps %v): want a grace period doubling (1+2+4 = 7 grace periods)", first3, gaps)
	}
	if last := gaps[len(gaps)-1]; last < period/2 {
		t.Fatalf("the fifth retry came %v after the fourth: the wait stops doubling at the period (%v), not below it", last, period)
	}

	// The store answers: the next sweep reads (within the longest wait, the
	// period) and resets the backoff.
	store.down.Store(false)
	mark := store.count()
	testenv.WaitFor(t, 3*period, func() bool {
		for _, r := range store.since(mark) {
			if !r.refused {
				return true
			}
		}
		return false
	})
	// Refused again: the next sweep comes a period after the one that read,
	// and its retry a grace period after that, not a period.
	store.down.Store(true)
	mark = store.count()
	gaps = refusals(mark, 2, 4*period)
	t.Logf("after a sweep that read, gap between the first two refusals: %v", gaps[0])
	if gaps[0] >= period/2 {
		t.Fatalf("after a sweep that read, a refused sweep was retried %v later: the backoff did not start over (want about %v)", gaps[0], grace)
	}
}
