package main

import (
	"context"

	"github.com/chatterm/chat/client"
)

// Muted and SetMuted keep the TUI's muted conversations with the account
// (client.Config.Muted: muted.json beside its cache).

func (b *tuiBackend) Muted(context.Context) (map[string]bool, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return b.config().Muted(s.Server(), s.UserID())
}

func (b *tuiBackend) SetMuted(_ context.Context, conversationID string, muted bool) error {
	s, err := b.session()
	if err != nil {
		return err
	}
	return b.config().SetMuted(s.Server(), s.UserID(), conversationID, muted)
}

func (b *tuiBackend) config() client.Config {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg
}
