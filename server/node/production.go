package node

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/server"
)

// openProduction builds the DynamoDB, Redis and S3 backends.
func (n *Node) openProduction(ctx context.Context, reg prometheus.Registerer) (server.Backends, error) {
	return server.Backends{}, errors.New("production backends are not wired yet")
}
