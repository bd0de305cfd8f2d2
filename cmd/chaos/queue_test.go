package main

import (
	"context"
	"flag"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// --registry-queue kafka starts a Kafka-protocol cluster the nodes can reach
// (kfake, on TCP) and hands its address to each node as --kafka-brokers;
// without the flag the nodes get nothing, and a queue it does not know is
// refused.
func TestRegistryQueueFlag(t *testing.T) {
	parse := func(args ...string) *registryQueue {
		t.Helper()
		var q registryQueue
		fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		q.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &q
	}
	none := parse()
	if err := none.start(); err != nil {
		t.Fatal(err)
	}
	if args := none.nodeArgs(); len(args) != 0 {
		t.Errorf("node args without a queue: %v", args)
	}
	if err := parse("--registry-queue", "rabbitmq").start(); err == nil {
		t.Error("--registry-queue rabbitmq was accepted")
	}

	q := parse("--registry-queue", "kafka")
	if err := q.start(); err != nil {
		t.Fatal(err)
	}
	defer q.close()
	args := q.nodeArgs()
	if len(args) != 2 || args[0] != "--kafka-brokers" {
		t.Fatalf("node args = %v, want --kafka-brokers ADDR", args)
	}
	if _, _, err := net.SplitHostPort(args[1]); err != nil {
		t.Fatalf("broker address %q: %v", args[1], err)
	}
	// What a node does first: create its topic on those brokers.
	cl, err := kgo.NewClient(kgo.SeedBrokers(args[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, "chat-registry"); err != nil {
		t.Fatalf("create a topic on the run's brokers: %v", err)
	}
}
