// Package sqlite is the embedded durable store: the tables of docs/architecture.md in one
// SQLite file (WAL, synchronous=FULL). It serves one node only.
//
// Writes on the hot path (the send transaction and boundary moves) go through one
// writer goroutine that commits whatever has queued up in one transaction (group
// commit), so durability costs one fsync per batch rather than per message.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/chatterm/chat/server"
)

//go:embed migrations/*.sql
var migrations embed.FS

var _ server.Store = (*Store)(nil)

// Store is a server.Store on SQLite.
type Store struct {
	w   *sql.DB // one connection: SQLite has one writer
	r   *sql.DB // readers; WAL lets them run beside the writer
	now func() time.Time

	jobs      chan *job
	closeOnce sync.Once
	done      chan struct{}

	wconn    *writerConnector
	stats    writerStats
	hotStmts hotSet // writer goroutine only

	reads sync.Map // query text → *sql.Stmt prepared on r
}

// Options tune a Store. The zero value is right for production.
type Options struct {
	// Now is the clock (tests inject one); default time.Now.
	Now func() time.Time
	// NoSync trades durability on power loss for speed (synchronous=NORMAL). Off
	// by default: an acknowledged message must survive a crash of the machine.
	NoSync bool
	// Registerer gets the writer's counters (metrics.go); nil: none.
	Registerer prometheus.Registerer
}

// Open opens (creating if needed) the database at path and migrates it.
func Open(path string, opt Options) (*Store, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	sync := "FULL"
	if opt.NoSync {
		sync = "NORMAL"
	}
	if err := registerWALBuf(); err != nil {
		return nil, err
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_synchronous=%s&_busy_timeout=10000&_txlock=immediate&cache=private", path, sync)
	if walBufVFS != "" {
		dsn += "&vfs=" + walBufVFS // the writer's WAL writes go through walbuf_linux.c
	}
	// Checkpoint every 40,000 WAL pages (a WAL file of up to 160 MB) instead of
	// SQLite's 1,000: the hot pages (each busy conversation's newest leaves, the
	// conversations and statuses, the upper B-tree levels) are rewritten by
	// every batch, and a longer WAL copies each into the database once per
	// checkpoint rather than once per 1,000 pages. 10,000 took 15% off
	// BenchmarkSendAndAck; 40,000 adds 6.5–7% to chatbench throughput (three
	// rounds alternated with 10,000: 75,300–79,100 → 80,200–84,400 msgs/s, 4.5%
	// less server CPU per message), since the writer is the bottleneck there. The
	// price: each checkpoint stalls the writer longer, which showed in p99.9 at
	// 10,000 msgs/s open loop (15–18 → 20–20.5 ms) but not in p99.
	//
	// The writer's page cache is 16 MB rather than 2: the newest leaves of a few
	// hundred busy conversations, in two B-trees, outgrow 2 MB, and each page it
	// dropped was read back with a system call (strace -c over 3 s of chatbench
	// throughput: 35,400 pread64 against 9,200; BenchmarkSendBatchAndAck 8.1–8.2
	// → 7.4–8.0 µs of CPU per message). Not 64 MB: SQLite walks its page cache's
	// hash table at the end of every transaction (pcache1TruncateUnsafe, seen
	// with perf), which at 64 MB cost 3% more server CPU per message one at a
	// time (chatbench latency at 12,000/s) and was no faster in batches.
	wconn := &writerConnector{dsn: dsn, pragmas: []string{"PRAGMA wal_autocheckpoint = 40000", "PRAGMA cache_size = -16384"}}
	w := sql.OpenDB(wconn)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := migrate(w); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	r, err := sql.Open("sqlite3", fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=10000&_query_only=1", path))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s := &Store{w: w, r: r, now: opt.Now, jobs: make(chan *job, 4096), done: make(chan struct{}), wconn: wconn}
	err = s.prepare()
	if err == nil {
		err = s.stats.register(opt.Registerer)
	}
	if err != nil {
		s.closeHot()
		s.w.Close()
		s.r.Close()
		return nil, err
	}
	go s.writer()
	return s, nil
}

func migrate(db *sql.DB) error {
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	if version > len(files) {
		// A newer build migrated it: its tables may need what this build
		// would not write (docs/self-hosting.md, "Upgrades").
		return fmt.Errorf("%w: the database is at sqlite schema %d, this chatserver knows up to %d (chatserver --version); run a chatserver of the newer version, or restore a backup made before the upgrade",
			server.ErrNewerSchema, version, len(files))
	}
	sort.Strings(files)
	for i, f := range files {
		if i < version {
			continue
		}
		body, err := migrations.ReadFile(f)
		if err != nil {
			return err
		}
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the writer after the queued jobs and closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.jobs)
		<-s.done
		s.closeHot()
	})
	s.reads.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return errors.Join(s.w.Close(), s.r.Close())
}

