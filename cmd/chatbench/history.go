package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/sqlite"
	"github.com/chatterm/chat/wire"
)

// The history scenario's reader and the peers of its conversations.
const histA = "histbench-a"

func histPeer(i int) string { return "histbench-b" + strconv.Itoa(i) }

// histLayout spreads m messages over conversations of at least 100 messages each.
func (b *bench) histLayout() (convs, per int) {
	convs = max(min(b.historyConvs, b.historyM/100), 1)
	return convs, b.historyM / convs
}

// seedHistory fills dataDir's SQLite file, through the server's own store package,
// with convs direct conversations of per messages each (keeping what is already
// there). Each conversation is written in seq order by its own goroutine (the
// store refuses a seq below the last), and the many goroutines together fill the
// store's group-commit batches.
func seedHistory(ctx context.Context, dataDir string, convs, per int, logf func(string, ...any)) error {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return err
	}
	st, err := sqlite.Open(filepath.Join(dataDir, "chat.db"), sqlite.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now()
	hash, err := bcrypt.GenerateFromPassword([]byte(benchPassword), bcrypt.MinCost)
	if err != nil {
		return err
	}
	if err := st.CreateUser(ctx, server.User{ID: histA, DisplayName: histA, PasswordHash: hash, CreatedAt: now}, server.Claim{Now: now}); err != nil && !errors.Is(err, server.ErrExists) {
		return fmt.Errorf("seed user %s: %w", histA, err)
	}
	var done atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for i := range convs {
		wg.Go(func() {
			if err := seedConversation(ctx, st, i, per, now, &done, start, logf); err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	if n := done.Load(); n > 0 {
		logf("seeded %d messages in %.1fs", n, time.Since(start).Seconds())
	} else {
		logf("the store already holds %d conversations of %d messages", convs, per)
	}
	return ctx.Err()
}

func seedConversation(ctx context.Context, st *sqlite.Store, i, per int, now time.Time, done *atomic.Int64, start time.Time, logf func(string, ...any)) error {
	peer := histPeer(i)
	err := st.CreateUser(ctx, server.User{ID: peer, DisplayName: peer, CreatedAt: now}, server.Claim{Now: now})
	if err != nil && !errors.Is(err, server.ErrExists) {
		return fmt.Errorf("seed user %s: %w", peer, err)
	}
	conv := wire.DirectConversationID(histA, peer)
	c, err := st.GetConversation(ctx, conv)
	if errors.Is(err, server.ErrNotFound) {
		err = st.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
			{ConversationID: conv, UserID: histA, Role: wire.RoleMember, JoinedAt: now},
			{ConversationID: conv, UserID: peer, Role: wire.RoleMember, JoinedAt: now}})
	}
	if err != nil {
		return fmt.Errorf("seed conversation %s: %w", conv, err)
	}
	for seq := c.LastSeq + 1; seq <= int64(per) && ctx.Err() == nil; seq++ {
		from, to := histA, peer
		if seq%2 == 0 {
			from, to = to, from
		}
		msg := server.Message{ConversationID: conv, SeqNo: seq, MessageID: "seed-" + strconv.FormatInt(seq, 10), SenderID: from, ReceiverID: to,
			Content: fmt.Sprintf("seeded message %d: some text of a typical length for a chat line", seq), Timestamp: now.Add(time.Duration(seq) * time.Millisecond)}
		if err := st.AppendMessage(ctx, msg, []string{to}); err != nil {
			return fmt.Errorf("seed message %d of %s: %w", seq, conv, err)
		}
		if n := done.Add(1); n%500000 == 0 {
			logf("seeded %d messages (%.0f/s)", n, float64(n)/time.Since(start).Seconds())
		}
	}
	return nil
}

// HistoryResult is the history scenario's measurement.
type HistoryResult struct {
	Messages      int64       `json:"messages"`
	Conversations int         `json:"conversations"`
	Pages         int         `json:"pages"`
	Latency       Percentiles `json:"page_latency"`
	Seeded        string      `json:"seeded"`
}

// history fetches before_seq pages of 50 at random places of random conversations
// and checks each page.
func (b *bench) history(ctx context.Context) error {
	convs, per := b.histLayout()
	if per < 51 {
		return fmt.Errorf("--history-messages %d over %d conversations leaves %d each; history needs more than 50", b.historyM, convs, per)
	}
	run := func(t *target, seeded string) error {
		a := &api{base: t.url, hc: b.dial.api}
		var auth wire.AuthResponse
		if err := a.do(ctx, "POST", "/v1/login", "", wire.LoginRequest{UserID: histA, Password: benchPassword}, &auth); err != nil {
			return err
		}
		h := newHist()
		// The first pages warm the readers (each pooled connection reads the
		// B-trees' upper pages once): fetched and checked, not counted.
		for i := range b.historyWarmup + b.historyPages {
			conv := wire.DirectConversationID(histA, histPeer(rand.IntN(convs)))
			before := 51 + rand.Int64N(int64(per)-50) // pages entirely inside the conversation
			path := fmt.Sprintf("/v1/conversations/%s/messages?before_seq=%d&limit=50", url.PathEscape(conv), before)
			var page wire.HistoryResponse
			t0 := time.Now()
			if err := a.do(ctx, "GET", path, auth.Token, nil, &page); err != nil {
				return err
			}
			if i >= b.historyWarmup {
				h.record(i, time.Since(t0))
			}
			if len(page.Messages) != 50 {
				return fmt.Errorf("%s: page before %d has %d messages, want 50", conv, before, len(page.Messages))
			}
			for j, m := range page.Messages {
				if m.SeqNo != before-1-int64(j) {
					return fmt.Errorf("%s: page before %d: message %d has seq_no %d, want %d", conv, before, j, m.SeqNo, before-1-int64(j))
				}
			}
		}
		r := HistoryResult{Messages: int64(convs * per), Conversations: convs, Pages: b.historyPages, Latency: h.percentiles(), Seeded: seeded}
		b.report.Scenarios["history"] = r
		name := fmt.Sprintf("history (%d msgs)", r.Messages)
		b.row(name, "page of 50 p50", r.Latency.P50, "ms")
		b.target(name, "page of 50 p99", r.Latency.P99, "ms", "< 2 (at 10M)", r.Latency.P99 < 2)
		b.row(name, "page of 50 p99.9", r.Latency.P999, "ms")
		return nil
	}
	if b.serverURL != "" {
		// A server we did not start: seed through the API (slower; keep M small).
		t := &target{url: b.serverURL}
		if err := b.seedOverAPI(ctx, t, convs, per); err != nil {
			return err
		}
		return run(t, "api")
	}
	dir := b.historyDir
	if dir == "" {
		d, cleanup, err := tempDir(b.tmp, "history")
		if err != nil {
			return err
		}
		defer cleanup()
		dir = d
	}
	if err := seedHistory(ctx, dir, convs, per, b.logf); err != nil {
		return err
	}
	t, err := b.startTarget(ctx, dir)
	if err != nil {
		return err
	}
	err = run(t, "sqlite")
	if serr := t.stop(); serr != nil && err == nil {
		err = serr
	}
	return err
}

// seedOverAPI sends the messages over HTTP, each conversation in order.
func (b *bench) seedOverAPI(ctx context.Context, t *target, convs, per int) error {
	a := &api{base: t.url, hc: b.dial.api}
	users := []string{histA}
	for i := range convs {
		users = append(users, histPeer(i))
	}
	tokens, err := a.register(ctx, users)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	var firstErr atomic.Value
	sem := make(chan struct{}, 32)
	for i := range convs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			conv, err := a.createConversation(ctx, tokens[0], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{histPeer(i)}})
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			for n := 1; n <= per && ctx.Err() == nil; n++ {
				from := tokens[0]
				if n%2 == 0 {
					from = tokens[i+1]
				}
				// The same message ids on a rerun are answered as resends: nothing new is stored.
				req := wire.SendRequest{MessageID: "seed-" + strconv.Itoa(n), Content: fmt.Sprintf("seeded message %d", n)}
				if err := a.do(ctx, "POST", "/v1/conversations/"+url.PathEscape(conv)+"/messages", from, req, nil); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	return nil
}
