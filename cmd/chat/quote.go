package main

import (
	"context"
	"fmt"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/wire"
)

// quoteRunes is how much of a quoted message a reply's line shows: enough to
// tell which message it answers, short enough to leave the reply the line.
const quoteRunes = 40

// quoter finds the message of a conversation that a reply answers; ok is false
// when it is not at hand.
type quoter func(conversationID string, seq int64) (m wire.Message, ok bool)

// replyLabel begins a reply's line: the answered message's sender and first
// words when q finds it, else its seq_no alone.
func replyLabel(reply wire.Message, q quoter, who namer) string {
	if q != nil {
		if m, ok := q(reply.ConversationID, reply.ReplyTo); ok {
			if m.Deleted {
				return fmt.Sprintf("(reply to #%d, deleted)", reply.ReplyTo)
			}
			text := termtext.OneLine(m.Content)
			if text == "" && m.Attachment != "" {
				text = "[attachment]"
			}
			return fmt.Sprintf("(reply to #%d %s: “%s”)", reply.ReplyTo, who.label(m.SenderID), truncate(text, quoteRunes))
		}
	}
	return fmt.Sprintf("(reply to #%d)", reply.ReplyTo)
}

// quoteWait bounds the server's answer for one quoted message: a reply
// prints without its quote rather than hold up the lines after it.
const quoteWait = 3 * time.Second

// maxRemembered bounds the quoted messages cachedQuotes remembers.
const maxRemembered = 1024

// cachedQuotes finds answered messages in a cache, and failing that asks the
// server for them (one history page of one message each), remembering what it
// found and what the server said it does not have.
func cachedQuotes(ctx context.Context, store *localstore.Store, api *client.API) quoter {
	type key struct {
		conv string
		seq  int64
	}
	type answer struct {
		m  wire.Message
		ok bool
	}
	seen := map[key]answer{}
	return func(conv string, seq int64) (wire.Message, bool) {
		k := key{conv, seq}
		if a, ok := seen[k]; ok {
			return a.m, a.ok
		}
		if len(seen) >= maxRemembered {
			clear(seen) // chat tail runs for days: what it remembers stays bounded
		}
		if store != nil {
			if m, err := store.Message(ctx, conv, seq); err == nil {
				seen[k] = answer{m, true}
				return m, true
			}
		}
		if api == nil {
			return wire.Message{}, false
		}
		qctx, cancel := context.WithTimeout(ctx, quoteWait)
		defer cancel()
		page, err := api.History(qctx, conv, seq+1, 1)
		if err != nil {
			return wire.Message{}, false // asked again next time
		}
		a := answer{}
		if len(page.Messages) > 0 && page.Messages[0].SeqNo == seq {
			a = answer{page.Messages[0], true}
		}
		seen[k] = a
		return a.m, a.ok
	}
}

// pageQuotes finds answered messages in a page of history before asking q.
func pageQuotes(page []wire.Message, q quoter) quoter {
	bySeq := make(map[int64]wire.Message, len(page))
	for _, m := range page {
		bySeq[m.SeqNo] = m
	}
	return func(conv string, seq int64) (wire.Message, bool) {
		if m, ok := bySeq[seq]; ok && m.ConversationID == conv {
			return m, true
		}
		return q(conv, seq)
	}
}
