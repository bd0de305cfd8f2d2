// Package dynamo is the production server.Store on Amazon DynamoDB (docs/architecture.md's
// data model; docs/dynamodb.md lists every access pattern and what a message
// costs). Every method is GetItem, BatchGetItem, a Query on a key or index, or
// (Transact)WriteItems; nothing scans.
//
// Calls go through a circuit breaker (open at 1% errors over 30 s,
// half-open probes), whose state is exported as a Prometheus gauge.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/breaker"
)

var _ server.Store = (*Store)(nil)

// Options configure a Store. Zero fields take the defaults in brackets.
type Options struct {
	// TablePrefix starts every table name, e.g. "chat-" [none].
	TablePrefix string
	// Region [from the environment / shared config]; Endpoint overrides the
	// service URL (moto, DynamoDB Local) [AWS's].
	Region   string
	Endpoint string
	// AccessKeyID and SecretAccessKey set static credentials (for local test
	// servers); empty uses the SDK's default chain (env, profile, IAM role).
	AccessKeyID     string
	SecretAccessKey string

	// CallTimeout bounds one Store call, retries included [DefaultCallTimeout].
	// A call past it is answered as failed (maybe_stored for a send); it counts
	// against the breaker only if DynamoDB answered no other call meanwhile
	// (slowcalls.go). DialTimeout bounds connecting [300ms], so an unreachable
	// endpoint fails fast.
	CallTimeout time.Duration
	DialTimeout time.Duration
	// MaxAttempts per SDK request, the first included [3].
	MaxAttempts int

	// SkipResponseChecksum turns off the CRC32 check of responses, which moto
	// gets wrong on some answers (tests only).
	SkipResponseChecksum bool
	// SerialWrites makes this process send one write at a time (tests against
	// moto only: moto snapshots every table of the region before a transaction
	// and restores the snapshot when a condition fails, undoing writes that ran
	// concurrently).
	// The environment variable CHAT_DYNAMO_SERIAL_WRITES=1 turns on this and
	// SkipResponseChecksum, for end-to-end tests that build the Store through
	// configuration that has no such field.
	SerialWrites bool

	// IdempotencyTTL is how long a message_id is remembered after its message is
	// stored [30 days]: a resend after that stores a second copy.
	IdempotencyTTL time.Duration

	// InboxIndexLag is how far a conversation's entries in the participants
	// index may lag behind its last message [DefaultInboxIndexLag]: a
	// conversation's messages within it move them once (index.go). Inbox
	// reads that much further down the index.
	InboxIndexLag time.Duration

	// KeepMentions is how many of a member's mention seq_nos their
	// message_status item keeps once their read boundary has passed the
	// older ones [DefaultKeepMentions]: the rest are dropped by the read
	// that passes them, so the item stays small however often they are
	// named (mentions.go).
	KeepMentions int

	// Meter, if set, counts the write units of every write (tests and
	// benches only: it reads each item a write touches, before and after).
	Meter *Meter

	Breaker    BreakerOptions
	Registerer prometheus.Registerer // breaker state gauge (nil: not exported)
	Logger     *slog.Logger          // [slog.Default()]
	Now        func() time.Time      // token expiry, TTL attributes [time.Now]
}

// DefaultCallTimeout is Options.CallTimeout's default. AWS gives single-digit
// milliseconds for GetItem and PutItem and asks for at least 1 s per attempt
// of a TransactWriteItems (its TransactionInProgressException guidance); a
// call here is up to MaxAttempts attempts with backoffs of up to 200 ms
// between them. 1 s holds two backoffs and three attempts far above
// DynamoDB's tail, and is five times the slowest single call measured on the
// test server under load (docs/dynamodb.md, "The call timeout"). 500 ms, the
// earlier default, left a transaction's attempt less than AWS's own minimum.
const DefaultCallTimeout = time.Second

// Store is the DynamoDB server.Store.
type Store struct {
	db  *dynamodb.Client
	t   tables
	o   Options
	cb  *breaker.Breaker
	log *slog.Logger
	ans *answerClock // what the breaker counts of a timeout (slowcalls.go)

	archiveSeeded atomic.Bool // seedArchive is done (archive.go)
	idx           indexMoves

	bg      sync.WaitGroup // background writes (finishLater's retries)
	closing chan struct{}  // closed by Close
	closeMu sync.Once
}

