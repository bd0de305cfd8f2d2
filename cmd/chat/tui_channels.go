package main

import (
	"context"

	"github.com/chatterm/chat/wire"
)

// Channels lists every public channel on the server (the TUI's browser).
func (b *tuiBackend) Channels(ctx context.Context) ([]wire.ChannelInfo, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return s.API().AllChannels(ctx)
}

// JoinChannel joins a channel and caches it.
func (b *tuiBackend) JoinChannel(ctx context.Context, id string) (wire.Conversation, error) {
	s, err := b.session()
	if err != nil {
		return wire.Conversation{}, err
	}
	return s.JoinChannel(ctx, id)
}

// Leave leaves a channel, as chat channel leave does: the user
// removes themselves. The cache keeps what it had of it, as it does for any
// conversation left.
func (b *tuiBackend) Leave(ctx context.Context, id string) error {
	s, err := b.session()
	if err != nil {
		return err
	}
	return s.API().RemoveMember(ctx, id, s.UserID())
}
