package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/heapwarm"
	"github.com/chatterm/chat/internal/widthwarm"
	"github.com/chatterm/chat/localstore"
	"github.com/chatterm/chat/tui"
	"github.com/chatterm/chat/wire"
)

// runTUI is `chat` with no command: the full-screen client. It opens the stored
// login's cache (or the first-run screen when there is none), runs the session
// in the background and the TUI in the foreground, and logs to <home>/tui.log,
// never to the screen.
func runTUI(ctx context.Context, cfg client.Config) error {
	started := time.Now()
	trace := startTraceFrom(ctx)
	trace.mark("runTUI")
	releaseGC := holdGC()
	defer releaseGC()
	// go-runewidth's width table, which the first frame needs, and the
	// heap's next pages: started by internal/widthwarm's and
	// internal/heapwarm's initialisers when chat runs alone; with flags, here.
	widthwarm.Start()
	heapwarm.Start()
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("the full-screen UI needs a terminal, and standard output is not one; " +
			"for scripts use the commands (chat --help)")
	}
	logger, closeLog, err := openTUILog(cfg)
	if err != nil {
		return err
	}
	defer closeLog()
	cfg.Logger = logger

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	be := newTUIBackend(ctx, cfg, logger)
	defer be.Close()
	// The cache opens beside Bubble Tea's set-up (tuiopen.go).
	if err := be.openAsync(ctx); err != nil && !errors.Is(err, client.ErrNotLoggedIn) && !errors.Is(err, client.ErrNoServer) {
		return err
	}
	trace.mark("session opening")

	// CHAT_NOTIFY: how a message that arrives unseen is told (docs/tui.md).
	notify := os.Getenv("CHAT_NOTIFY")
	if !tui.ValidNotify(notify) {
		return usagef("CHAT_NOTIFY=%s: want bell (the default), off, osc9, osc777 or notify-send", notify)
	}
	highlight, err := highlightWords(cfg, os.Getenv("CHAT_HIGHLIGHT_WORDS"))
	if err != nil {
		return err
	}
	environ := os.Environ()
	settle := func() { releaseGC(); oneProcessor(environ) }
	profile := startColorProfile(os.Stdout, environ)
	pacer := tui.NewFramePacer(tuiFPS)
	pacer.OnSleep(func() {
		if releaseIdleMemory() {
			logger.Debug("idle: returned the heap's free memory to the system")
		}
	})
	m := tui.New(tui.Options{Backend: be, Logger: logger, Context: ctx, Dark: true, Started: started, Notify: notify,
		HighlightWords: highlight, AfterInbox: afterInbox(be, pacer, settle, os.Stdout, environ, profile), Pacer: pacer})
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(tuiFPS),
		tea.WithEnvironment(startEnviron(environ)), tea.WithColorProfile(profile)}
	var model tea.Model = tui.NewLive(m)
	if trace != nil {
		model = tracedModel{Model: model, t: trace}
		opts = append(opts, tea.WithOutput(tracedOutput{File: os.Stdout, t: trace}))
	}
	p := tea.NewProgram(model, opts...)
	if err := pacer.Attach(p); err != nil {
		logger.Warn("idle frames not paced", "err", err)
	}
	go quitOnOpenFailure(be, p.Quit, trace.mark)
	trace.mark("program Run")
	_, err = p.Run()
	pacer.Stop() // its timers would start the stopped renderer's ticker again
	if err := be.waitOpen(); err != nil && ctx.Err() == nil {
		return err
	}
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) && !errors.Is(err, tea.ErrInterrupted) {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// tuiFPS is how often Bubble Tea's renderer looks for a new frame while the
// screen changes: a key's echo or a message's arrival waits at most 33 ms.
// Its ticker would run at that rate for as long as the program does, idle
// or not (about 1% of a core at 30); the pacer slows it once Views stop
// (tui/pacer.go, docs/tui.md "Performance").
const tuiFPS = 30

// openTUILog opens <home>/tui.log for appending.
func openTUILog(cfg client.Config) (*slog.Logger, func(), error) {
	home, err := cfg.HomeDir()
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", home, err)
	}
	path := filepath.Join(home, "tui.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open the TUI log: %w", err)
	}
	level := slog.LevelInfo
	if os.Getenv("CHAT_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})), func() { f.Close() }, nil
}

