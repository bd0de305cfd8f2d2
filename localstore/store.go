// Package localstore is the chat client's SQLite cache, one per account. It keeps
// messages keyed by (conversation_id, seq_no), every member's tick boundaries, the
// inbox, the outbox of unsent messages and the sync cursors, so that a client
// opens from cache at once, works offline, and resumes without loss or duplicates.
//
// The store is safe for use by several goroutines and, through SQLite's locking
// (WAL, busy_timeout), by several processes on the same file.
package localstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chatterm/chat/wire"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrNotFound is returned when a message, outbox entry or conversation is not in
// the cache.
var ErrNotFound = errors.New("localstore: not found")

// Options configure Open.
type Options struct {
	// UserID is the account the cache belongs to (required). Its boundaries feed
	// the inbox's unread counts, and a direct conversation's peer is the other
	// member.
	UserID string
	// Now is the clock used for outbox times. Default time.Now.
	Now func() time.Time
	// Unsearched: nothing will search this cache, so stored messages are
	// not queued for the search index (unsearched.go). Only for ":memory:"
	// (chat tail's), whose schema lives as long as the process.
	Unsearched bool
}

// Store is an open cache.
type Store struct {
	db     *sql.DB
	self   string
	now    func() time.Time
	memory bool // ":memory:": nothing reaches a disk, so no write is synced
	// unsearchedCache: stored messages are not queued for the search index
	// (Options.Unsearched).
	unsearchedCache bool
	searchNums      searchNums // searchqueue.go

	// beforeCommit, when set (by tests), runs inside each transaction just
	// before its commit; syncSet, before each PRAGMA synchronous it issues.
	beforeCommit func(*sql.Tx)
	syncSet      func(stmt string)
}

// stmtCacheSize is how many prepared statements the connection keeps: more
// than the distinct queries of the receive path and the views, so that a
// burst never compiles one twice.
const stmtCacheSize = 128

// Open opens (creating if needed) the cache at path and brings its schema up to
// date. path ":memory:" gives a private in-memory cache, for a process that wants
// its own view (chat tail).
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := wire.ValidateUserID(opts.UserID); err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	memory := path == ":memory:"
	if !memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("open cache: %w", err)
		}
		if err := ownerOnly(path); err != nil {
			return nil, fmt.Errorf("open cache: %w", err)
		}
	}
	// _txlock=immediate takes the write lock at BEGIN, so two processes never
	// deadlock upgrading read transactions; busy_timeout makes the loser wait.
	// synchronous=NORMAL for what the server can send again (rebuildableTx,
	// every incoming batch); the outbox must survive a crash once Enqueue
	// returns, so tx raises it to FULL around every other write
	// (durability.go). _stmt_cache_size keeps the driver's prepared
	// statements: without it every query is compiled anew, a quarter of what
	// an incoming message cost chat tail (docs/tui.md, "What a message costs
	// the session").
	dsn := "file:" + escapePath(path) + "?_journal_mode=WAL&_busy_timeout=5000&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=on&_stmt_cache_size=" + strconv.Itoa(stmtCacheSize)
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and an in-memory database
	// exists only on its own connection.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, self: opts.UserID, now: opts.Now, memory: memory}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open cache %s: %w", path, err)
	}
	if opts.Unsearched {
		if err := s.unsearched(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open cache %s: %w", path, err)
		}
		s.unsearchedCache = true
	}
	return s, nil
}

func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// migrate applies the embedded migrations not yet applied, tracked in
// PRAGMA user_version (migration N sets it to N).
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > len(names) {
		return fmt.Errorf("cache schema version %d is newer than this program knows (%d); upgrade chat or delete the cache", version, len(names))
	}
	for i := version; i < len(names); i++ {
		body, err := migrations.ReadFile(names[i])
		if err != nil {
			return err
		}
		err = s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", names[i], err)
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// UserID is the account the cache belongs to.
func (s *Store) UserID() string { return s.self }

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// conversationShape derives a conversation's type and, for a direct one, the
// peer, from its id.
func (s *Store) conversationShape(id string) (typ, peer string) {
	if a, b, ok := wire.DirectMembers(id); ok {
		if a == s.self {
			return wire.Direct, b
		}
		return wire.Direct, a
	}
	return wire.Group, ""
}

func validMessage(m wire.Message) error {
	if err := wire.ValidateConversationID(m.ConversationID); err != nil {
		return err
	}
	if m.SeqNo <= 0 {
		return wire.Errorf(wire.CodeInvalid, "message %s: seq_no must be positive", m.ConversationID)
	}
	if m.MessageID == "" || m.SenderID == "" {
		return wire.Errorf(wire.CodeInvalid, "message %s/%d: message_id and sender_id are required", m.ConversationID, m.SeqNo)
	}
	return nil
}

// ownerOnly creates the cache file readable by its owner only (it holds every
// conversation), or narrows an existing one that an earlier version made 0644.
// SQLite gives its -wal and -shm files the database file's mode.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return f.Chmod(0o600)
	}
	return nil
}
