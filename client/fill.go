package client

import (
	"context"
	"fmt"

	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// FillProgress is how far FillHistory has come: Got of about Total rows (a
// conversation's last seq_no: messages and events alike).
type FillProgress struct {
	Got, Total int64
}

// FillHistory puts a conversation's whole history into the cache, newest page
// first, so that search covers it; progress is called after each page. Pages
// the cache already holds in full are not asked for again.
func FillHistory(ctx context.Context, api *API, store *localstore.Store, conv string, progress func(FillProgress)) error {
	if err := wire.ValidateConversationID(conv); err != nil {
		return err
	}
	var before, total, got int64
	for {
		resp, err := api.History(ctx, conv, before, wire.MaxPageSize)
		if err != nil {
			return fmt.Errorf("fetch %s before %d: %w", conv, before, err)
		}
		if len(resp.Messages) > 0 && total == 0 {
			total = resp.Messages[0].SeqNo // newest first: the top of the conversation
		}
		if _, err := store.PutMessages(ctx, resp.Messages...); err != nil {
			return err
		}
		got += int64(len(resp.Messages))
		if progress != nil {
			progress(FillProgress{Got: got, Total: max(total, got)})
		}
		if resp.NextBeforeSeq <= 0 {
			return nil
		}
		before = resp.NextBeforeSeq
	}
}