// tuiBackend makes a *client.Session satisfy tui.Backend. It owns the session:
// it opens one at start (or after the first-run login) and runs it. Every
// session it opens reports to the same events channel (client.Config.Events),
// which the TUI reads directly.
type tuiBackend struct {
	ctx    context.Context // the TUI's lifetime
	log    *slog.Logger
	events chan client.Event

	mu      sync.Mutex
	cfg     client.Config
	sess    *client.Session
	pending *pendingOpen // the open openAsync started, nil after open
	// openSession is client.Open; tests hold it up.
	openSession func(context.Context, client.Config) (*client.Session, error)
	stop        context.CancelFunc // nil until connect runs the session
	stopped     chan struct{}      // closed when the session's Run has returned
}

var _ tui.Backend = (*tuiBackend)(nil)

func newTUIBackend(ctx context.Context, cfg client.Config, log *slog.Logger) *tuiBackend {
	events := make(chan client.Event, 256)
	cfg.Events = events
	cfg.MessageBatches = true // a commit's messages in one event (tui/messagebatch.go)
	cfg.StreamPauses = true   // a stream's last message drawn at once (tui/pacer_quiet.go)
	return &tuiBackend{ctx: ctx, cfg: cfg, log: log, events: events, openSession: client.Open}
}

// open opens the stored login's session without connecting it: at start the
// inbox is painted from the cache first, then connect runs the session
// (afterInbox). ErrNotLoggedIn or ErrNoServer mean the first-run screen.
func (b *tuiBackend) open(ctx context.Context) error {
	cfg := b.config()
	s, err := b.openSession(ctx, cfg)
	if err != nil {
		return err
	}
	b.attach(s)
	return nil
}

// attach makes s the session, stopping any previous one; connect runs it.
func (b *tuiBackend) attach(s *client.Session) {
	b.detach()
	// What the previous account's session left unread is not this account's.
	for drained := false; !drained; {
		select {
		case <-b.events:
		default:
			drained = true
		}
	}
	b.mu.Lock()
	b.sess = s
	b.mu.Unlock()
	// The state before Run's first change, so the status line starts right.
	select {
	case b.events <- client.StateEvent{State: s.State()}:
	case <-b.ctx.Done():
	}
}

// connect runs the session (its connection, sync and reconnects) if it is not
// running yet.
func (b *tuiBackend) connect() {
	_ = b.waitOpen() // a failed open leaves no session to run
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess == nil || b.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	s := b.sess
	b.stop, b.stopped = cancel, done
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			// The token was refused: the StateEvent with LoggedOut tells the TUI.
			b.log.Warn("session stopped", "err", err)
		}
	}()
}

// detach stops the current session, waits for it, and closes its cache.
func (b *tuiBackend) detach() {
	b.mu.Lock()
	s, stop, stopped := b.sess, b.stop, b.stopped
	b.sess, b.stop, b.stopped = nil, nil, nil
	b.mu.Unlock()
	if s == nil {
		return
	}
	if stop != nil {
		stop()
		<-stopped
	}
	if err := s.Close(); err != nil {
		b.log.Warn("close cache", "err", err)
	}
}

// Close stops the session; the TUI has ended.
func (b *tuiBackend) Close() {
	b.mu.Lock()
	p := b.pending
	b.mu.Unlock()
	if p != nil {
		<-p.done // a session still opening is closed too
	}
	b.detach()
}

var errNoSession = errors.New("not logged in")

