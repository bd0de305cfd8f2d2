package roletest

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
)

// Broker checks a server.Broker: envelopes reach the subscribers of the node they
// are published to, and only those, until the subscription's context ends.
func Broker(t *testing.T, newBroker func(t *testing.T) server.Broker) {
	subscribe := func(t *testing.T, b server.Broker, c context.Context, node string) chan server.Envelope {
		t.Helper()
		ch := make(chan server.Envelope, 16)
		if err := b.Subscribe(c, node, func(e server.Envelope) { ch <- e }); err != nil {
			t.Fatalf("Subscribe(%s): %v", node, err)
		}
		return ch
	}
	receive := func(t *testing.T, ch chan server.Envelope, want server.Envelope) {
		t.Helper()
		select {
		case got := <-ch:
			if !slices.Equal(got.UserIDs, want.UserIDs) || !bytes.Equal(got.Frame, want.Frame) {
				t.Fatalf("received %+v, want %+v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("envelope not delivered within 5s")
		}
	}
	nothing := func(t *testing.T, ch chan server.Envelope) {
		t.Helper()
		select {
		case got := <-ch:
			t.Fatalf("unexpected envelope %+v", got)
		case <-time.After(150 * time.Millisecond):
		}
	}

	t.Run("OK", func(t *testing.T) {
		b, c := newBroker(t), ctx(t)
		n1, n2 := id(t, "n1"), id(t, "n2")
		ch1, ch1b, ch2 := subscribe(t, b, c, n1), subscribe(t, b, c, n1), subscribe(t, b, c, n2)
		env := server.Envelope{UserIDs: []string{"ann", "bob"}, Frame: []byte(`{"type":"message","content":"hé"}`)}
		if err := b.Publish(c, n1, env); err != nil {
			t.Fatal(err)
		}
		receive(t, ch1, env)
		receive(t, ch1b, env) // every subscriber of the node
		nothing(t, ch2)
		env2 := server.Envelope{UserIDs: []string{"cat"}, Frame: []byte("{}")}
		if err := b.Publish(c, n2, env2); err != nil {
			t.Fatal(err)
		}
		receive(t, ch2, env2)
		nothing(t, ch1)
		// Publishing to a node nobody listens on is not an error (it is gone).
		if err := b.Publish(c, id(t, "nobody"), env); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Unsubscribe", func(t *testing.T) {
		b, c := newBroker(t), ctx(t)
		n := id(t, "n")
		subCtx, cancel := context.WithCancel(c)
		ch := subscribe(t, b, subCtx, n)
		keep := subscribe(t, b, c, n)
		cancel()
		// Unsubscribing may be asynchronous: publish until the remaining subscriber
		// sees an envelope published after the cancelled one stopped receiving.
		deadline := time.Now().Add(5 * time.Second)
		for {
			env := server.Envelope{UserIDs: []string{"x"}, Frame: []byte(time.Now().String())}
			if err := b.Publish(c, n, env); err != nil {
				t.Fatal(err)
			}
			receive(t, keep, env)
			select {
			case <-ch:
				if time.Now().After(deadline) {
					t.Fatal("still delivering 5s after the subscription's context ended")
				}
				time.Sleep(20 * time.Millisecond)
				continue
			case <-time.After(100 * time.Millisecond):
			}
			break
		}
		nothing(t, ch)
	})
	t.Run("ErrEmptyNode", func(t *testing.T) {
		b, c := newBroker(t), ctx(t)
		if err := b.Publish(c, "", server.Envelope{}); err == nil {
			t.Error("Publish to an empty node id succeeded")
		}
		if err := b.Subscribe(c, "", func(server.Envelope) {}); err == nil {
			t.Error("Subscribe to an empty node id succeeded")
		}
	})
}
