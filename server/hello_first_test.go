package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/wire"
)

// slowAdds is a real registry whose first Add waits until released: what a
// registry write behind a lagging queue or a slow Redis looks like to Connect.
type slowAdds struct {
	server.Registry
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (r *slowAdds) Add(ctx context.Context, p server.Presence) error {
	first := false
	r.once.Do(func() { first = true; close(r.entered) })
	if first {
		<-r.release
	}
	return r.Registry.Add(ctx, p)
}

// A connection's first frame is hello, whatever reaches the node while its
// registry entry is being written (up to seconds behind a lagging registry
// queue): a resync of every live connection then went out before the hello,
// and a client reads its first frame as the hello. A message delivered on
// this node meanwhile must come after the hello too.
func TestHelloComesFirst(t *testing.T) {
	ctx := context.Background()
	broker := inmem.NewBroker()
	reg := &slowAdds{Registry: inmem.NewRegistry(), entered: make(chan struct{}), release: make(chan struct{})}
	svc, err := server.New(server.Config{Backends: server.Backends{Store: openStore(t), Sequencer: inmem.NewSequencer(),
		Rate: inmem.NewRateLimiter(time.Now), Inbox: inmem.NewInboxIndex(100),
		Profiles: inmem.NewProfileCache(time.Hour, time.Minute, time.Now), Registry: reg, Broker: broker},
		NodeID: "n1", PasswordCost: 4, Registration: server.RegistrationOpen, SendRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	eng := engineOf(t, svc)
	registerAliceAndBob(t, svc)

	connected := make(chan struct{})
	var log *frameLog
	go func() {
		defer close(connected)
		_, log = watchDevice(t, eng, "bob", "bob-1")
	}()
	<-reg.entered // bob's connection is on the node, its registry entry not yet written
	// The broker's subscription came back: the node catches up its live connections.
	if err := broker.Publish(ctx, "n1", server.Envelope{Lost: true}); err != nil {
		t.Fatal(err)
	}
	conv := wire.DirectConversationID("alice", "bob")
	if _, _, err := svc.Send(ctx, "alice", conv, wire.SendRequest{MessageID: "m1", Content: "while bob connects"}, nil); err != nil {
		t.Fatal(err)
	}
	close(reg.release)
	<-connected

	deadline := time.Now().Add(5 * time.Second)
	resynced := func(f wire.Frame) bool { return f.Type == wire.TypeResync }
	for (len(log.seqs(conv)) == 0 || len(log.find(resynced)) == 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	frames := log.find(func(wire.Frame) bool { return true })
	if len(frames) == 0 || frames[0].Type != wire.TypeHello {
		types := make([]string, len(frames))
		for i, f := range frames {
			types[i] = f.Type
		}
		t.Fatalf("frames %v, want hello first", types)
	}
	// The resync and the connect's own catch-up may each send it: a second
	// copy on the wire is the client's to drop (it keys by seq_no).
	for _, seq := range log.seqs(conv) {
		if seq != 1 {
			t.Fatalf("bob got seqs %v, want only 1", log.seqs(conv))
		}
	}
}
