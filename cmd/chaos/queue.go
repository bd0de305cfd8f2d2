package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// registryQueue is --registry-queue: the nodes' registry updates written to
// Redis directly (""), or put through a Kafka topic to their registry
// workers ("kafka"). No Kafka broker can be installed on the development
// machines, so the run starts franz-go's kfake, a Kafka-protocol cluster
// listening on TCP, in this process, and gives the nodes its address as
// --kafka-brokers. It lives as long as the run: a node killed and started
// again finds its topic and consumer group where it left them.
type registryQueue struct {
	kind    string
	brokers int
	kf      *kfake.Cluster
}

func (q *registryQueue) register(fs *flag.FlagSet) {
	fs.StringVar(&q.kind, "registry-queue", "", `"kafka": the nodes' registry updates go through Kafka (a kfake cluster this run starts) to their registry workers; empty: written to Redis directly`)
	fs.IntVar(&q.brokers, "kfake-brokers", 1, "with --registry-queue kafka: brokers in the kfake cluster")
}

// start starts the queue the nodes will use, if any.
func (q *registryQueue) start() error {
	switch q.kind {
	case "":
		return nil
	case "kafka":
	default:
		return fmt.Errorf("--registry-queue %q: want kafka or nothing", q.kind)
	}
	if q.brokers < 1 {
		return fmt.Errorf("--kfake-brokers %d: want at least 1", q.brokers)
	}
	kf, err := kfake.NewCluster(kfake.NumBrokers(q.brokers))
	if err != nil {
		return fmt.Errorf("start kfake: %w", err)
	}
	q.kf = kf
	return nil
}

// nodeArgs are the chatserver flags that point a node at the queue.
func (q *registryQueue) nodeArgs() []string {
	if q.kf == nil {
		return nil
	}
	return []string{"--kafka-brokers", strings.Join(q.kf.ListenAddrs(), ",")}
}

// describe names the queue for the report's first line.
func (q *registryQueue) describe() string {
	if q.kf == nil {
		return "registry written to Redis directly"
	}
	return fmt.Sprintf("registry updates through Kafka (kfake, %d broker(s) at %s)", q.brokers, strings.Join(q.kf.ListenAddrs(), ","))
}

func (q *registryQueue) close() {
	if q.kf != nil {
		q.kf.Close()
	}
}
