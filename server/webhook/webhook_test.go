package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/server/webhook"
)

func TestPushPostsNtfyStyle(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	p, err := webhook.New(webhook.Config{URL: srv.URL + "/chat-{user}", Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Push(context.Background(), server.Notification{UserID: "bob", ConversationID: "g:x", SeqNo: 7, SenderID: "alice", Preview: "hi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.URL.Path != "/chat-bob" || r.Header.Get("Title") != "New message from alice" || r.Header.Get("Authorization") != "Bearer s3cret" ||
			r.Header.Get("X-Chat-Seq") != "7" || r.Header.Get("X-Chat-Conversation") != "g:x" {
			t.Fatalf("request %s %v", r.URL.Path, r.Header)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no push arrived")
	}
}

func TestPushQueueFullDropsInsteadOfBlocking(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	p, err := webhook.New(webhook.Config{URL: srv.URL + "/{user}", Workers: 1, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := server.Notification{UserID: "bob", Preview: "x"}
	var full bool
	start := time.Now()
	for range 10 {
		if err := p.Push(context.Background(), n); errors.Is(err, webhook.ErrQueueFull) {
			full = true
			break
		}
	}
	if !full || time.Since(start) > time.Second {
		t.Fatalf("a stuck webhook did not make Push refuse at once (full=%v after %v)", full, time.Since(start))
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/{user}", "not a url", "http:///path"} {
		if _, err := webhook.New(webhook.Config{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}

// A mention is pushed as one: its own title and a high priority (ntfy).
func TestPushMarksAMention(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	p, err := webhook.New(webhook.Config{URL: srv.URL + "/{user}"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Push(context.Background(), server.Notification{UserID: "bob", ConversationID: "g:x", SeqNo: 8, SenderID: "alice", Preview: "@bob look", Mention: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.Header.Get("Title") != "alice mentioned you" || r.Header.Get("Priority") != "high" || r.Header.Get("X-Chat-Mention") != "1" {
			t.Fatalf("headers %v", r.Header)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no push arrived")
	}
}
