package roletest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// maxHint is the longest retry hint a window of 1 s gives: Redis keeps a key
// through the last millisecond of its TTL, so its hint is a millisecond more.
const maxHint = time.Second + time.Millisecond

// RateLimiter checks a server.RateLimiter with the real clock (windows of 1 s).
func RateLimiter(t *testing.T, newRL func(t *testing.T) server.RateLimiter) {
	t.Run("OK", func(t *testing.T) {
		r, c := newRL(t), ctx(t)
		key := id(t, "u")
		const limit = 5
		for i := range limit {
			ok, _, err := r.Allow(c, key, limit)
			if err != nil || !ok {
				t.Fatalf("event %d: Allow = %v, %v; want allowed", i+1, ok, err)
			}
		}
		ok, retry, err := r.Allow(c, key, limit)
		if err != nil || ok {
			t.Fatalf("event %d: Allow = %v, %v; want refused", limit+1, ok, err)
		}
		if retry <= 0 || retry > maxHint {
			t.Fatalf("retryAfter = %v, want in (0, %v]", retry, maxHint)
		}
		// Another key has its own window.
		if ok, _, err := r.Allow(c, id(t, "other"), limit); err != nil || !ok {
			t.Fatalf("other key: Allow = %v, %v; want allowed", ok, err)
		}
		// Once the window has ended, events are allowed again.
		time.Sleep(retry + 20*time.Millisecond)
		if ok, _, err := r.Allow(c, key, limit); err != nil || !ok {
			t.Fatalf("after retryAfter: Allow = %v, %v; want allowed", ok, err)
		}
	})
	// A client that waits exactly the hint is let through: a hint a
	// millisecond short (Redis's PTTL, whose key lives through its last
	// millisecond) had a sync refused again after it, with a hint of 1 ms.
	// Where the hint falls within a millisecond is chance, so several keys
	// try at once.
	t.Run("HintEndsTheWindow", func(t *testing.T) {
		r, c := newRL(t), ctx(t)
		var wg sync.WaitGroup
		for i := range 12 {
			key := id(t, fmt.Sprintf("u%d", i))
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 83 * time.Microsecond) // spread over the millisecond
				if ok, _, err := r.Allow(c, key, 1); err != nil || !ok {
					t.Errorf("%s: first event: Allow = %v, %v; want allowed", key, ok, err)
					return
				}
				ok, retry, err := r.Allow(c, key, 1)
				if err != nil || ok || retry <= 0 {
					t.Errorf("%s: second event: Allow = %v, %v, %v; want refused with a hint", key, ok, retry, err)
					return
				}
				time.Sleep(retry)
				if ok, again, err := r.Allow(c, key, 1); err != nil || !ok {
					t.Errorf("%s: after the hint of %v: Allow = %v, %v, %v; want allowed", key, retry, ok, again, err)
				}
			})
		}
		wg.Wait()
	})
	t.Run("AllowN", func(t *testing.T) {
		r, c := newRL(t), ctx(t)
		key := id(t, "u")
		const limit = 5
		if n, _, err := r.AllowN(c, key, 3, limit); err != nil || n != 3 {
			t.Fatalf("3 of 5: AllowN = %d, %v; want all 3", n, err)
		}
		n, retry, err := r.AllowN(c, key, 3, limit)
		if err != nil || n != 2 || retry <= 0 || retry > maxHint {
			t.Fatalf("3 more: AllowN = %d, %v, %v; want the first 2 and a retry hint", n, retry, err)
		}
		if ok, _, err := r.Allow(c, key, limit); err != nil || ok {
			t.Fatalf("after the window is full: Allow = %v, %v; want refused", ok, err)
		}
		if _, _, err := r.AllowN(c, key, 0, limit); err == nil {
			t.Error("AllowN of 0 events succeeded")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		r, c := newRL(t), ctx(t)
		key := id(t, "u")
		const limit, callers = 10, 50
		var allowed atomic.Int32
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				ok, retry, err := r.Allow(c, key, limit)
				switch {
				case err != nil:
					t.Error(err)
				case ok:
					allowed.Add(1)
				case retry <= 0 || retry > maxHint:
					t.Errorf("retryAfter = %v, want in (0, %v]", retry, maxHint)
				}
			})
		}
		wg.Wait()
		if n := allowed.Load(); n != limit {
			t.Fatalf("%d of %d concurrent events allowed, want exactly %d", n, callers, limit)
		}
	})
	t.Run("ErrBadLimit", func(t *testing.T) {
		r, c := newRL(t), ctx(t)
		if _, _, err := r.Allow(c, id(t, "u"), 0); err == nil {
			t.Error("Allow with limit 0 succeeded")
		}
		if _, _, err := r.Allow(c, "", 5); err == nil {
			t.Error("Allow with an empty key succeeded")
		}
	})
}