// Open builds a Store. It does not contact DynamoDB: call CreateTables, or any
// method, for that.
func Open(ctx context.Context, o Options) (*Store, error) {
	timeoutGiven := o.CallTimeout > 0
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 300 * time.Millisecond
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.InboxIndexLag <= 0 {
		o.InboxIndexLag = DefaultInboxIndexLag
	}
	if o.KeepMentions <= 0 {
		o.KeepMentions = DefaultKeepMentions
	}
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = 30 * 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if os.Getenv("CHAT_DYNAMO_SKIP_CHECKSUM") != "" {
		// Processes that reach moto through a proxy serialising every request
		// (cmd/chaos) need only this of CHAT_DYNAMO_SERIAL_WRITES.
		o.SkipResponseChecksum = true
	}
	if os.Getenv("CHAT_DYNAMO_SERIAL_WRITES") != "" {
		o.SerialWrites, o.SkipResponseChecksum = true, true
		// Calls queue for their turn to write, and moto slows down as its tables
		// grow (it copies them all for each transaction): tests that give no
		// timeout get a long one. One given (a chatserver's --dynamodb-timeout)
		// is kept: the wait for the turn then counts in it, and a call that
		// runs past it while others are answered is slow, not a fault.
		if !timeoutGiven {
			o.CallTimeout = max(o.CallTimeout, 30*time.Second)
		}
	}
	// The SDK's buildable client, so settings from the environment (a CA bundle)
	// still apply.
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = o.DialTimeout }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
			tr.TLSHandshakeTimeout = 2 * time.Second
			// No ResponseHeaderTimeout: each Store call's context bounds it
			// (do), and the tables' creation at start is not a Store call —
			// CreateTable on a slow test server takes longer than a call.
		})
	loadOpts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.MaxAttempts
				so.MaxBackoff = 200 * time.Millisecond
			})
		}),
	}
	if o.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(o.Region))
	}
	if o.AccessKeyID != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.AccessKeyID, o.SecretAccessKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: aws config: %w", err)
	}
	s := &Store{t: newTables(o.TablePrefix), o: o, log: o.Logger, closing: make(chan struct{})}
	s.db = dynamodb.NewFromConfig(cfg, func(do *dynamodb.Options) {
		if o.Endpoint != "" {
			do.BaseEndpoint = aws.String(o.Endpoint)
		}
		do.DisableValidateResponseChecksum = o.SkipResponseChecksum
		do.APIOptions = append(do.APIOptions, answeredWrites)
		if o.SerialWrites {
			do.APIOptions = append(do.APIOptions, serialWrites(new(sync.Mutex)))
		}
		if o.Meter != nil {
			do.APIOptions = append(do.APIOptions, s.metering)
		}
	})
	if s.ans, err = newAnswerClock(o.Registerer); err != nil {
		return nil, fmt.Errorf("dynamo: %w", err)
	}
	if s.cb, err = breaker.New("dynamodb", o.Breaker, breakerDefaults, o.Registerer, o.Logger, isFailure, isExcluded); err != nil {
		return nil, fmt.Errorf("dynamo: %w", err)
	}
	return s, nil
}

