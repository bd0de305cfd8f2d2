package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chatterm/chat/wire"
)

// hashWait bounds how long a login or registration waits for a hashing slot
// before it is answered "overloaded": under a spray the queue would otherwise
// grow without bound while every waiter holds a request goroutine.
const hashWait = 2 * time.Second

// passwords runs bcrypt for logins and registrations through a fixed number of
// slots (Config.MaxHashing), so that password guessing can take at most that
// many cores from the send path, however many accounts or addresses it uses.
type passwords struct {
	slots   chan struct{}
	cost    int
	metrics *Metrics
	inUse   atomic.Int32
	peak    atomic.Int32 // most slots ever taken at once, for tests

	// dummy is compared against for unknown users, so that "no such user" costs
	// what a wrong password costs and accounts cannot be told apart by timing.
	dummyOnce sync.Once
	dummy     []byte
}

func newPasswords(n, cost int, m *Metrics) *passwords {
	return &passwords{slots: make(chan struct{}, n), cost: cost, metrics: m}
}

// bcryptInput is what bcrypt is given for a password. bcrypt reads only the
// first 72 bytes; a longer password (wire.MaxPasswordLen allows 256) is
// pre-hashed so that all of it counts. Passwords of 72 bytes or fewer go in as
// they are, so hashes made before the pre-hash keep working (a longer one
// could not be registered then: bcrypt refused it).
func bcryptInput(password string) []byte {
	if len(password) <= 72 {
		return []byte(password)
	}
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// acquire takes a hashing slot, or answers "overloaded" with a retry hint
// after hashWait.
func (p *passwords) acquire(ctx context.Context) (func(), error) {
	t := time.NewTimer(hashWait)
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		p.metrics.PasswordHashes.Inc()
		if n := p.inUse.Add(1); n > p.peak.Load() {
			p.peak.Store(n) // racy max; exact enough for a bound that holds
		}
		return func() { p.inUse.Add(-1); <-p.slots }, nil
	case <-t.C:
	case <-ctx.Done():
	}
	p.metrics.HashRefused.Inc()
	return nil, &wire.Error{Code: wire.CodeOverloaded, Message: "the server is busy checking passwords; retry after the hint", RetryAfterMs: 1000}
}

// hash makes the stored hash of a new password.
func (p *passwords) hash(ctx context.Context, password string) ([]byte, error) {
	release, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return bcrypt.GenerateFromPassword(bcryptInput(password), p.cost)
}

// check reports whether password matches hash; a nil hash (unknown user) is
// checked against a dummy hash of the same cost and never matches.
func (p *passwords) check(ctx context.Context, hash []byte, password string) (bool, error) {
	known := hash != nil
	if !known {
		p.dummyOnce.Do(func() {
			p.dummy, _ = bcrypt.GenerateFromPassword([]byte("no such user"), p.cost)
		})
		hash = p.dummy
	}
	release, err := p.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return bcrypt.CompareHashAndPassword(hash, bcryptInput(password)) == nil && known, nil
}
