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

// The history scenario's two users and their conversation.
const (
	histA = "histbench-a"
	histB = "histbench-b"
)

// seedHistory fills dataDir's SQLite file, through the server's own store package,
// with m messages in one direct conversation (keeping any already there).
func seedHistory(ctx context.Context, dataDir string, m int, logf func(string, ...any)) error {
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
	for _, u := range []string{histA, histB} {
		err := st.CreateUser(ctx, server.User{ID: u, DisplayName: u, PasswordHash: hash, CreatedAt: now}, server.Claim{Now: now})
		if err != nil && !errors.Is(err, server.ErrExists) {
			return fmt.Errorf("seed user %s: %w", u, err)
		}
	}
	conv := wire.DirectConversationID(histA, histB)
	c, err := st.GetConversation(ctx, conv)
	if errors.Is(err, server.ErrNotFound) {
		err = st.CreateConversation(ctx, server.Conversation{ID: conv, Type: wire.Direct, CreatedAt: now}, []server.Participant{
			{ConversationID: conv, UserID: histA, Role: wire.RoleMember, JoinedAt: now},
			{ConversationID: conv, UserID: histB, Role: wire.RoleMember, JoinedAt: now}})
	}
	if err != nil {
		return fmt.Errorf("seed conversation: %w", err)
	}
	if c.LastSeq >= int64(m) {
		logf("store already holds %d messages", c.LastSeq)
		return nil
	}
	// Many writers at once let the store's group commit fill its batches.
	seqs := make(chan int64, 1024)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	var done atomic.Int64
	start := time.Now()
	for range 512 {
		wg.Go(func() {
			for seq := range seqs {
				from, to := histA, histB
				if seq%2 == 0 {
					from, to = to, from
				}
				msg := server.Message{ConversationID: conv, SeqNo: seq, MessageID: "seed-" + strconv.FormatInt(seq, 10), SenderID: from, ReceiverID: to,
					Content: fmt.Sprintf("seeded message %d: some text of a typical length for a chat line", seq), Timestamp: now.Add(time.Duration(seq) * time.Millisecond)}
				if err := st.AppendMessage(ctx, msg, []string{to}); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("seed message %d: %w", seq, err))
				}
				if n := done.Add(1); n%500000 == 0 {
					logf("seeded %d messages (%.0f/s)", n, float64(n)/time.Since(start).Seconds())
				}
			}
		})
	}
	for seq := c.LastSeq + 1; seq <= int64(m) && ctx.Err() == nil; seq++ {
		seqs <- seq
	}
	close(seqs)
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	logf("seeded %d messages in %.1fs", done.Load(), time.Since(start).Seconds())
	return ctx.Err()
}

// HistoryResult is the history scenario's measurement.
type HistoryResult struct {
	Messages int64       `json:"messages"`
	Pages    int         `json:"pages"`
	Latency  Percentiles `json:"page_latency"`
	Seeded   string      `json:"seeded"`
}

// history fetches random before_seq pages of 50 and checks each page.
func (b *bench) history(ctx context.Context) error {
	run := func(t *target, seeded string) error {
		a := &api{base: t.url, hc: b.dial.api}
		var auth wire.AuthResponse
		if err := a.do(ctx, "POST", "/v1/login", "", wire.LoginRequest{UserID: histA, Password: benchPassword}, &auth); err != nil {
			return err
		}
		conv := wire.DirectConversationID(histA, histB)
		var st wire.StatusResponse
		if err := a.do(ctx, "GET", "/v1/conversations/"+url.PathEscape(conv)+"/status", auth.Token, nil, &st); err != nil {
			return err
		}
		if st.LastSeq < 51 {
			return fmt.Errorf("the conversation holds %d messages; history needs more than 50", st.LastSeq)
		}
		h := newHist()
		for i := range b.historyPages {
			before := 51 + rand.Int64N(st.LastSeq-50+1) // pages entirely inside the store
			path := fmt.Sprintf("/v1/conversations/%s/messages?before_seq=%d&limit=50", url.PathEscape(conv), before)
			var page wire.HistoryResponse
			t0 := time.Now()
			if err := a.do(ctx, "GET", path, auth.Token, nil, &page); err != nil {
				return err
			}
			h.record(i, time.Since(t0))
			if len(page.Messages) != 50 {
				return fmt.Errorf("page before %d has %d messages, want 50", before, len(page.Messages))
			}
			for j, m := range page.Messages {
				if m.SeqNo != before-1-int64(j) {
					return fmt.Errorf("page before %d: message %d has seq_no %d, want %d", before, j, m.SeqNo, before-1-int64(j))
				}
			}
		}
		r := HistoryResult{Messages: st.LastSeq, Pages: b.historyPages, Latency: h.percentiles(), Seeded: seeded}
		b.report.Scenarios["history"] = r
		name := fmt.Sprintf("history (%d msgs)", st.LastSeq)
		b.row(name, "page of 50 p50", r.Latency.P50, "ms")
		b.target(name, "page of 50 p99", r.Latency.P99, "ms", "< 2 (at 10M)", r.Latency.P99 < 2)
		b.row(name, "page of 50 p99.9", r.Latency.P999, "ms")
		return nil
	}
	if b.serverURL != "" {
		// A server we did not start: seed through the API (slower; keep M small).
		t := &target{url: b.serverURL}
		if err := b.seedOverAPI(ctx, t); err != nil {
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
	if err := seedHistory(ctx, dir, b.historyM, b.logf); err != nil {
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

func (b *bench) seedOverAPI(ctx context.Context, t *target) error {
	a := &api{base: t.url, hc: b.dial.api}
	tokens, err := a.register(ctx, []string{histA, histB})
	if err != nil {
		return err
	}
	conv, err := a.createConversation(ctx, tokens[0], wire.CreateConversationRequest{Type: wire.Direct, Members: []string{histB}})
	if err != nil {
		return err
	}
	var st wire.StatusResponse
	if err := a.do(ctx, "GET", "/v1/conversations/"+url.PathEscape(conv)+"/status", tokens[0], nil, &st); err != nil {
		return err
	}
	next := atomic.Int64{}
	next.Store(st.LastSeq)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range 32 {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.historyM) && ctx.Err() == nil; n = next.Add(1) {
				req := wire.SendRequest{MessageID: "seed-" + strconv.FormatInt(n, 10), Content: fmt.Sprintf("seeded message %d", n)}
				if err := a.do(ctx, "POST", "/v1/conversations/"+url.PathEscape(conv)+"/messages", tokens[n%2], req, nil); err != nil {
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
