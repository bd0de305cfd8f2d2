package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/tui"
	"github.com/chatterm/chat/wire"
)

// tuiRun is a small Bubble Tea runtime for tests: commands run in goroutines and
// one goroutine applies their messages to the model one at a time, as
// tea.Program does; the test reads the screen from View instead of a terminal.
type tuiRun struct {
	t    testing.TB
	mu   sync.Mutex
	m    tea.Model
	msgs chan tea.Msg
	done chan struct{}
	poll time.Duration // how often until looks at the screen
}

func startTUI(t testing.TB, be tui.Backend, w, h int) *tuiRun {
	t.Helper()
	return startTUIWith(t, be, w, h, nil)
}

// startTUIWith is startTUI with the options changed by opt first.
func startTUIWith(t testing.TB, be tui.Backend, w, h int, opt func(*tui.Options)) *tuiRun {
	t.Helper()
	r := &tuiRun{t: t, msgs: make(chan tea.Msg, 1024), done: make(chan struct{}), poll: 5 * time.Millisecond}
	o := tui.Options{Backend: be, Dark: true, Logger: slog.New(slog.DiscardHandler)}
	if b, ok := be.(*tuiBackend); ok {
		// As runTUI does, less the frame's wait and the colour probe.
		o.AfterInbox = func() tea.Msg { b.connect(); return nil }
	}
	if opt != nil {
		opt(&o)
	}
	r.m = tui.New(o)
	r.exec(r.m.Init())
	r.send(tea.WindowSizeMsg{Width: w, Height: h})
	go func() {
		for {
			select {
			case msg := <-r.msgs:
				r.send(msg)
			case <-r.done:
				return
			}
		}
	}()
	t.Cleanup(func() { close(r.done) })
	return r
}

func (r *tuiRun) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				r.exec(c)
			}
			return
		}
		if seq, ok := sequenceOf(msg); ok {
			for _, c := range seq {
				if c == nil {
					continue
				}
				if m := c(); m != nil {
					select {
					case r.msgs <- m:
					case <-r.done:
					}
				}
			}
			return
		}
		if msg != nil {
			select {
			case r.msgs <- msg:
			case <-r.done:
			}
		}
	}()
}

// sequenceOf unpacks tea.Sequence's message (its type is unexported: a
// slice of commands, run one after another).
func sequenceOf(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeFor[tea.Cmd]() {
		return nil, false
	}
	cmds := make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds, true
}

func (r *tuiRun) send(msg tea.Msg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cmd tea.Cmd
	r.m, cmd = r.m.Update(msg)
	r.exec(cmd)
}

func (r *tuiRun) view() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m.View().Content
}

func (r *tuiRun) screen() string { return ansi.Strip(r.view()) }

// until polls the styled screen until cond holds.
func (r *tuiRun) until(what string, cond func(styled string) bool) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(r.view()) {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; screen:\n%s", what, r.screen())
		}
		time.Sleep(r.poll)
	}
}

func (r *tuiRun) waitFor(text string) {
	r.t.Helper()
	r.until(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(ansi.Strip(s), text) })
}

func (r *tuiRun) keys(ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			r.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "esc":
			r.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		default:
			for _, c := range k {
				r.send(tea.KeyPressMsg{Code: c, Text: string(c)})
			}
		}
	}
}

// write sends text from the open chat's composer, each step once the screen
// shows that the one before took effect: the composer has focus (the status
// line lists the writing keys), then it holds the text; only then enter.
// Keys sent before the screen is in the state they assume go elsewhere.
func (r *tuiRun) write(text string) {
	r.t.Helper()
	r.waitFor("enter send")
	r.keys(text)
	r.waitFor("› " + text)
	r.keys("enter")
}

// tickOf returns the tick drawn after the line holding text: "", "◷", "✓",
// "✓✓" or "read" (the double tick in the read style).
func tickOf(styled, text string) string {
	read := tui.NewStyles(true).TickRead.Render("✓✓")
	for _, l := range strings.Split(styled, "\n") {
		plain := strings.TrimRight(ansi.Strip(l), " ")
		if !strings.Contains(plain, text) {
			continue
		}
		switch {
		case strings.Contains(l, read):
			return "read"
		case strings.HasSuffix(plain, "✓✓"):
			return "✓✓"
		case strings.HasSuffix(plain, "✓"):
			return "✓"
		case strings.HasSuffix(plain, "◷"):
			return "◷"
		}
		return ""
	}
	return ""
}

