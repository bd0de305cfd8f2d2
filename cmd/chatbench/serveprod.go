package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/chatterm/chat/server/node"
)

// serveShared holds the flags of `chatbench serve` that make its node one of
// several sharing a Redis (and a registry queue), as the storm scenario runs
// them: chatserver's own flags of the same names.
type serveShared struct {
	nodeID, redisAddrs, redisPrefix, kafkaBrokers, kafkaTopic, logLevel string
	kafkaApplyRate                                                      int
}

func (s *serveShared) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.nodeID, "node-id", "", "this node's id in the connection registry (default random)")
	fs.StringVar(&s.redisAddrs, "redis-addrs", "", "Redis address(es), comma-separated (empty: embedded, one node)")
	fs.StringVar(&s.redisPrefix, "redis-prefix", "", "prefix of every Redis key (empty: the server's default)")
	fs.StringVar(&s.kafkaBrokers, "kafka-brokers", "", "Kafka brokers for registry updates, comma-separated (empty: synchronous registry writes)")
	fs.StringVar(&s.kafkaTopic, "kafka-topic", "", "topic of registry updates (empty: the server's default)")
	fs.IntVar(&s.kafkaApplyRate, "kafka-apply-rate", 0, "registry updates per second each worker applies at most (0: no cap)")
	fs.StringVar(&s.logLevel, "log-level", "", "log at this level and above to stderr: debug, info, warn or error (empty: no log)")
}

// apply puts the flags into cfg.
func (s *serveShared) apply(cfg *node.Config) error {
	cfg.NodeID = s.nodeID
	list := func(v string) []string {
		if v == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	cfg.Production = node.Production{RedisAddrs: list(s.redisAddrs), RedisPrefix: s.redisPrefix,
		KafkaBrokers: list(s.kafkaBrokers), KafkaTopic: s.kafkaTopic, KafkaApplyRate: s.kafkaApplyRate}
	if s.logLevel != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(s.logLevel)); err != nil {
			return fmt.Errorf("--log-level: %w", err)
		}
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	return nil
}
