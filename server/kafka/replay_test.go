package kafka_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/inmem"
	"github.com/chatterm/chat/server/kafka"
)

// A replay of updates published longer ago than MaxAge — a consumer group
// that lost its offsets, starting from the topic's first record — onto a
// registry that no longer holds their versions (Redis forgets them 25 h
// after a user's last change): bob's connection, closed by a Remove that
// never went through the topic, would be put back. The worker skips it, and
// applies what is younger.
func TestReplayPastMaxAgeSkipped(t *testing.T) {
	c := cluster(t)
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "old", Group: "old-workers", Partitions: 2}
	adm := admin(t, c)
	if _, err := adm.CreateTopic(ctx(t), o.Partitions, 1, nil, o.Topic); err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(o.Topic))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, r := range []struct {
		user string
		at   time.Time
	}{{"bob", time.Now().Add(-kafka.DefaultMaxAge - time.Hour)}, {"ann", time.Now()}} {
		value := fmt.Sprintf(`{"u":%q,"c":"c1","n":"n1","v":%d}`, r.user, r.at.UnixMicro())
		if err := prod.ProduceSync(ctx(t), &kgo.Record{Key: []byte(r.user), Value: []byte(value), Timestamp: r.at}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	store := inmem.NewRegistry()
	open(t, o, store)
	caughtUp(t, adm, o)
	got, err := store.Nodes(ctx(t), []string{"ann", "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"ann": {"n1"}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("Nodes after replaying a %v-old Add = %v, want %v", kafka.DefaultMaxAge+time.Hour, got, want)
	}
}

// Two queues in one process on one Prometheus registry (two nodes in a
// test, chatbench's in-process nodes): both count into the same series. The
// second used to keep collectors of its own that nothing exported.
func TestTwoQueuesShareTheirMetrics(t *testing.T) {
	c := cluster(t)
	reg := prometheus.NewRegistry()
	o := kafka.Options{Brokers: c.ListenAddrs(), Topic: "metrics", Partitions: 2, Registerer: reg}
	store := inmem.NewRegistry()
	a, b := open(t, o, store), open(t, o, store)
	for i, q := range []*kafka.Registry{a, b} {
		if err := q.Add(ctx(t), server.Presence{UserID: fmt.Sprintf("u%d", i), ConnID: "c1", NodeID: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP chat_registry_updates_total Registry updates by path: queue (published to Kafka), direct (Kafka failing: written to the registry), expired (polled older than --kafka-max-age: skipped).
# TYPE chat_registry_updates_total counter
chat_registry_updates_total{path="direct"} 0
chat_registry_updates_total{path="expired"} 0
chat_registry_updates_total{path="queue"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "chat_registry_updates_total"); err != nil {
		t.Error(err)
	}
}
