package gopool

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
)

func TestRunsEveryFunctionOnce(t *testing.T) {
	p := New(4)
	t.Cleanup(p.Close)
	var ran atomic.Int64
	var wg sync.WaitGroup
	for range 10_000 {
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			ran.Add(1)
		})
	}
	wg.Wait()
	if got := ran.Load(); got != 10_000 {
		t.Fatalf("ran %d functions, want 10000", got)
	}
}

// Goroutines stay parked for later bursts, but never more than the bound.
func TestKeepsAtMostMaxIdle(t *testing.T) {
	p := New(3)
	t.Cleanup(p.Close)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 { // 8 at once: 8 goroutines, of which 3 may stay
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			<-release
		})
	}
	close(release)
	wg.Wait()
	testenv.WaitFor(t, 5*time.Second, func() bool { return p.Parked() == 3 })

	before := runtime.NumGoroutine()
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
	testenv.WaitFor(t, 5*time.Second, func() bool { return p.Parked() == 3 })
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("a burst after the first started a goroutine: %d goroutines, then %d", before, after)
	}
}

func BenchmarkBurst(b *testing.B) {
	b.Run("pool", func(b *testing.B) {
		p := New(8)
		var wg sync.WaitGroup
		for i := range b.N {
			wg.Add(1)
			p.Go(func() { defer wg.Done(); deep(64, i) })
			wg.Wait()
		}
	})
	b.Run("go", func(b *testing.B) {
		var wg sync.WaitGroup
		for i := range b.N {
			wg.Add(1)
			go func() { defer wg.Done(); deep(64, i) }()
			wg.Wait()
		}
	})
}

// deep uses about 64 × 256 bytes of stack: more than a goroutine starts with.
//
//go:noinline
func deep(depth, n int) int {
	var buf [256]byte
	buf[n%len(buf)] = byte(n)
	if depth == 0 {
		return int(buf[0])
	}
	return deep(depth-1, n) + int(buf[n%len(buf)])
}

// Close ends the parked goroutines, and one still working ends when its work
// is done; Go still runs work afterwards.
func TestCloseEndsTheGoroutines(t *testing.T) {
	p := New(4)
	t.Cleanup(p.Close)
	release := make(chan struct{})
	// Three goroutines, each held until all three run: one that finished
	// would park and take the next Go, leaving fewer than three to park.
	hold := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		p.Go(func() { wg.Done(); <-hold })
	}
	wg.Wait()
	close(hold)
	testenv.WaitFor(t, 5*time.Second, func() bool { return p.Parked() == 3 })
	wg.Add(4)
	for range 4 { // three take the parked goroutines, one is new
		p.Go(func() { defer wg.Done(); <-release })
	}
	p.Close()
	close(release)
	wg.Wait()
	testenv.NoGoroutinesIn(t, 5*time.Second, "github.com/chatterm/chat/internal/gopool.(*Pool)")
	ran := make(chan struct{})
	p.Go(func() { close(ran) })
	<-ran
	testenv.NoGoroutinesIn(t, 5*time.Second, "github.com/chatterm/chat/internal/gopool.(*Pool)")
	if n := p.Parked(); n != 0 {
		t.Fatalf("%d goroutines parked after Close", n)
	}
}
