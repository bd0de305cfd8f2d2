package httpd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// from is an HTTP client whose connections come from the loopback address ip
// (any of 127.0.0.0/8 works on Linux): a second client address on one machine.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

type answer struct {
	status int
	header http.Header
	body   []byte
	err    *wire.Error // the JSON error, when the status is not 2xx
}

// call makes one request with a raw body; token "" sends no Authorization.
func call(t *testing.T, c *http.Client, method, url, token string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	a.body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e wire.ErrorResponse
		if err := json.Unmarshal(a.body, &e); err != nil || e.Error == nil || e.Error.Code == "" {
			t.Fatalf("%s %s: %d without a JSON error with a code: %q", method, url, resp.StatusCode, a.body)
		}
		a.err = e.Error
	}
	return a
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func login(t *testing.T, c *http.Client, base, user, password string) answer {
	t.Helper()
	return call(t, c, "POST", base+"/v1/login", "", jsonBody(wire.LoginRequest{UserID: user, Password: password}))
}

// A password spray from one address is refused before any hash is run once the
// address's budget is spent, while a user at another address logs in.
func TestLoginSprayThrottledPerAddress(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.AuthRate = 3 }))
	local := from("127.0.0.1")
	for _, u := range []string{"alice", "bob"} {
		if a := call(t, from("127.0.0.3"), "POST", srv.URL+"/v1/register", "", jsonBody(wire.RegisterRequest{UserID: u, Password: "password-" + u})); a.status != 201 {
			t.Fatalf("register %s: %d %q", u, a.status, a.body)
		}
	}
	hashes := srv.Node.Service().Config().Metrics.PasswordHashes
	before := testutil.ToFloat64(hashes)
	limited := 0
	for i := range 12 {
		a := login(t, local, srv.URL, []string{"alice", "bob", "carol"}[i%3], "wrong password")
		switch {
		case a.status == http.StatusUnauthorized:
		case a.status == http.StatusTooManyRequests && a.err.Code == wire.CodeRateLimited && a.header.Get("Retry-After") != "":
			limited++
		default:
			t.Fatalf("spray attempt %d: %d %q", i, a.status, a.body)
		}
	}
	if limited == 0 {
		t.Fatal("12 wrong logins from one address within a second were all let through")
	}
	if ran := testutil.ToFloat64(hashes) - before; ran > float64(12-limited) {
		t.Fatalf("%v hashes for %d attempts let through: refused attempts cost bcrypt runs", ran, 12-limited)
	}
	if a := login(t, from("127.0.0.2"), srv.URL, "alice", "password-alice"); a.status != http.StatusOK {
		t.Fatalf("alice from another address during the spray: %d %q", a.status, a.body)
	}
}

// "No such user" and "wrong password" take the same path: one bcrypt
// comparison each, and the same answer.
func TestUnknownUserCostsAHash(t *testing.T) {
	srv := servertest.Start(t)
	register(t, srv.URL, "alice")
	hashes := srv.Node.Service().Config().Metrics.PasswordHashes
	c := from("127.0.0.1")
	for _, tc := range []struct{ user, password string }{{"alice", "wrong password"}, {"nobody", "wrong password"}} {
		before := testutil.ToFloat64(hashes)
		a := login(t, c, srv.URL, tc.user, tc.password)
		if a.status != http.StatusUnauthorized || a.err.Message != "wrong user_id or password" {
			t.Fatalf("login %s: %d %q", tc.user, a.status, a.body)
		}
		if ran := testutil.ToFloat64(hashes) - before; ran != 1 {
			t.Fatalf("login as %s ran %v hashes, want 1", tc.user, ran)
		}
	}
}

// bcrypt reads 72 bytes; a longer password counts whole, up to the documented 256.
func TestLongPasswordsCountWhole(t *testing.T) {
	srv := servertest.Start(t)
	c := from("127.0.0.1")
	long := strings.Repeat("p", 72) + "-the-rest-matters"
	if a := call(t, c, "POST", srv.URL+"/v1/register", "", jsonBody(wire.RegisterRequest{UserID: "alice", Password: long})); a.status != 201 {
		t.Fatalf("register with %d bytes: %d %q", len(long), a.status, a.body)
	}
	if a := login(t, c, srv.URL, "alice", strings.Repeat("p", 72)+"-something-else"); a.status != http.StatusUnauthorized {
		t.Fatalf("a password sharing the first 72 bytes logged in: %d", a.status)
	}
	if a := login(t, c, srv.URL, "alice", long); a.status != http.StatusOK {
		t.Fatalf("login with the long password: %d %q", a.status, a.body)
	}
	longest := strings.Repeat("x", wire.MaxPasswordLen)
	if a := call(t, c, "POST", srv.URL+"/v1/register", "", jsonBody(wire.RegisterRequest{UserID: "bob", Password: longest})); a.status != 201 {
		t.Fatalf("register with %d bytes: %d %q", len(longest), a.status, a.body)
	}
	if a := login(t, c, srv.URL, "bob", longest); a.status != http.StatusOK {
		t.Fatalf("login with %d bytes: %d %q", len(longest), a.status, a.body)
	}
	a := call(t, c, "POST", srv.URL+"/v1/register", "", jsonBody(wire.RegisterRequest{UserID: "carol", Password: longest + "x"}))
	if a.status != http.StatusBadRequest || !strings.Contains(a.err.Message, "256") {
		t.Fatalf("register with %d bytes: %d %q", len(longest)+1, a.status, a.body)
	}
}