// account registers a user on srv with its own home and returns its backend.
func account(t *testing.T, srv *servertest.Server, name string) (*tuiBackend, client.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := client.Config{Home: t.TempDir(), Server: srv.URL}
	if _, err := client.Register(ctx, cfg, "", wire.RegisterRequest{UserID: name, Password: "password-" + name}); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	be := newTUIBackend(ctx, cfg, slog.New(slog.DiscardHandler))
	if err := be.open(ctx); err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { cancel(); be.Close() })
	return be, cfg
}

// Two TUIs on the real client and an in-process server: a message shows on
// both sides, and the sender's tick goes to read when the peer opens the chat.
func TestTUIAgainstServer(t *testing.T) {
	srv := servertest.Start(t)
	aliceBE, _ := account(t, srv, "alice")
	bobBE, _ := account(t, srv, "bob")
	alice := startTUI(t, aliceBE, 80, 24)
	bob := startTUI(t, bobBE, 80, 24)
	alice.waitFor("● connected · alice")
	bob.waitFor("● connected · bob")

	alice.keys("n", "bob", "enter")
	alice.waitFor("bob  direct")
	alice.write("hello bob")
	alice.until("alice's message to be delivered", func(s string) bool { return tickOf(s, "hello bob") == "✓✓" })

	bob.waitFor("hello bob")
	bob.waitFor("1 unread")
	bob.keys("enter")
	bob.waitFor("alice  direct")
	alice.until("alice's tick to turn read", func(s string) bool { return tickOf(s, "hello bob") == "read" })

	bob.write("hi alice")
	alice.waitFor("hi alice")
	bob.until("bob's tick to turn read", func(s string) bool { return tickOf(s, "hi alice") == "read" })
}

// Typed while the server is down: pending with a clock, counted as unsent in
// the status line; sent once, with its tick, when the server is back.
func TestTUIOfflineSendThenReconnect(t *testing.T) {
	srv := servertest.Start(t)
	bobBE, _ := account(t, srv, "bob")
	aliceBE, _ := account(t, srv, "alice")
	alice := startTUI(t, aliceBE, 80, 24)
	alice.waitFor("● connected · alice")
	alice.keys("n", "bob", "enter")
	alice.waitFor("bob  direct")

	srv.Close()
	alice.waitFor("reconnecting")
	alice.write("typed offline")
	alice.until("a pending message", func(s string) bool { return tickOf(s, "typed offline") == "◷" })
	alice.waitFor("with 1 unsent")

	srv.Restart(t)
	// The client's backoff after the attempts that failed while the server was
	// down may be longer than this wait (full jitter, up to 30 s): whenever the
	// status line offers it, reconnect now, as a user would (ctrl+r).
	alice.until("the message to be stored", func(s string) bool {
		if strings.Contains(ansi.Strip(s), "ctrl+r now") {
			alice.send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
		}
		t := tickOf(s, "typed offline")
		return t == "✓" || t == "✓✓"
	})
	alice.waitFor("● connected · alice")

	bob := startTUI(t, bobBE, 80, 24)
	bob.waitFor("typed offline")
	h, err := bobBE.History(context.Background(), wire.DirectConversationID("alice", "bob"), 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.Messages); n != 1 {
		t.Fatalf("bob has %d messages, want exactly 1: %+v", n, h.Messages)
	}
}