// job is one unit of work for the group-commit writer. A failing job rolls back
// alone while the rest of its batch commits. fn may run twice (see commit), so it
// must only assign its results, never accumulate them.
type job struct {
	fn   func(tx *sql.Tx) error
	err  error
	done chan struct{}
}

// errClosed: the store was closed before the job was queued. It wraps
// server.ErrNotApplied, as does a deadline that passed while the queue was
// full: a job that was never queued never runs, so a send refused so is known
// not stored (unavailable, not maybe_stored).
var errClosed = fmt.Errorf("sqlite store is closed: %w", server.ErrNotApplied)

// write runs fn in the next group commit and waits until it is durable.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.enqueue(ctx, fn)()
}

// enqueue queues fn for a group commit and returns a function that waits until
// it is durable and returns its error. The writer runs jobs in the order they
// were queued.
func (s *Store) enqueue(ctx context.Context, fn func(tx *sql.Tx) error) (wait func() error) {
	j := &job{fn: fn, done: make(chan struct{})}
	if err := s.queue(ctx, j); err != nil {
		return func() error { return err }
	}
	// Once queued, the job will run: its waiter waits for it even if ctx ends,
	// so a caller never reports failure for a write that then commits.
	return func() error {
		<-j.done
		return j.err
	}
}

func (s *Store) queue(ctx context.Context, j *job) (err error) {
	defer func() {
		if recover() != nil { // send on closed channel: the store is closing
			err = errClosed
		}
	}()
	// A job the queue has room for is queued even when ctx has ended: select
	// would pick at random, and a send numbered under its conversation's lock
	// and then not written leaves a hole that the sends queued behind it make
	// permanent. A caller that is gone gets its write made; its resend is
	// answered from it.
	select {
	case s.jobs <- j:
		return nil
	default:
	}
	select {
	case s.jobs <- j:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sqlite: the write queue stayed full: %w: %w", server.ErrNotApplied, ctx.Err())
	}
}

const maxBatch = 512

func (s *Store) writer() {
	defer close(s.done)
	batch := make([]*job, 0, maxBatch)
	for first := range s.jobs {
		batch = s.gather(s.drain(append(batch[:0], first)))
		s.commit(batch)
	}
}