// Names people read may not hold control or bidi characters, nor pose as
// another user's id.
func TestNamesRefuseControlsAndSpoofing(t *testing.T) {
	srv := servertest.Start(t)
	c := from("127.0.0.1")
	alice := register(t, srv.URL, "alice")
	register(t, srv.URL, "bob")
	for _, tc := range []struct {
		what, method, path string
		body               any
	}{
		{"bidi display name", "POST", "/v1/register", wire.RegisterRequest{UserID: "mallory", Password: "password-x", DisplayName: "gro\u202eup"}},
		{"escape in display name", "PATCH", "/v1/me", map[string]string{"display_name": "a\x1b[2Jb"}},
		{"display name posing as bob", "PATCH", "/v1/me", map[string]string{"display_name": "bob"}},
		{"C1 in status", "PATCH", "/v1/me", map[string]string{"status": "away\u009b"}},
		{"isolate in group name", "POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Group, Name: "ops\u2066", Members: []string{"bob"}}},
		{"BEL in group name", "POST", "/v1/conversations", wire.CreateConversationRequest{Type: wire.Group, Name: "ops\x07", Members: []string{"bob"}}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			a := call(t, c, tc.method, srv.URL+tc.path, alice, jsonBody(tc.body))
			if a.status != http.StatusBadRequest || a.err.Code != wire.CodeInvalid {
				t.Fatalf("%d %q, want 400 invalid", a.status, a.body)
			}
		})
	}
	me := call(t, c, "GET", srv.URL+"/v1/me", alice, nil)
	var p wire.Profile
	json.Unmarshal(me.body, &p)
	if p.DisplayName != "alice" || p.Status != "" {
		t.Fatalf("a refused update changed the profile: %+v", p)
	}
	if a := call(t, c, "PATCH", srv.URL+"/v1/me", alice, jsonBody(map[string]string{"display_name": "Alice 👩‍💻 Smith"})); a.status != 200 {
		t.Fatalf("an ordinary name with an emoji sequence: %d %q", a.status, a.body)
	}
}

// Invalid UTF-8 is refused wherever it comes in over HTTP, and changes nothing.
func TestInvalidUTF8Refused(t *testing.T) {
	srv := servertest.Start(t)
	c := from("127.0.0.1")
	alice := register(t, srv.URL, "alice")
	register(t, srv.URL, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	base := srv.URL + "/v1/conversations/" + conv
	if a := call(t, c, "POST", base+"/messages", alice, jsonBody(wire.SendRequest{MessageID: "ok-1", Content: "fine"})); a.status != 201 {
		t.Fatalf("send: %d %q", a.status, a.body)
	}
	for _, tc := range []struct{ what, method, url, body string }{
		{"body", "POST", base + "/messages", "{\"message_id\":\"bad-1\",\"content\":\"caf\xe9\"}"},
		{"path", "GET", srv.URL + "/v1/users/al%FFice", ""},
		{"query", "GET", base + "/messages?before_seq=%FF", ""},
		{"query key", "GET", base + "/messages?%FF=1", ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			a := call(t, c, tc.method, tc.url, alice, []byte(tc.body))
			if a.status != http.StatusBadRequest || a.err.Code != wire.CodeInvalid || !strings.Contains(a.err.Message, "UTF-8") {
				t.Fatalf("%d %q, want 400 invalid naming UTF-8", a.status, a.body)
			}
		})
	}
	h := call(t, c, "GET", base+"/messages", alice, nil)
	var page wire.HistoryResponse
	json.Unmarshal(h.body, &page)
	if len(page.Messages) != 1 || page.Messages[0].Content != "fine" {
		t.Fatalf("history after refused sends: %+v", page.Messages)
	}
}

// A token in the query string is taken on the WebSocket route only.
func TestQueryTokenOnlyOnWebSocket(t *testing.T) {
	srv := servertest.Start(t)
	alice := register(t, srv.URL, "alice")
	a := call(t, from("127.0.0.1"), "GET", srv.URL+"/v1/me?token="+alice, "", nil)
	if a.status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/me?token=: %d %q, want 401", a.status, a.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sock, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/v1/ws?token="+alice, nil)
	if err != nil {
		t.Fatalf("WebSocket with ?token=: %v", err)
	}
	sock.CloseNow()
}