// serialWrites lets one write at a time reach the test server. The turn ends
// when the call does, also when its caller gave up: moto may still be working
// on that write, and the next one then overlaps it (cmd/chaos's proxy keeps
// the turn until moto answers, for that reason). Holding the turn here past
// the caller's deadline was tried and undone: the fault tests' proxies hold a
// lost write's answer until its caller leaves, so the turn was never given
// back. In tests the call timeout is 30 s (Open), past anything moto takes.
func serialWrites(mu *sync.Mutex) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("chatSerialWrites",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch awsmiddleware.GetOperationName(ctx) {
				case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem":
					mu.Lock()
					defer mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// Close releases nothing: the SDK client holds only idle connections.
// Close ends the store's background retries and waits for them.
func (s *Store) Close() error {
	s.closeMu.Do(func() { close(s.closing) })
	s.bg.Wait()
	return nil
}

// Client is the SDK client, for tests and tools.
func (s *Store) Client() *dynamodb.Client { return s.db }

// BreakerState is the circuit breaker's state, for tests and health checks.
func (s *Store) BreakerState() gobreaker.State { return s.cb.State() }

// ErrUnavailable wraps errors caused by DynamoDB being unreachable, throttling or
// failing, or the circuit being open.
var ErrUnavailable = fmt.Errorf("dynamodb: %w", server.ErrUnavailable)

// do runs one Store call through the breaker with the call timeout.
func (s *Store) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	done, err := s.cb.Allow()
	if err != nil {
		return fmt.Errorf("dynamo %s: %w: %w: %w", op, ErrUnavailable, server.ErrNotApplied, err)
	}
	started := s.ans.start()
	ctx, cancel := context.WithTimeout(ctx, s.o.CallTimeout)
	err = f(ctx)
	cancel()
	s.report(started, err, done)
	if err == nil || isDomainErr(err) {
		return err
	}
	if isFailure(err) {
		// Not ErrNotApplied, even when the last attempt could not connect: an
		// earlier one may have been sent, and made the write.
		return fmt.Errorf("dynamo %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("dynamo %s: %w", op, err)
}

func isDomainErr(err error) bool {
	var dup *server.DuplicateError
	return errors.Is(err, server.ErrNotFound) || errors.Is(err, server.ErrExists) || errors.Is(err, server.ErrNotFirst) ||
		errors.Is(err, server.ErrBadInvite) || errors.Is(err, server.ErrSeqTaken) || errors.As(err, &dup) ||
		errors.Is(err, server.ErrRaced) || errors.Is(err, server.ErrNotApplied) || errors.Is(err, server.ErrConfusable) ||
		errors.Is(err, server.ErrTargetChanged)
}

// isFailure says whether err means DynamoDB is in trouble (not that the request
// was refused on its merits): network errors, timeouts, 5xx, throttling.
func isFailure(err error) bool {
	if err == nil || isDomainErr(err) || errors.Is(err, context.Canceled) {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"InternalServerError", "ServiceUnavailable", "LimitExceededException":
			return true
		}
		// Any other answer with a 4xx fault is about the request; DynamoDB is up.
		return ae.ErrorFault() != smithy.FaultClient
	}
	return true
}

func isExcluded(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, errSlowNotDown)
}

// Attribute helpers. Times are stored as unix nanoseconds (N), zero as 0, as the
// SQLite store does.

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func bv(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }

func tv(t time.Time) types.AttributeValue { return nv(ns(t)) }

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

type item = map[string]types.AttributeValue

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it item, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

func getB(it item, name string) []byte {
	if v, ok := it[name].(*types.AttributeValueMemberB); ok {
		return v.Value
	}
	return nil
}

func getBool(it item, name string) bool {
	if v, ok := it[name].(*types.AttributeValueMemberBOOL); ok {
		return v.Value
	}
	return false
}

func getT(it item, name string) time.Time { return fromNS(getN(it, name)) }

// isCondFailed reports a ConditionalCheckFailedException of a single write.
func isCondFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// cancelReasons returns the per-item codes of a cancelled transaction ("None"
// for items that passed), or nil if err is not a cancellation.
func cancelReasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	codes := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		codes[i] = "None"
		if r.Code != nil {
			codes[i] = *r.Code
		}
	}
	if len(codes) == 0 {
		// Some servers omit the list; treat it as a conflict so the caller retries
		// after re-reading.
		return []string{"TransactionConflict"}
	}
	return codes
}

// backoff sleeps before retry attempt n (1-based) of a conflicting transaction.
func backoff(ctx context.Context, n int) error {
	d := time.Duration(1<<min(n, 6)) * 2 * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d/2 + time.Duration(time.Now().UnixNano()%int64(d/2+1))):
		return nil
	}
}

// queryEach runs a Query, following LastEvaluatedKey page after page, and hands
// each item to fn until fn returns false or the results end.
func (s *Store) queryEach(ctx context.Context, in *dynamodb.QueryInput, fn func(item) bool) error {
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if !fn(it) {
				return nil
			}
		}
	}
	return nil
}
