package server

import (
	"context"
	"sync"
	"testing"

	"github.com/chatterm/chat/wire"
)

func TestPasswordHashingBounded(t *testing.T) {
	p := newPasswords(2, 4, NewMetrics(nil))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := p.hash(context.Background(), "password"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak := p.peak.Load(); peak > 2 || peak < 1 {
		t.Fatalf("%d hashes ran at once with 2 slots", peak)
	}
}

func TestPasswordHashingRefusesWhenFull(t *testing.T) {
	p := newPasswords(1, 4, NewMetrics(nil))
	release, err := p.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a waiter whose request ended: refused at once, not left queued
	_, err = p.check(ctx, nil, "password")
	if e := wire.AsError(err); e.Code != wire.CodeOverloaded || e.RetryAfterMs <= 0 {
		t.Fatalf("with every slot busy: %v, want overloaded with a retry hint", err)
	}
	release()
	if ok, err := p.check(context.Background(), nil, "password"); ok || err != nil {
		t.Fatalf("unknown user after release: %v %v", ok, err)
	}
}
