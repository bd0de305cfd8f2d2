package httpd

import (
	"context"
	"fmt"
	"sync"

	"github.com/chatterm/chat/wire"
)

// Default socket caps (docs/security.md). A person has a few terminals and
// scripts open; an office behind one NAT address has many people.
const (
	DefaultSocketsPerUser = 32
	DefaultSocketsPerAddr = 256
)

// sockets counts live WebSockets per user, per client address and in all, and
// refuses a new one past a cap before the upgrade: one account opening sockets
// in a loop must not use up the process's file descriptors, which /healthz,
// logins and every other user need too. It also lets Close wait for the last
// socket to be gone (as net/http.Server tracks its connections).
type sockets struct {
	perUser, perAddr, total int

	mu     sync.Mutex
	users  map[string]int
	addrs  map[string]int
	live   int
	closed bool
	idle   chan struct{} // closed when live drops to 0 after close
}

func newSockets(perUser, perAddr, total int) *sockets {
	return &sockets{perUser: perUser, perAddr: perAddr, total: total,
		users: map[string]int{}, addrs: map[string]int{}, idle: make(chan struct{})}
}

// admit counts a socket for user from addr, or says which cap refuses it. The
// returned release must be called once when the socket is gone.
func (s *sockets) admit(user, addr string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, &wire.Error{Code: wire.CodeUnavailable, Message: "server is shutting down; reconnect with backoff", RetryAfterMs: 1000}
	case s.total > 0 && s.live >= s.total:
		return nil, &wire.Error{Code: wire.CodeOverloaded, Message: fmt.Sprintf("this server holds its maximum of %d connections; retry after the hint", s.total), RetryAfterMs: 5000}
	case s.perUser > 0 && s.users[user] >= s.perUser:
		return nil, &wire.Error{Code: wire.CodeRateLimited, Message: fmt.Sprintf("user %s has %d connections open, the most this server allows; close one", user, s.perUser), RetryAfterMs: 5000}
	case s.perAddr > 0 && s.addrs[addr] >= s.perAddr:
		return nil, &wire.Error{Code: wire.CodeRateLimited, Message: fmt.Sprintf("your address has %d connections open, the most this server allows; close one", s.perAddr), RetryAfterMs: 5000}
	}
	s.users[user]++
	s.addrs[addr]++
	s.live++
	var once sync.Once
	return func() { once.Do(func() { s.release(user, addr) }) }, nil
}

func (s *sockets) release(user, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users[user]--; s.users[user] <= 0 {
		delete(s.users, user)
	}
	if s.addrs[addr]--; s.addrs[addr] <= 0 {
		delete(s.addrs, addr)
	}
	s.live--
	if s.closed && s.live == 0 {
		close(s.idle)
	}
}

// closeAndWait refuses new sockets and waits until the live ones are gone or
// ctx ends.
func (s *sockets) closeAndWait(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		if s.live == 0 {
			close(s.idle)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sockets still open at shutdown: %w", ctx.Err())
	}
}

// count is the number of live sockets.
func (s *sockets) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}
