package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/protocol"
	"github.com/chatterm/chat/wire"
)

// Issue 27: after a pub/sub break every device of a node was sent its
// resync at once, and each synced every conversation it holds: a burst of
// reads that opened DynamoDB's breakers. The resyncs go out a step a tick
// (the ticks are the test's: no clock), no step more than a tenth of the
// node, and every device gets one; a break again while they go out puts
// the devices already resynced in line again and no device twice.
func TestResyncsAreSpreadAndAllSent(t *testing.T) {
	ctx := context.Background()
	broker := inmem.NewBroker()
	svc, err := server.New(server.Config{Backends: server.Backends{Store: openStore(t), Sequencer: inmem.NewSequencer(),
		Rate: inmem.NewRateLimiter(time.Now), Inbox: inmem.NewInboxIndex(100),
		Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now), Registry: inmem.NewRegistry(), Broker: broker},
		NodeID: "n1", PasswordCost: 4, Registration: server.RegistrationOpen, SendRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time)
	steps := make(chan int, 64)
	eng := protocol.New(svc, protocol.WithResyncTicks(ticks, func(n int) { steps <- n }))
	t.Cleanup(func() {
		svc.Shutdown(context.Background())
		eng.Close()
	})
	registerAliceAndBob(t, svc)

	const devices = 200
	logs := make([]*frameLog, devices)
	for i := range logs {
		_, logs[i] = watchDevice(t, eng, "bob", fmt.Sprint("bob-", i))
	}
	isResync := func(f wire.Frame) bool { return f.Type == wire.TypeResync }
	resyncs := func() (per []int, total int) {
		per = make([]int, devices)
		for i, l := range logs {
			per[i] = len(l.find(isResync))
			total += per[i]
		}
		return per, total
	}
	nextStep := func() int {
		t.Helper()
		select {
		case n := <-steps:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no resync step came")
			return 0
		}
	}
	// sent waits for the frames of the steps so far, and checks no device
	// got one ahead of its step.
	sent := func(want int) []int {
		t.Helper()
		testenv.WaitFor(t, 10*time.Second, func() bool { _, n := resyncs(); return n >= want })
		per, n := resyncs()
		if n != want {
			t.Fatalf("%d resync frames sent after steps of %d devices", n, want)
		}
		return per
	}

	if err := broker.Publish(ctx, "n1", server.Envelope{Lost: true}); err != nil {
		t.Fatal(err)
	}
	first := nextStep() // the first step goes at once
	total, count := first, 1
	firstDevices := sent(total)
	// Broken again: the devices of the first step wait again, the others
	// keep their place (the inmem broker runs the handler within Publish).
	if err := broker.Publish(ctx, "n1", server.Envelope{Lost: true}); err != nil {
		t.Fatal(err)
	}
	for total < devices+first {
		select {
		case ticks <- time.Now():
		case n := <-steps:
			t.Fatalf("a step of %d devices without a tick, %d of %d resynced before it", n, total, devices+first)
		case <-time.After(10 * time.Second):
			t.Fatalf("the resyncs took no tick, %d of %d resynced", total, devices+first)
		}
		n := nextStep()
		if n > devices/10 {
			t.Fatalf("step %d resynced %d of %d devices at once", count+1, n, devices)
		}
		total += n
		count++
		sent(total)
	}
	t.Logf("%d resyncs (%d devices, the first step's twice) in %d steps", total, devices, count)
	if count < 10 {
		t.Fatalf("%d devices resynced in %d steps, want them spread over 10 or more", devices, count)
	}
	per, _ := resyncs()
	for i, n := range per {
		if want := 1 + firstDevices[i]; n != want {
			t.Errorf("device %d got %d resyncs, want %d", i, n, want)
		}
	}
	select {
	case n := <-steps:
		t.Fatalf("a step of %d after every device was resynced", n)
	default:
	}
}
