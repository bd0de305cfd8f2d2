package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// The send path's statements (hotQueries) run hundreds of times per group
// commit, and database/sql's layers around each call (its retry, locks,
// argument conversion and result wrappers) took 4.5% of the server's CPU in a
// chatbench throughput profile, a fifth of SQLite's own step for the row, and
// 15% of the bytes it allocated. So the writer's
// connection is opened through writerConnector, which keeps the driver's
// connection, and those statements are prepared on it and run through the
// driver directly, inside the transaction database/sql began on that same
// connection. That is safe because the writer goroutine is the only user of
// the connection (one open connection, jobs run one at a time) and runs them
// only between its Begin and Commit.

// writerConnector opens the writer's connection, sets it up with pragmas the
// DSN cannot carry, and remembers it.
type writerConnector struct {
	dsn     string
	pragmas []string
	drv     sqlite3.SQLiteDriver

	mu   sync.Mutex
	conn *sqlite3.SQLiteConn // the newest connection opened
}

func (c *writerConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	conn := dc.(*sqlite3.SQLiteConn)
	for _, pragma := range c.pragmas {
		if _, err := conn.ExecContext(ctx, pragma, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", pragma, err)
		}
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	return conn, nil
}

func (c *writerConnector) Driver() driver.Driver { return &c.drv }

func (c *writerConnector) current() *sqlite3.SQLiteConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// hotSet is the send path's statements (hotQueries), by name.
type hotSet struct {
	conn  *sqlite3.SQLiteConn // the connection they were prepared on
	stmts map[string]*hotStmt
}

// hotStmt is a statement prepared on the writer's driver connection, with its
// argument and row buffers reused from call to call.
type hotStmt struct {
	st   *sqlite3.SQLiteStmt
	err  error // preparing it failed
	args []driver.NamedValue
	row  []driver.Value
}

// hot returns the named send-path statement. Only the writer goroutine may
// call it, and only inside its transaction. The driver never reports a
// connection bad, so database/sql keeps the writer's one connection for the
// Store's life; should it replace it all the same, the statements are prepared
// again on the new one (TestHotStatementsFollowANewConnection). If that fails,
// the statement returns the error when run.
func (s *Store) hot(name string) *hotStmt {
	conn := s.wconn.current()
	if conn != s.hotStmts.conn {
		s.closeHot()
		s.hotStmts.conn = conn
	}
	if h := s.hotStmts.stmts[name]; h != nil {
		return h
	}
	st, err := conn.Prepare(hotQueries[name])
	if err != nil {
		return &hotStmt{err: fmt.Errorf("prepare %s: %w", name, err)}
	}
	h := &hotStmt{st: st.(*sqlite3.SQLiteStmt)}
	if s.hotStmts.stmts == nil {
		s.hotStmts.stmts = map[string]*hotStmt{}
	}
	s.hotStmts.stmts[name] = h
	return h
}

func (s *Store) closeHot() {
	for _, h := range s.hotStmts.stmts {
		h.st.Close()
	}
	clear(s.hotStmts.stmts)
}

func (h *hotStmt) bind(args []any) []driver.NamedValue {
	h.args = h.args[:0]
	for i, a := range args {
		h.args = append(h.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return h.args
}

// exec runs the statement and returns the number of rows it changed.
func (h *hotStmt) exec(args ...any) (int64, error) {
	if h.err != nil {
		return 0, h.err
	}
	// A context that is never done makes the driver run the statement on this
	// goroutine, without one of its own to watch for cancellation.
	res, err := h.st.ExecContext(context.Background(), h.bind(args))
	clear(h.args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scanRow runs a query and scans its first row into dest, which may hold
// *int64, *int and *string; no row is sql.ErrNoRows.
func (h *hotStmt) scanRow(args []any, dest ...any) error {
	if h.err != nil {
		return h.err
	}
	rows, err := h.st.QueryContext(context.Background(), h.bind(args))
	clear(h.args)
	if err != nil {
		return err
	}
	defer rows.Close()
	if cap(h.row) < len(dest) {
		h.row = make([]driver.Value, len(dest))
	}
	row := h.row[:len(dest)]
	defer clear(row)
	if err := rows.Next(row); errors.Is(err, io.EOF) {
		return sql.ErrNoRows
	} else if err != nil {
		return err
	}
	for i, d := range dest {
		if err := assign(d, row[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

func assign(dest any, v driver.Value) error {
	switch d := dest.(type) {
	case *int64:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("%T into *int64", v)
		}
		*d = n
	case *int:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("%T into *int", v)
		}
		*d = int(n)
	case *string:
		switch t := v.(type) {
		case string:
			*d = t
		case []byte:
			*d = string(t)
		default:
			return fmt.Errorf("%T into *string", v)
		}
	default:
		return fmt.Errorf("cannot scan into %T", dest)
	}
	return nil
}