// With the server unreachable, the inbox still opens from the cache.
func TestTUIOpensFromCacheOffline(t *testing.T) {
	home := t.TempDir()
	seedCache(t, home, "http://127.0.0.1:9", "alice", 5, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := newTUIBackend(ctx, client.Config{Home: home}, slog.New(slog.DiscardHandler))
	if err := be.open(ctx); err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	r := startTUI(t, be, 80, 24)
	r.waitFor("peer4")
	r.waitFor("message 20 of peer4")
	r.until("the status line to show the outage", func(s string) bool {
		p := ansi.Strip(s)
		return strings.Contains(p, "reconnecting") || strings.Contains(p, "connecting")
	})
	r.keys("enter")
	r.waitFor("message 19 of peer4")
}

// seedCache writes a login for user at server into home, and a cache with
// convs direct conversations of perConv messages each: what a long-used
// client has on disk.
func seedCache(tb testing.TB, home, server, user string, convs, perConv int) {
	tb.Helper()
	seedCacheUnread(tb, home, server, user, convs, perConv, 0)
}

// seedCacheUnread is seedCache with the last unread messages of each
// conversation from the peer: unread, since the user's own messages mark
// what came before them read.
func seedCacheUnread(tb testing.TB, home, server, user string, convs, perConv, unread int) {
	tb.Helper()
	ctx := context.Background()
	cfg := client.Config{Home: home, Server: server}
	if err := cfg.SaveAccount(client.Account{Server: server, UserID: user, Token: "seeded-token"}); err != nil {
		tb.Fatal(err)
	}
	path, err := cfg.CachePath(server, user)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := localstore.Open(ctx, path, localstore.Options{UserID: user})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	base := time.Now().Add(-time.Duration(convs*perConv) * time.Second)
	batch := make([]wire.Message, 0, 1000)
	flush := func() {
		if _, err := st.PutMessages(ctx, batch...); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	for c := range convs {
		peer := fmt.Sprintf("peer%d", c)
		conv := wire.DirectConversationID(user, peer)
		for i := 1; i <= perConv; i++ {
			sender := peer
			if i%3 == 0 && i <= perConv-unread {
				sender = user
			}
			batch = append(batch, wire.Message{
				ConversationID: conv, SeqNo: int64(i), MessageID: fmt.Sprintf("%s-%d", peer, i), SenderID: sender,
				Content:   fmt.Sprintf("message %d of %s: some words to make it look like a chat line", i, peer),
				Timestamp: base.Add(time.Duration(c*perConv+i) * time.Second),
			})
			if len(batch) == cap(batch) {
				flush()
			}
		}
	}
	flush()
}

// BenchmarkTUIInboxFrom100kCache measures what `chat` does before the first
// paint: open the login and the cache (100,000 messages in 500 conversations),
// build the TUI and render the inbox read from the cache. The server is
// unreachable, as on a train: nothing waits for the network.
//
//	go test ./cmd/chat -run '^$' -bench TUIInboxFrom100k -benchtime 20x
func BenchmarkTUIInboxFrom100kCache(b *testing.B) {
	home := b.TempDir()
	start := time.Now()
	seedCache(b, home, "http://127.0.0.1:9", "alice", 500, 200)
	b.Logf("seeded 100,000 messages in %v", time.Since(start).Round(time.Millisecond))
	cfg := client.Config{Home: home}
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		be := newTUIBackend(ctx, cfg, slog.New(slog.DiscardHandler))
		if err := be.open(ctx); err != nil {
			b.Fatal(err)
		}
		r := startTUI(b, be, 80, 24)
		r.poll = 100 * time.Microsecond
		r.waitFor("peer499") // the most recent conversation, on top
		cancel()
		be.Close()
	}
}

// TestSeedMeasurementHome writes the 100,000-message home used to time the real
// binary (docs/tui.md); it runs only when CHAT_SEED_HOME names the directory.
// CHAT_SEED_SHAPE=CONVSxPER changes the shape (default 500x200), and
// CHAT_SEED_UNREAD=N leaves the last N messages of each unread.
func TestSeedMeasurementHome(t *testing.T) {
	home := os.Getenv("CHAT_SEED_HOME")
	if home == "" {
		t.Skip("set CHAT_SEED_HOME=DIR to write a home with a 100,000-message cache")
	}
	server := os.Getenv("CHAT_SEED_SERVER")
	if server == "" {
		server = "http://127.0.0.1:9"
	}
	convs, perConv := 500, 200
	if v := os.Getenv("CHAT_SEED_SHAPE"); v != "" { // CONVSxPER: 2x50000 for scripts/search-bench.sh
		if _, err := fmt.Sscanf(v, "%dx%d", &convs, &perConv); err != nil {
			t.Fatalf("CHAT_SEED_SHAPE=%q: want CONVSxPER, e.g. 2x50000", v)
		}
	}
	unread, _ := strconv.Atoi(os.Getenv("CHAT_SEED_UNREAD")) // the last N of each conversation unread
	seedCacheUnread(t, home, server, "alice", convs, perConv, unread)
}

// First run: no login and no server in the home. The TUI asks for both,
// registers, and the login is stored where the command-line chat finds it.
func TestTUIFirstRunRegisters(t *testing.T) {
	srv := servertest.Start(t)
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := newTUIBackend(ctx, client.Config{Home: home}, slog.New(slog.DiscardHandler))
	defer be.Close()
	if err := be.open(ctx); !errors.Is(err, client.ErrNoServer) {
		t.Fatalf("open with an empty home: %v, want ErrNoServer", err)
	}
	r := startTUI(t, be, 80, 24)
	r.waitFor("Log in")
	r.send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	r.waitFor("Register")
	// Enter after each field; the last is the invite, empty on this open server.
	r.keys(strings.TrimPrefix(srv.URL, "http://"), "enter", "carol", "enter", "carols-password", "enter", "enter")
	r.waitFor("No conversations yet")
	r.waitFor("● connected · carol")

	acct, err := client.Config{Home: home}.LoadAccount()
	if err != nil || acct.UserID != "carol" || acct.Server != srv.URL {
		t.Fatalf("stored login = %+v, %v", acct, err)
	}
}

// A new device has an empty cache: scrolling up fetches the older pages from
// the server (before_seq) until the first message.
func TestTUIPagesHistoryFromServer(t *testing.T) {
	srv := servertest.Start(t)
	ctx := context.Background()
	_, aliceCfg := account(t, srv, "alice")
	if _, err := client.Register(ctx, client.Config{Home: t.TempDir(), Server: srv.URL},
		"", wire.RegisterRequest{UserID: "bob", Password: "password-bob"}); err != nil {
		t.Fatal(err)
	}
	acct, err := aliceCfg.LoadAccount()
	if err != nil {
		t.Fatal(err)
	}
	api := client.NewAPI(acct.Server, acct.Token, nil)
	conv, err := api.Direct(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 130; i++ {
		req := wire.SendRequest{MessageID: fmt.Sprintf("m%03d", i), Content: fmt.Sprintf("message %03d", i)}
		if _, _, err := api.SendMessage(ctx, conv.ConversationID, req); err != nil {
			t.Fatal(err)
		}
	}

	// bob on a new machine: log in, nothing cached.
	home := t.TempDir()
	bcfg := client.Config{Home: home, Server: srv.URL}
	if _, err := client.Login(ctx, bcfg, "", "bob", "password-bob"); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	be := newTUIBackend(rctx, bcfg, slog.New(slog.DiscardHandler))
	if err := be.open(rctx); err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	r := startTUI(t, be, 80, 24)
	r.waitFor("message 130") // the inbox preview, once the session has refreshed it
	r.keys("enter")
	// The chat opens at the first message the inbox counted as unread (all
	// 130, or fewer while the session is still counting them), the pages
	// before the newest fetched from the server to get there.
	r.until("the chat", func(s string) bool {
		p := ansi.Strip(s)
		return strings.Contains(p, "alice  direct") && strings.Contains(p, "message ")
	})
	r.keys("esc", "G")
	r.until("the newest message", func(s string) bool { return strings.Contains(ansi.Strip(s), "message 130") })
	r.until("the first message, after paging up", func(s string) bool {
		if strings.Contains(ansi.Strip(s), "message 001") {
			return true
		}
		r.keys("g") // to the top of what is loaded: asks for the page before it
		return false
	})
	r.until("the start marker", func(s string) bool {
		if strings.Contains(ansi.Strip(s), "beginning of the conversation") {
			return true
		}
		r.keys("g")
		return false
	})
	if header := strings.Split(r.screen(), "\n")[0]; strings.Contains(header, " new ") {
		t.Fatalf("old messages counted as new: %q", header)
	}
}

// A group made in the TUI, a member added from the members box: the newcomer's
// TUI lists the group, and group ticks wait for every member.
func TestTUIGroupOnServer(t *testing.T) {
	srv := servertest.Start(t)
	aliceBE, _ := account(t, srv, "alice")
	bobBE, _ := account(t, srv, "bob")
	carolBE, _ := account(t, srv, "carol")
	alice := startTUI(t, aliceBE, 100, 30)
	carol := startTUI(t, carolBE, 100, 30)
	alice.waitFor("● connected · alice")
	carol.waitFor("● connected · carol")

	alice.keys("N", "crew")
	alice.send(tea.KeyPressMsg{Code: tea.KeyTab})
	alice.keys("bob", "enter")
	alice.waitFor("crew  group · 2 members")
	// Each key once the screen shows the one before took effect: the chat
	// header counts members behind the box, so it says nothing about the box.
	alice.keys("esc")
	alice.waitFor("i write · esc back · m members")
	alice.keys("m")
	alice.waitFor("2 members · a adds")
	alice.keys("a")
	alice.waitFor("enter adds · esc cancels")
	alice.keys("carol")
	alice.waitFor("add › carol")
	alice.keys("enter")
	alice.waitFor("3 members · a adds") // the box lists carol
	alice.keys("q")                     // any key closes the box
	alice.until("the box to close and the chat header to count carol", func(s string) bool {
		p := ansi.Strip(s)
		return !strings.Contains(p, "Members of crew") && strings.Contains(p, "crew  group · 3 members") &&
			strings.Contains(p, "i write · esc back · m members")
	})

	carol.waitFor("# crew")
	alice.keys("i")
	alice.write("all hands")
	alice.until("stored", func(s string) bool { t := tickOf(s, "all hands"); return t == "✓" || t == "✓✓" })
	bob := startTUI(t, bobBE, 100, 30)
	bob.waitFor("all hands")
	bob.keys("enter")
	bob.waitFor("crew  group · 3 members")
	if got := tickOf(alice.view(), "all hands"); got == "read" {
		t.Fatalf("read by bob alone, but carol has not read it: tick %q", got)
	}
	carol.waitFor("all hands")
	carol.keys("enter")
	alice.until("read by both", func(s string) bool { return tickOf(s, "all hands") == "read" })
}

// The TUI reads the sessions' own events (client.Event) from one channel that
// outlives them: after logging in as someone else, the new session's events
// arrive on the channel the TUI was already reading, and what the old account's
// session left unread is not shown to the new one.
func TestTUIBackendOneEventChannelAcrossLogins(t *testing.T) {
	srv := servertest.Start(t)
	ctx := context.Background()
	be, _ := account(t, srv, "alice")
	be.connect() // no TUI here to connect it after its inbox
	events := be.Events()
	next := func(what string, match func(client.Event) bool) client.Event {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if match(ev) {
					return ev
				}
			case <-deadline:
				t.Fatalf("no %s within 10s", what)
			}
		}
	}
	connected := func(ev client.Event) bool {
		st, ok := ev.(client.StateEvent)
		return ok && st.State.Status == client.Connected
	}
	next("connected state for alice", connected)

	carol := client.Config{Home: t.TempDir(), Server: srv.URL}
	if _, err := client.Register(ctx, carol, "", wire.RegisterRequest{UserID: "carol", Password: "password-carol"}); err != nil {
		t.Fatal(err)
	}
	sendAs := func(cfg client.Config, to, text string) {
		t.Helper()
		acct, err := cfg.LoadAccount()
		if err != nil {
			t.Fatal(err)
		}
		api := client.NewAPI(acct.Server, acct.Token, nil)
		conv, err := api.Direct(ctx, to)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.SendNow(ctx, conv.ConversationID, wire.SendRequest{MessageID: rand.Text(), Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	// Left unread for alice: the channel holds it when bob logs in.
	sendAs(carol, "alice", "for alice only")
	testenv.WaitFor(t, 10*time.Second, func() bool { return len(events) > 0 })

	if _, err := client.Register(ctx, client.Config{Home: t.TempDir(), Server: srv.URL}, "", wire.RegisterRequest{UserID: "bob", Password: "password-bob"}); err != nil {
		t.Fatal(err)
	}
	if err := be.Login(ctx, srv.URL, "bob", "password-bob"); err != nil {
		t.Fatal(err)
	}
	if be.Events() != events {
		t.Fatal("the events channel changed with the login")
	}
	sendAs(carol, "bob", "for bob")
	// The TUI's sessions report a commit's messages in one MessagesEvent.
	ev := next("carol's message to bob", func(ev client.Event) bool {
		if ms, ok := ev.(client.MessagesEvent); ok {
			for _, m := range ms.Messages {
				if m.Content == "for alice only" {
					t.Fatalf("bob's TUI got alice's message: %+v", m)
				}
			}
			return true
		}
		return false
	})
	if ms := ev.(client.MessagesEvent).Messages; len(ms) != 1 || ms[0].Content != "for bob" || ms[0].ConversationID != wire.DirectConversationID("bob", "carol") {
		t.Fatalf("bob got %+v", ms)
	}
}

// Mutes are kept beside the account's cache, so the next TUI of that account
// on this machine has them.
func TestTUIBackendKeepsMutes(t *testing.T) {
	srv := servertest.Start(t)
	ctx := context.Background()
	be, cfg := account(t, srv, "alice")
	conv := wire.DirectConversationID("alice", "bob")
	if err := be.SetMuted(ctx, conv, true); err != nil {
		t.Fatal(err)
	}
	if err := be.SetMuted(ctx, "g:other", true); err != nil {
		t.Fatal(err)
	}
	if err := be.SetMuted(ctx, "g:other", false); err != nil {
		t.Fatal(err)
	}
	be.Close()
	again := newTUIBackend(ctx, cfg, slog.New(slog.DiscardHandler))
	if err := again.open(ctx); err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, err := again.Muted(ctx)
	if err != nil || len(got) != 1 || !got[conv] {
		t.Fatalf("mutes after a restart = %v, %v; want only %s", got, err, conv)
	}
}
