package server

import (
	"context"
	"time"

	"github.com/chatterm/chat/server/conn"
)

// What the protocol engine (server/protocol) needs of the domain: the node's
// connections, the reads of catch-up and sync, the error mapping, and the
// Service's lifecycle, so Shutdown waits for the engine's work too.

// Hub is this node's live connections, by user: sends and status moves are
// handed to them here.
func (s *Service) Hub() *conn.Hub { return s.hub }

// AddConn makes c a live connection of its user: on this node's hub and in
// the connection registry, so other nodes route the user's messages here.
func (s *Service) AddConn(ctx context.Context, c *conn.Conn) {
	s.hub.Add(c)
	s.metrics.Connections.Inc()
	if err := s.cfg.Registry.Add(ctx, Presence{UserID: c.UserID, ConnID: c.ID, NodeID: s.cfg.NodeID}); err != nil {
		// Without a registry entry other nodes treat the user as offline: this node
		// still delivers, and what other nodes store waits in pending_deliveries.
		// A registry shared between nodes puts the entry back with this node's
		// next heartbeat (NodeKeeper).
		s.metrics.Fallbacks.WithLabelValues("registry").Inc()
		s.log.Debug("registry add", "user", c.UserID, "err", err)
	}
}

// RemoveConn forgets a connection that ended.
func (s *Service) RemoveConn(c *conn.Conn) {
	s.hub.Remove(c)
	s.metrics.Connections.Dec()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.cfg.Registry.Remove(ctx, Presence{UserID: c.UserID, ConnID: c.ID, NodeID: s.cfg.NodeID}); err != nil {
		s.log.Debug("registry remove", "user", c.UserID, "err", err)
	}
	if code, _ := c.CloseStatus(); code == conn.ClosePolicy {
		s.metrics.SlowConsumers.Inc()
	}
}

// OnPublicationsLost registers what to run when publications to this node
// may have been lost (the broker's subscription came back, the registry
// keeper restored this node's entries): the engine catches its connections up.
func (s *Service) OnPublicationsLost(fn func()) { s.onLost.Store(&fn) }

func (s *Service) resync() {
	s.metrics.Resyncs.Inc()
	if fn := s.onLost.Load(); fn != nil {
		(*fn)()
	}
}

// PendingFor returns the user's pending_deliveries rows.
func (s *Service) PendingFor(ctx context.Context, userID string) ([]Pending, error) {
	return s.store.ListPending(ctx, userID)
}

// RegistryDown says whether the registry cannot be read now (Redis down, or
// its circuit open): other nodes cannot find this node's users meanwhile, so
// their live copies do not reach this node's connections. userID is the one
// it asks about (any will do).
func (s *Service) RegistryDown(ctx context.Context, userID string) bool {
	_, err := s.cfg.Registry.Nodes(ctx, []string{userID})
	return err != nil
}

// LastStoredSeq returns the seq_no of convID's newest stored message, read
// from the store (this node's own record misses what other nodes stored).
func (s *Service) LastStoredSeq(ctx context.Context, convID string) (int64, error) {
	c, err := s.store.GetConversation(ctx, convID)
	if err != nil {
		return 0, err
	}
	s.lastSeq.raise(convID, c.LastSeq)
	return c.LastSeq, nil
}

// MessagesAfter returns up to limit stored messages of convID after seq,
// oldest first, archived ones brought back from the cold tier.
func (s *Service) MessagesAfter(ctx context.Context, convID string, after int64, limit int) ([]Message, error) {
	msgs, err := s.store.ListMessagesAfter(ctx, convID, after, limit)
	if err == nil {
		err = s.hydrate(ctx, msgs)
	}
	return msgs, err
}

// Members returns the conversation's member ids (cached for a few seconds).
func (s *Service) Members(ctx context.Context, convID string) ([]string, error) {
	return s.memberIDs(ctx, convID)
}

// ErrorFor turns a failure that is not the request's fault into the error a
// client gets (a *wire.Error with a retry hint), logging what is unexpected.
func (s *Service) ErrorFor(op string, err error) error { return s.internal(op, err) }

// BeginWork admits one unit of the engine's work unless Shutdown has begun;
// EndWork ends it. Shutdown waits for admitted work.
func (s *Service) BeginWork() bool { return s.begin() }

// EndWork ends a unit of work BeginWork admitted.
func (s *Service) EndWork() { s.wg.Done() }

// Closing says Shutdown has begun.
func (s *Service) Closing() bool { return s.closing.Load() }

// Context ends when Shutdown has waited for the work in flight.
func (s *Service) Context() context.Context { return s.ctx }