func (b *tuiBackend) session() (*client.Session, error) {
	if err := b.waitOpen(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess == nil {
		return nil, errNoSession
	}
	return b.sess, nil
}

func (b *tuiBackend) Session() (user, server string) {
	if user, server, ok := b.pendingSession(); ok {
		return user, server
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess != nil {
		return b.sess.UserID(), b.sess.API().Server()
	}
	server, err := b.cfg.ResolveServer()
	if err != nil {
		server = b.cfg.Server
	}
	return "", server
}

func (b *tuiBackend) Login(ctx context.Context, server, user, password string) error {
	return b.authenticate(ctx, server, func(cfg client.Config) (client.Account, error) {
		return client.Login(ctx, cfg, server, user, password)
	})
}

func (b *tuiBackend) Register(ctx context.Context, server, user, password, invite string) error {
	return b.authenticate(ctx, server, func(cfg client.Config) (client.Account, error) {
		return client.Register(ctx, cfg, server, wire.RegisterRequest{UserID: user, Password: password, InviteCode: invite})
	})
}

// authenticate logs in (which stores the login in the home, shared with the
// CLI) and opens that account's session.
func (b *tuiBackend) authenticate(ctx context.Context, server string, call func(client.Config) (client.Account, error)) error {
	cfg := b.config()
	cfg.Server = server
	cfg.Token = "" // a CHAT_TOKEN that brought us here was refused
	acct, err := call(cfg)
	if err != nil {
		return err
	}
	cfg.Server = acct.Server
	b.mu.Lock()
	b.cfg = cfg
	b.mu.Unlock()
	s, err := client.Open(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open the cache for %s: %w", acct.UserID, err)
	}
	b.attach(s)
	b.connect() // the login screen was painted long ago
	return nil
}

func (b *tuiBackend) Inbox(ctx context.Context) ([]wire.InboxEntry, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return s.Inbox(ctx, 0)
}

func (b *tuiBackend) History(ctx context.Context, id string, before int64, limit int) (tui.Page, error) {
	s, err := b.session()
	if err != nil {
		return tui.Page{}, err
	}
	p, err := s.History(ctx, id, before, limit)
	if err != nil {
		return tui.Page{}, err
	}
	return tui.Page{Messages: p.Messages, More: p.More, Pending: p.Pending, Refused: p.Refused, Stale: p.Stale}, nil
}

// Statuses asks the server for fresh boundaries when it can, and falls back to
// the cache offline: ticks then show what was last known.
func (b *tuiBackend) Statuses(ctx context.Context, id string) ([]wire.MemberStatus, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	st, err := s.RefreshStatus(ctx, id)
	if err == nil {
		return st, nil
	}
	b.log.Info("refresh status; using the cache", "conversation", id, "err", err)
	return s.Store().Statuses(ctx, id)
}

// Conversation asks the server, and offline makes do with the cache: the
// members whose boundaries it knows.
func (b *tuiBackend) Conversation(ctx context.Context, id string) (wire.Conversation, error) {
	s, err := b.session()
	if err != nil {
		return wire.Conversation{}, err
	}
	c, err := s.Conversation(ctx, id)
	if err == nil || !(client.IsNetError(err) || wire.ErrorCode(err).Retryable()) {
		return c, err
	}
	e, cerr := s.Store().InboxEntry(ctx, id)
	if cerr != nil {
		return c, err
	}
	sts, cerr := s.Store().Statuses(ctx, id)
	if cerr != nil {
		return c, err
	}
	c = wire.Conversation{ConversationID: id, Type: e.Type, Name: e.Name, LastSeq: e.LastSeq}
	for _, st := range sts {
		c.Participants = append(c.Participants, wire.Participant{UserID: st.UserID})
	}
	return c, nil
}

func (b *tuiBackend) Send(ctx context.Context, m wire.Message) (wire.Message, error) {
	s, err := b.session()
	if err != nil {
		return wire.Message{}, err
	}
	return s.EnqueueMessage(ctx, m)
}

func (b *tuiBackend) Attach(ctx context.Context, id, path, text string) (wire.Message, error) {
	s, err := b.session()
	if err != nil {
		return wire.Message{}, err
	}
	f, err := os.Open(expandHome(path))
	if err != nil {
		return wire.Message{}, err
	}
	defer f.Close()
	media, info, err := s.API().UploadFile(ctx, f)
	if err != nil {
		return wire.Message{}, err
	}
	return s.EnqueueMessage(ctx, wire.Message{ConversationID: id, Content: text, Attachment: media, AttachmentInfo: &info})
}

func (b *tuiBackend) MediaURL(ctx context.Context, mediaID string) (string, error) {
	s, err := b.session()
	if err != nil {
		return "", err
	}
	return s.API().MediaURL(ctx, mediaID)
}

func (b *tuiBackend) SaveMedia(ctx context.Context, mediaID, name string) (string, error) {
	s, err := b.session()
	if err != nil {
		return "", err
	}
	return s.API().SaveMedia(ctx, mediaID, downloadDir(), name)
}

// downloadDir is where saved attachments go: $XDG_DOWNLOAD_DIR, else
// ~/Downloads when it exists, else the current directory.
func downloadDir() string {
	if d := os.Getenv("XDG_DOWNLOAD_DIR"); d != "" {
		return expandHome(d)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if fi, err := os.Stat(filepath.Join(home, "Downloads")); err == nil && fi.IsDir() {
			return filepath.Join(home, "Downloads")
		}
	}
	return "."
}

// expandHome turns a leading ~/ into the home directory, as a shell would
// for a path typed in the composer.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

func (b *tuiBackend) IndexForSearch(ctx context.Context, n int) (int, error) {
	s, err := b.session()
	if err != nil {
		return 0, err
	}
	return s.Store().IndexQueued(ctx, n)
}

// snippetMarks turns the cache's marks of matched words into the TUI's.
var snippetMarks = strings.NewReplacer(localstore.SnippetStart, tui.SnippetStart, localstore.SnippetEnd, tui.SnippetEnd)

func (b *tuiBackend) Search(ctx context.Context, query, conv string, after *wire.Message, limit int) ([]tui.SearchHit, bool, error) {
	s, err := b.session()
	if err != nil {
		return nil, false, err
	}
	q := localstore.SearchQuery{Words: query, ConversationID: conv, Limit: limit}
	if after != nil {
		q.Before = localstore.SearchCursor{SeqNo: after.SeqNo}
		if conv == "" {
			q.Before.Timestamp, q.Before.ConversationID = after.Timestamp, after.ConversationID
		}
	}
	hits, next, err := s.Store().SearchPage(ctx, q)
	if err != nil {
		return nil, false, err
	}
	out := make([]tui.SearchHit, len(hits))
	for i, h := range hits {
		out[i] = tui.SearchHit{Message: h.Message, Snippet: snippetMarks.Replace(h.Snippet)}
	}
	return out, !next.IsZero(), nil
}

func (b *tuiBackend) MarkRead(ctx context.Context, id string, seq int64) error {
	s, err := b.session()
	if err != nil {
		return err
	}
	return s.MarkRead(ctx, id, seq)
}

func (b *tuiBackend) CreateDirect(ctx context.Context, peer string) (wire.Conversation, error) {
	s, err := b.session()
	if err != nil {
		return wire.Conversation{}, err
	}
	return s.CreateDirect(ctx, peer)
}

func (b *tuiBackend) CreateGroup(ctx context.Context, name string, members []string) (wire.Conversation, error) {
	s, err := b.session()
	if err != nil {
		return wire.Conversation{}, err
	}
	return s.CreateGroup(ctx, name, members)
}

// AddMembers adds users to a group and records the new membership in the
// cache, so group ticks wait for the newcomers too.
func (b *tuiBackend) AddMembers(ctx context.Context, id string, members []string) (wire.Conversation, error) {
	s, err := b.session()
	if err != nil {
		return wire.Conversation{}, err
	}
	c, err := s.API().AddMembers(ctx, id, members)
	if err != nil {
		return c, err
	}
	return c, s.Store().PutConversation(ctx, c)
}

// RetryNow cuts the session's reconnect wait short.
func (b *tuiBackend) Typing(conversationID string) {
	if s, err := b.session(); err == nil {
		s.Typing(conversationID)
	}
}

func (b *tuiBackend) Presence(ctx context.Context, conversationID string) (wire.PresenceResponse, error) {
	s, err := b.session()
	if err != nil {
		return wire.PresenceResponse{}, err
	}
	return s.API().Presence(ctx, conversationID)
}

func (b *tuiBackend) Profile(ctx context.Context, userID string) (wire.Profile, error) {
	s, err := b.session()
	if err != nil {
		return wire.Profile{}, err
	}
	return s.API().User(ctx, userID)
}

func (b *tuiBackend) RetryNow() {
	if s, err := b.session(); err == nil {
		s.RetryNow()
	}
}

func (b *tuiBackend) Events() <-chan client.Event { return b.events }
