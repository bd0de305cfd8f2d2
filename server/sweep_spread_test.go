package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/protocol"
)

// downRegistry is a real registry that refuses to look users up while down
// is set: Redis down, as the sweep sees it.
type downRegistry struct {
	server.Registry
	down atomic.Bool
}

func (r *downRegistry) Nodes(ctx context.Context, userIDs []string) (map[string][]string, error) {
	if r.down.Load() {
		return nil, errors.New("registry: connection refused")
	}
	return r.Registry.Nodes(ctx, userIDs)
}

// Issue 27: while Redis is down a node sweeps every device each grace
// period, and the sweeps are spread over it: no tick (a quarter of a grace
// period, on the test's clock) sweeps more than half of the devices, and
// every device is swept once in each grace period. Moved to the end of the
// grace period, every device came due in one tick, every grace period.
func TestSweepsSpreadWhileRegistryDown(t *testing.T) {
	// Long beside the connects' real time (the devices' first sweeps are a
	// grace period after each connect, on the real clock): the test's ticks
	// start from after the last connect, before the first device's is due,
	// however slow the machine.
	const grace = 30 * time.Second
	reg := &downRegistry{Registry: inmem.NewRegistry()}
	svc, err := server.New(server.Config{Backends: server.Backends{Store: openStore(t), Sequencer: inmem.NewSequencer(),
		Rate: inmem.NewRateLimiter(time.Now), Inbox: inmem.NewInboxIndex(100),
		Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now), Registry: reg, Broker: inmem.NewBroker()},
		NodeID: "n1", PasswordCost: 4, Registration: server.RegistrationOpen, SendRate: -1, RedeliverAfter: grace})
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time)
	swept := make(chan int)
	eng := protocol.New(svc, protocol.WithSweepTicks(ticks, func(n int) { swept <- n }))
	t.Cleanup(func() {
		svc.Shutdown(context.Background())
		eng.Close()
	})
	registerAliceAndBob(t, svc)
	const devices = 200
	for i := range devices {
		watchDevice(t, eng, "bob", fmt.Sprint("bob-", i))
	}
	now := time.Now() // after every connect: no first sweep is due yet
	tick := func() int {
		t.Helper()
		select {
		case ticks <- now:
		case <-time.After(10 * time.Second):
			t.Fatal("the sweep took no tick")
		}
		return <-swept
	}
	reg.down.Store(true)
	if n := tick(); n != 0 {
		t.Fatalf("%d devices swept at the outage's first tick; their first sweeps are a grace period or more away", n)
	}
	for period := range 3 {
		total := 0
		var perTick []int
		for range 4 {
			now = now.Add(grace / 4)
			n := tick()
			perTick = append(perTick, n)
			if n > devices/2 {
				t.Fatalf("grace period %d: one tick swept %d of %d devices", period+1, n, devices)
			}
			total += n
		}
		t.Logf("grace period %d: %v of %d devices swept per tick", period+1, perTick, devices)
		if total != devices {
			t.Fatalf("grace period %d: %d sweeps for %d devices, want each once", period+1, total, devices)
		}
	}
}
