package node_test

// The registry queue against Redis and franz-go's kfake, an in-process Kafka
// speaking the real wire protocol (a real broker cannot be installed on the
// machines this project builds on).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/kafka"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/redis"
	"github.com/chatterm/chat/server/roletest"
)

func kafkaCluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// The registry conformance suite on the queue in front of Redis: Add and
// Remove reach Nodes after the workers applied them (roletest.Lagging).
func TestQueuedRegistryOnRedis(t *testing.T) {
	addr := testenv.RedisAddr(t)
	c := kafkaCluster(t)
	roletest.Registry(t, func(t *testing.T) server.Registry {
		var b [6]byte
		_, _ = rand.Read(b[:])
		prefix := "nodetest:" + hex.EncodeToString(b[:]) + ":"
		rc, err := redis.Open(t.Context(), redis.Options{Addrs: []string{addr}, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close(); dropKeys(t, addr, prefix) })
		q, err := kafka.Open(t.Context(), kafka.Options{Brokers: c.ListenAddrs(), Topic: "reg-" + hex.EncodeToString(b[:]), Partitions: 4}, rc.Registry())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	})
}

func TestStartRegistryQueue(t *testing.T) {
	redisAddr := testenv.RedisAddr(t)
	c := kafkaCluster(t)
	t.Run("OK", func(t *testing.T) {
		var logs testenv.LogBuffer
		startRedisNode(t, node.Production{RedisAddrs: []string{redisAddr}, KafkaBrokers: c.ListenAddrs(), KafkaTopic: "start-ok"},
			slog.New(slog.NewTextHandler(&logs, nil)))
		if !strings.Contains(logs.String(), `msg="registry updates: through Kafka to registry workers" topic=start-ok`) {
			t.Fatalf("the log does not say registry updates go through Kafka:\n%s", logs.String())
		}
	})
	t.Run("NoQueueByDefault", func(t *testing.T) {
		var logs testenv.LogBuffer
		startRedisNode(t, node.Production{RedisAddrs: []string{redisAddr}}, slog.New(slog.NewTextHandler(&logs, nil)))
		if !strings.Contains(logs.String(), "no queue") {
			t.Fatalf("the log does not say registry writes are synchronous:\n%s", logs.String())
		}
	})
	t.Run("ErrWithoutRedis", func(t *testing.T) {
		n, err := node.Start(context.Background(), node.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
			Production: node.Production{KafkaBrokers: c.ListenAddrs()}})
		if err == nil {
			n.Close()
			t.Fatal("Start with --kafka-brokers and no Redis succeeded")
		}
		if !strings.Contains(err.Error(), "--kafka-brokers needs --redis-addrs") {
			t.Fatalf("Start with --kafka-brokers and no Redis: %v", err)
		}
	})
}
