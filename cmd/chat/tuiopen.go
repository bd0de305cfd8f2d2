package main

import (
	"context"

	"github.com/chatterm/chat/client"
)

// The cache's open (the SQLite file, its schema check) and Bubble Tea's
// set-up (raw mode, ultraviolet's key table and screen buffers) each take a
// few ms of the start, and neither needs the other: the TUI needs the cache
// only for its first command, the inbox's read. openAsync opens the cache on
// a goroutine of its own while the program starts; every backend method that
// reads the session waits for it (waitOpen). Which screen comes first needs
// only the stored login, read before (docs/tui.md "Time to a painted
// inbox").

// pendingOpen is an open started by openAsync.
type pendingOpen struct {
	done         chan struct{} // closed when the open has ended
	err          error         // its error, set before done is closed
	user, server string        // the stored login's, for Session meanwhile
}

// openAsync reads the stored login and opens its session on a goroutine,
// without connecting it. Its error is the login's (ErrNotLoggedIn or
// ErrNoServer: the first-run screen); the open's comes from waitOpen. A
// login without a user id (CHAT_TOKEN alone) asks the server whose it is,
// so it is opened here, as open does.
func (b *tuiBackend) openAsync(ctx context.Context) error {
	cfg := b.config()
	acct, err := cfg.LoadAccount()
	if err != nil {
		return err
	}
	if acct.UserID == "" {
		return b.open(ctx)
	}
	p := &pendingOpen{done: make(chan struct{}), user: acct.UserID, server: client.NewAPI(acct.Server, "", nil).Server()}
	b.mu.Lock()
	b.pending = p
	b.mu.Unlock()
	go func() {
		defer close(p.done)
		s, err := b.openSession(ctx, cfg)
		if err != nil {
			p.err = err
			return
		}
		b.attach(s)
	}()
	return nil
}

// waitOpen waits for an open started by openAsync, if any, and returns its
// error.
func (b *tuiBackend) waitOpen() error {
	b.mu.Lock()
	p := b.pending
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
	return p.err
}

// pendingSession is the stored login's user and server while an open started
// by openAsync is under way, or after it failed.
func (b *tuiBackend) pendingSession() (user, server string, ok bool) {
	b.mu.Lock()
	p := b.pending
	b.mu.Unlock()
	if p == nil {
		return "", "", false
	}
	select {
	case <-p.done:
		if p.err != nil {
			// A failed open is still the stored login's: the TUI must not
			// show the first-run screen while quitOnOpenFailure ends it.
			return p.user, p.server, true
		}
		return "", "", false
	default:
		return p.user, p.server, true
	}
}

// quitOnOpenFailure waits for an open started by openAsync and calls quit
// (the program's Quit) if it failed: a cache that cannot be opened ends the
// TUI with its error, as it did when the open came before the program.
// mark notes the open's end in the start trace.
func quitOnOpenFailure(b *tuiBackend, quit func(), mark func(string)) {
	err := b.waitOpen()
	mark("session opened")
	if err != nil {
		quit()
	}
}
