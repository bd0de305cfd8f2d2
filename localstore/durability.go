package localstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
)

// What each write needs to survive.
//
// The cache is opened with synchronous=FULL: in WAL mode every commit syncs
// the log before it returns, so an outbox entry (Enqueue) outlives a power
// cut once the user has been told it is queued. That sync is most of what a
// commit costs, and a received message does not need it: the message is on
// the server, and the sync cursor that says how far this device holds the
// conversation lives in the same database and commits in the same
// transaction. A power cut that loses the last commits of received messages
// loses their cursor move with them (WAL keeps a prefix of the commits, never
// a later one without an earlier), so the next connect syncs from the old
// cursor and the server sends them again, although they were acked: sync
// answers from the cursor, not from acks. The only cost is a "delivered" tick
// the sender saw for a message the device has to fetch again.
//
// So writes of what the server sent (messages, boundaries) commit with
// synchronous=NORMAL, and so does the user's own read boundary, which is
// told to the server and comes back in its inbox at the next connect (a power
// cut can at worst show a few messages unread again): the log is written, not synced, and synced at the next
// FULL commit or checkpoint. A process crash loses nothing at either level
// (the log is in the kernel's hands once written); only the operating
// system's crash or a power cut can. And since a FULL commit syncs the whole
// log before it, it also makes every NORMAL commit before it durable: order
// is kept, no later write outlives an earlier one.
//
// synchronous is a setting of the connection and cannot change inside a
// transaction, so rebuildableTx sets it around its own on the store's one
// connection (Open allows one, and an in-memory cache exists only on it), and
// sets it back before the connection goes to anyone else.

const (
	syncRelaxed = "PRAGMA synchronous = NORMAL"
	syncFull    = "PRAGMA synchronous = FULL"
)

// rebuildableTx runs fn in a transaction whose commit is not synced to disk:
// for writes the server can send again after a power cut (see above). The
// connection is back at synchronous=FULL when it returns; if that cannot be
// made so, the connection is closed, and the next one opens at FULL.
func (s *Store) rebuildableTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	if s.memory {
		return s.tx(ctx, fn) // nothing is synced anyway
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, syncRelaxed); err != nil {
		return fmt.Errorf("relax synchronous: %w", err)
	}
	defer func() {
		// Even when ctx has ended: Enqueue must never run on a relaxed connection.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), syncFull); rerr != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // closes it
			if err == nil {
				err = fmt.Errorf("restore synchronous=FULL: %w", rerr)
			}
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if s.beforeCommit != nil {
		s.beforeCommit(tx)
	}
	return tx.Commit()
}
