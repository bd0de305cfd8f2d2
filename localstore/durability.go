package localstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
)

// What each write needs to survive.
//
// The user's own writes commit with synchronous=FULL: in WAL mode such a
// commit syncs the log before it returns, so an outbox entry (Enqueue)
// outlives a power cut once the user has been told it is queued. That sync is most of what a
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
// transaction. The connection is opened at NORMAL, what the receive path
// needs, so the commits of a burst run without touching it; tx, through
// which every other write goes, raises it to FULL around its own transaction
// on the store's one connection (Open allows one, and an in-memory cache
// exists only on it) and lowers it again before the connection goes to
// anyone else. Switching per relaxed commit cost two statements and taking
// the connection out of the pool, ~20 µs of every incoming batch (docs/tui.md,
// "Session 21: the receive commit"); the writes that need FULL are the
// user's own and rare. No write may bypass tx or rebuildableTx (a bare
// s.db.ExecContext would commit at NORMAL): TestWriteDurability pins each.

const (
	syncRelaxed = "PRAGMA synchronous = NORMAL"
	syncFull    = "PRAGMA synchronous = FULL"
)

// rebuildableTx runs fn in a transaction whose commit is not synced to disk:
// for writes the server can send again after a power cut (see above). The
// connection is at NORMAL already.
func (s *Store) rebuildableTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	return s.finish(tx, fn)
}

// tx runs fn in a transaction whose commit is synced before it returns
// (synchronous=FULL): for what exists only on this device (the outbox,
// drafts, the cursor a caller moves by hand) and everything not shown to be
// rebuildable. If the connection cannot be raised to FULL, nothing is
// written; if it cannot be lowered again, the connection is closed and the
// next one opens at NORMAL.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.memory {
		tx, err := s.db.BeginTx(ctx, nil) // nothing is synced anyway
		if err != nil {
			return err
		}
		return s.finish(tx, fn)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := s.setSync(ctx, conn, syncFull); err != nil {
		return fmt.Errorf("raise synchronous to FULL: %w", err)
	}
	defer func() {
		// Even when ctx has ended: left at FULL, every incoming batch would sync.
		if err := s.setSync(context.WithoutCancel(ctx), conn, syncRelaxed); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // closes it: the next opens at NORMAL
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	return s.finish(tx, fn)
}

func (s *Store) setSync(ctx context.Context, conn *sql.Conn, stmt string) error {
	if s.syncSet != nil {
		s.syncSet(stmt)
	}
	_, err := conn.ExecContext(ctx, stmt)
	return err
}

// finish runs fn in tx and commits, or rolls back if fn fails.
func (s *Store) finish(tx *sql.Tx, fn func(*sql.Tx) error) error {
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if s.beforeCommit != nil {
		s.beforeCommit(tx)
	}
	return tx.Commit()
}

// exec runs one statement through tx, at FULL: a bare s.db.ExecContext
// would commit at the connection's NORMAL.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}