// drain adds to batch whatever jobs are queued, up to maxBatch.
func (s *Store) drain(batch []*job) []*job {
	for len(batch) < maxBatch {
		select {
		case j, ok := <-s.jobs:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// gatherRounds is how many times the writer lets the goroutines ready to run
// go first before it commits what it has. The jobs of one moment come
// together: other sends and acks, their connections' readers and workers
// queued on the same processors. Each round lets them reach the queue, so they
// share this commit and its fsync instead of each paying one of its own; when
// nothing else is ready a round costs well under a microsecond. Measured
// against committing at once (docs/benchmarks.md, session 13): a third more
// writes per commit, 7–14% less server CPU per message unbatched, the same
// open-loop tail.
const gatherRounds = 8

func (s *Store) gather(batch []*job) []*job {
	for range gatherRounds {
		if len(batch) >= maxBatch {
			break
		}
		runtime.Gosched()
		batch = s.drain(batch)
	}
	return batch
}

func (s *Store) commit(batch []*job) {
	began := time.Now()
	finish := func(err error) {
		// Counted before any job is released: whoever sees a write done sees it counted.
		s.stats.add(len(batch), time.Since(began))
		for _, j := range batch {
			if err != nil && j.err == nil {
				j.err = err
			}
			close(j.done)
		}
	}
	// Fast path: the whole batch in one transaction without savepoints (a
	// SAVEPOINT/RELEASE pair per job cost more than the jobs themselves). Jobs
	// rarely fail; when one does, the batch is rolled back and run again below
	// with a savepoint per job, so the failing job still rolls back alone.
	if done, err := s.commitFast(batch); done {
		finish(err)
		return
	}
	for _, j := range batch {
		j.err = nil
	}
	tx, err := s.w.Begin()
	if err != nil {
		finish(fmt.Errorf("begin: %w", err))
		return
	}
	for _, j := range batch {
		if _, err := tx.Exec("SAVEPOINT job"); err != nil {
			tx.Rollback()
			finish(fmt.Errorf("savepoint: %w", err))
			return
		}
		if j.err = j.fn(tx); j.err != nil {
			if _, err := tx.Exec("ROLLBACK TO job"); err != nil {
				tx.Rollback()
				finish(fmt.Errorf("rollback to savepoint: %w", err))
				return
			}
		}
		if _, err := tx.Exec("RELEASE job"); err != nil {
			tx.Rollback()
			finish(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		finish(fmt.Errorf("commit: %w", err))
		return
	}
	finish(nil)
}

// commitFast runs the batch without savepoints. done is false when a job failed
// and nothing was committed; err is a failure of the transaction itself.
func (s *Store) commitFast(batch []*job) (done bool, err error) {
	tx, err := s.w.Begin()
	if err != nil {
		return true, fmt.Errorf("begin: %w", err)
	}
	for _, j := range batch {
		if j.err = j.fn(tx); j.err != nil {
			if err := tx.Rollback(); err != nil {
				return true, fmt.Errorf("rollback: %w", err)
			}
			return false, nil
		}
	}
	if err := tx.Commit(); err != nil {
		return true, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}

// The send path's statements (see hot.go), by name.
var hotQueries = map[string]string{
	"msgByID": `SELECT ` + msgColumns + ` FROM messages WHERE conversation_id = ? AND message_id = ?`,
	"insertMsg": `INSERT INTO messages (conversation_id, seq_no, message_id, sender_id, receiver_id, content, ts, attachment, kind, target_seq, reply_to, attachment_info, mentions)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
	// A mention of one member, and of all of them but the sender (@all, @here).
	"insertMention": `INSERT INTO mentions (user_id, conversation_id, seq_no) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
	"insertMentionAll": `INSERT INTO mentions (user_id, conversation_id, seq_no)
		SELECT user_id, conversation_id, ?3 FROM participants WHERE conversation_id = ?1 AND user_id != ?2 ON CONFLICT DO NOTHING`,
	"updateConv": `UPDATE conversations SET last_message_body = ?2, last_message_sender = ?3, last_message_at = ?4,
		last_seq = ?1, counter = MAX(counter, ?1), last_message_seq = ?1
		WHERE conversation_id = ?5 AND last_seq < ?6`,
	// An event moves last_seq only: the preview and activity stay on the last message.
	"updateConvEvent": `UPDATE conversations SET last_seq = ?1, counter = MAX(counter, ?1)
		WHERE conversation_id = ?2 AND last_seq < ?1`,
	"convExists": `SELECT 1 FROM conversations WHERE conversation_id = ?`,
	"upsertStatus": `INSERT INTO message_status (user_id, conversation_id, last_delivered_seq, last_read_seq) VALUES (?1, ?2, MAX(?3, ?4), ?4)
		ON CONFLICT DO UPDATE SET last_delivered_seq = MAX(last_delivered_seq, excluded.last_delivered_seq),
		last_read_seq = MAX(last_read_seq, excluded.last_read_seq)`,
	"getStatus": `SELECT last_delivered_seq, last_read_seq FROM message_status WHERE user_id = ? AND conversation_id = ?`,
	"upsertPending": `INSERT INTO pending_deliveries (receiver_id, conversation_id, first_undelivered_seq, last_pending_seq) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT DO UPDATE SET first_undelivered_seq = MIN(first_undelivered_seq, excluded.first_undelivered_seq),
		last_pending_seq = MAX(last_pending_seq, excluded.last_pending_seq)`,
	"clearPending":   `DELETE FROM pending_deliveries WHERE receiver_id = ?1 AND conversation_id = ?2 AND last_pending_seq <= ?3`,
	"advancePending": `UPDATE pending_deliveries SET first_undelivered_seq = ?3 + 1 WHERE receiver_id = ?1 AND conversation_id = ?2 AND first_undelivered_seq <= ?3`,
}

// prepare prepares the send path's statements on the writer's connection
// before the writer starts, so that a mistake in one fails Open.
func (s *Store) prepare() error {
	// The connection opens on first use.
	if err := s.w.Ping(); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	for name := range hotQueries {
		if err := s.hot(name).err; err != nil {
			return err
		}
	}
	return nil
}

// query runs a read on the reader pool through a statement prepared once per
// query text: history pages, catch-up and the pending list on connect would
// otherwise parse their SQL on every call.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, ok := s.reads.Load(q)
	if !ok {
		prepared, err := s.r.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		var loaded bool
		if st, loaded = s.reads.LoadOrStore(q, prepared); loaded {
			prepared.Close()
		}
	}
	return st.(*sql.Stmt).QueryContext(ctx, args...)
}

func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// privateFiles makes the database file 0600 before SQLite opens it: SQLite
// creates it 0644 (its default, less the umask) and gives its WAL and
// shared-memory files the database's own mode, so password hashes, token
// hashes and every message were readable by any local user who could reach
// the directory. A database, WAL or shared-memory file made before is
// tightened the same way.
func privateFiles(path string) error {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) // an empty file is an empty database
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("make %s private (mode %04o): %w", p, fi.Mode().Perm(), err)
			}
		}
	}
	return nil
}
