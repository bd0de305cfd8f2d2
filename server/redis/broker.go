package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/chatterm/chat/server"
	goredis "github.com/redis/go-redis/v9"
)

var _ server.Broker = (*Broker)(nil)

// Broker carries envelopes over Redis pub/sub, one channel bus:{node} per node.
// Delivery is at most once (pub/sub keeps nothing): an envelope published while
// the node's subscription is down is lost. The node hears of it when the
// subscription comes back (Envelope.Lost) and catches its connections up from
// pending_deliveries; the sending node's delivery worker sends again what
// stays unacked (server/redeliver.go).
type Broker struct{ c *Client }

// Broker returns the cross-node broker.
func (c *Client) Broker() *Broker { return &Broker{c} }

func (b *Broker) Publish(ctx context.Context, nodeID string, env server.Envelope) error {
	if nodeID == "" {
		return errEmpty
	}
	msg := encodeEnvelope(env)
	return b.c.do(ctx, "publish", func(ctx context.Context) error {
		return b.c.rdb.Publish(ctx, b.c.key("bus", nodeID), msg).Err()
	})
}

// Subscribe returns once Redis confirmed the subscription. go-redis resubscribes
// by itself after a lost connection. If Redis cannot be reached now, Subscribe
// logs a warning and returns nil after the call timeout with the subscription
// pending: it goes live as soon as Redis answers. A node starts degraded rather
// than not at all, and until then other nodes' messages for its users
// reach them through pending_deliveries, as when any pub/sub message is lost.
func (b *Broker) Subscribe(ctx context.Context, nodeID string, handle func(server.Envelope)) error {
	if nodeID == "" {
		return errEmpty
	}
	if handle == nil {
		return fmt.Errorf("redis subscribe %s: nil handler", nodeID)
	}
	ch := b.c.key("bus", nodeID)
	ps := b.c.rdb.Subscribe(ctx, ch)
	err := b.c.do(ctx, "subscribe", func(ctx context.Context) error {
		_, err := ps.Receive(ctx) // the subscription confirmation
		return err
	})
	switch {
	case errors.Is(err, ErrUnavailable) && ctx.Err() == nil:
		b.c.log.Warn("redis broker: subscription pending until Redis answers", "channel", ch, "err", err)
	case err != nil:
		ps.Close()
		return err
	}
	// With subscriptions: go-redis confirms each resubscription after a broken
	// connection, and what was published to the channel meanwhile is gone
	// (pub/sub keeps nothing). The node is told (Envelope.Lost) and catches its
	// connections up from pending_deliveries.
	msgs := ps.ChannelWithSubscriptions()
	go func() {
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case v, ok := <-msgs:
				if !ok {
					return
				}
				var m *goredis.Message
				switch v := v.(type) {
				case *goredis.Subscription:
					if v.Kind == "subscribe" {
						b.c.log.Warn("redis broker: subscription back after a break; catching up this node's connections", "channel", ch)
						handle(server.Envelope{Lost: true})
					}
					continue
				case *goredis.Message:
					m = v
				default:
					continue
				}
				env, err := decodeEnvelope([]byte(m.Payload))
				if err != nil {
					b.c.log.Warn("redis broker: dropped a malformed envelope", "channel", ch, "err", err)
					continue
				}
				handle(env)
			}
		}
	}()
	return nil
}

// Envelope encoding: uvarint user count, then per user uvarint length and bytes,
// then the frame (the rest). Compact, and the frame is not copied into JSON.
// No frame means Close: a frame is never empty.
func encodeEnvelope(env server.Envelope) []byte {
	n := binary.MaxVarintLen64 + len(env.Frame)
	for _, u := range env.UserIDs {
		n += binary.MaxVarintLen64 + len(u)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(env.UserIDs)))
	for _, u := range env.UserIDs {
		b = binary.AppendUvarint(b, uint64(len(u)))
		b = append(b, u...)
	}
	return append(b, env.Frame...)
}

var errBadEnvelope = errors.New("malformed envelope")

func decodeEnvelope(b []byte) (server.Envelope, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return server.Envelope{}, errBadEnvelope
	}
	b = b[n:]
	env := server.Envelope{UserIDs: make([]string, 0, count)}
	for range count {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return server.Envelope{}, errBadEnvelope
		}
		env.UserIDs = append(env.UserIDs, string(b[n:n+int(l)]))
		b = b[n+int(l):]
	}
	env.Frame = b
	env.Close = len(b) == 0
	return env, nil
}
