package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// fault is what faultProxy does to one request.
type fault int

const (
	pass        fault = iota // forward it and its answer
	unavailable              // answer 503 unavailable without forwarding it
	lostAnswer               // forward it, then answer 503 maybe_stored instead of its answer
	dropAnswer               // forward it, then close the connection without an answer
)

// faultProxy stands between chat and the server and decides, request by
// request, whether the request and its answer get through.
type faultProxy struct {
	*httptest.Server
	mu     sync.Mutex
	decide func(r *http.Request) fault
	seen   map[string]int // "METHOD path" -> requests
}

func newFaultProxy(t *testing.T, srv *servertest.Server, decide func(r *http.Request) fault) *faultProxy {
	t.Helper()
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &faultProxy{decide: decide, seen: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen[r.Method+" "+r.URL.Path]++
		f := p.decide(r)
		p.mu.Unlock()
		switch f {
		case unavailable:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"the store is down"}}`))
			return
		case lostAnswer, dropAnswer:
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			if f == dropAnswer {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"maybe_stored","message":"the store timed out"}}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *faultProxy) count(method, path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[method+" "+path]
}

// firstN returns a decide function that does f to the first n requests
// matching method and a path containing part, and passes everything else.
func firstN(n int, method, part string, f fault) func(r *http.Request) fault {
	done := 0
	return func(r *http.Request) fault {
		if r.Method == method && strings.Contains(r.URL.Path, part) && done < n {
			done++
			return f
		}
		return pass
	}
}

// copiesOf counts the messages with content text in bob's view of conv.
func copiesOf(t *testing.T, u *user, conv, text string) int {
	t.Helper()
	n := 0
	for _, c := range contents(t, u.api(), conv) {
		if c == text {
			n++
		}
	}
	return n
}

// Issue 27: a send whose answers are lost or refused as unavailable is resent
// with the same message_id until --timeout, and stored once; the user lookup
// of --to with CHAT_TOKEN is retried the same way.
func TestSendThroughFaults(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	through := func(p *faultProxy) *user {
		return &user{t: t, name: "alice", srv: srv, home: t.TempDir(),
			env: []string{"CHAT_SERVER=" + p.URL, "CHAT_TOKEN=" + alice.api().Token()}}
	}
	cases := []struct {
		name string
		f    fault
	}{
		{"OKLostAnswers", lostAnswer},
		{"OKDroppedConnections", dropAnswer},
		{"OKUnavailable", unavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sends := firstN(3, "POST", "/messages", c.f)
			lookups := firstN(3, "GET", "/v1/me", unavailable)
			p := newFaultProxy(t, srv, func(r *http.Request) fault {
				if f := lookups(r); f != pass {
					return f
				}
				return sends(r)
			})
			text := "through " + c.name
			out, errOut, code := through(p).run("", "send", "--timeout", "20s", "--to", "bob", text)
			if code != 0 || strings.TrimSpace(out) == "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if n := p.count("POST", "/v1/conversations/"+conv+"/messages"); n != 4 {
				t.Fatalf("%d sends reached the proxy, want 4 (3 faulted, then one through)", n)
			}
			if n := p.count("GET", "/v1/me"); n != 4 {
				t.Fatalf("%d user lookups, want 4", n)
			}
			if n := copiesOf(t, bob, conv, text); n != 1 {
				t.Fatalf("bob has %d copies, want 1", n)
			}
		})
	}
	t.Run("ErrGivesUpSayingMaybeStored", func(t *testing.T) {
		p := newFaultProxy(t, srv, func(r *http.Request) fault {
			if r.Method == "POST" {
				return lostAnswer
			}
			return pass
		})
		text := "lost every time"
		out, errOut, code := through(p).run("", "send", "--timeout", "1500ms", "--to", "bob", text)
		if code != exitFailure || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and one line", code, out, errOut)
		}
		if strings.Contains(errOut, "try again later") || !strings.Contains(errOut, "may be stored") {
			t.Fatalf("stderr %q: must say the message may be stored, not to try again", errOut)
		}
		if p.count("POST", "/v1/conversations/"+conv+"/messages") < 2 {
			t.Fatal("never resent")
		}
		m := regexp.MustCompile(`--message-id (\S+)`).FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("stderr %q names no --message-id", errOut)
		}
		// The way out it names stores nothing twice.
		alice.must("", "send", "--to", "bob", "--message-id", m[1], text)
		if n := copiesOf(t, bob, conv, text); n != 1 {
			t.Fatalf("bob has %d copies after the resend, want 1", n)
		}
	})
	t.Run("ErrRefusalIsNotResent", func(t *testing.T) {
		// A code this version does not know (a newer server's) is a refusal:
		// one line with the server's message, exit 1, no resend.
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":{"code":"message_id_taken","message":"message_id x-1 is another sender's in this conversation"}}`))
		}))
		defer ts.Close()
		u := &user{t: t, srv: srv, home: t.TempDir(), env: []string{"CHAT_SERVER=" + ts.URL, "CHAT_TOKEN=t"}}
		out, errOut, code := u.run("", "send", "--group", "g:abc", "--message-id", "x-1", "hi")
		want := "chat send: message_id x-1 is another sender's in this conversation\n"
		if code != exitFailure || out != "" || errOut != want {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, want)
		}
	})
}
