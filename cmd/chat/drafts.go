package main

import "context"

// Drafts and input history are kept in the account's cache
// (localstore/drafts.go says why there and not in a file like muted.json).

func (b *tuiBackend) Drafts(ctx context.Context) (map[string]string, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return s.Store().Drafts(ctx)
}

func (b *tuiBackend) InputHistory(ctx context.Context) (map[string][]string, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return s.Store().InputHistory(ctx)
}

func (b *tuiBackend) SaveDrafts(ctx context.Context, drafts map[string]string) error {
	s, err := b.session()
	if err != nil {
		return err
	}
	return s.Store().SetDrafts(ctx, drafts)
}

func (b *tuiBackend) AddInput(ctx context.Context, conversationID, text string) error {
	s, err := b.session()
	if err != nil {
		return err
	}
	return s.Store().AddInput(ctx, conversationID, text)
}
