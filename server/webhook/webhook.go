// Package webhook is the server.Pusher that notifies offline users through an
// HTTP webhook in the style of ntfy: one POST per notification to a URL made from
// a template, the preview as the body and a title header. Pushes are queued and
// sent by background workers, so a slow webhook never holds up a send; when the
// queue is full, pushes are dropped and counted (the message itself is safe in
// pending_deliveries either way).
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chatterm/chat/server"
)

var _ server.Pusher = (*Pusher)(nil)

// ErrQueueFull is returned by Push when the queue is full.
var ErrQueueFull = errors.New("webhook: push queue is full")

// Config configures a Pusher.
type Config struct {
	// URL is the template of the target: "{user}" is replaced by the recipient's
	// user id, e.g. "https://ntfy.example.com/chat-{user}".
	URL     string
	Token   string // sent as "Authorization: Bearer <token>" when set
	Workers int    // default 4
	Queue   int    // default 1024
	Timeout time.Duration
	Client  *http.Client
	Logger  *slog.Logger
}

// Pusher posts notifications to the webhook.
type Pusher struct {
	cfg   Config
	queue chan server.Notification
	wg    sync.WaitGroup
	once  sync.Once
}

// New validates the config and starts the workers; Close stops them.
func New(cfg Config) (*Pusher, error) {
	u, err := url.Parse(strings.ReplaceAll(cfg.URL, "{user}", "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: URL %q must be an http(s) URL", cfg.URL)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 1024
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pusher{cfg: cfg, queue: make(chan server.Notification, cfg.Queue)}
	for range cfg.Workers {
		p.wg.Add(1)
		go p.work()
	}
	return p, nil
}

// Push queues a notification without waiting.
func (p *Pusher) Push(_ context.Context, n server.Notification) error {
	select {
	case p.queue <- n:
		return nil
	default:
		return ErrQueueFull
	}
}

// Close sends what is queued and stops the workers.
func (p *Pusher) Close() error {
	p.once.Do(func() { close(p.queue) })
	p.wg.Wait()
	return nil
}

func (p *Pusher) work() {
	defer p.wg.Done()
	for n := range p.queue {
		if err := p.post(n); err != nil {
			p.cfg.Logger.Warn("push notification failed", "user", n.UserID, "err", err)
		}
	}
}

func (p *Pusher) post(n server.Notification) error {
	target := strings.ReplaceAll(p.cfg.URL, "{user}", url.PathEscape(n.UserID))
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewBufferString(n.Preview))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", "New message from "+n.SenderID)
	if n.Mention {
		// ntfy's headers: a mention is worth more than a message.
		req.Header.Set("Title", n.SenderID+" mentioned you")
		req.Header.Set("Priority", "high")
		req.Header.Set("X-Chat-Mention", "1")
	}
	req.Header.Set("X-Chat-User", n.UserID)
	req.Header.Set("X-Chat-Conversation", n.ConversationID)
	req.Header.Set("X-Chat-Seq", fmt.Sprint(n.SeqNo))
	req.Header.Set("X-Chat-Sender", n.SenderID)
	if p.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.Token)
	}
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("post to webhook: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}
