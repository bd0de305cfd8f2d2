package httpd_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// FuzzHTTPAPI sends arbitrary bodies, paths and query strings to every route
// of a real server, as the logged-in alice: whatever comes in, the answer is a
// success or a JSON error with a code, never an internal error (a 503 must
// carry a retry hint), and nothing panics.
func FuzzHTTPAPI(f *testing.F) {
	routes := []struct{ method, path string }{
		{"POST", "/v1/register"}, {"POST", "/v1/login"}, {"POST", "/v1/logout"},
		{"GET", "/v1/me"}, {"PATCH", "/v1/me"}, {"GET", "/v1/users/"},
		{"POST", "/v1/invites"}, {"POST", "/v1/conversations"}, {"GET", "/v1/conversations/"},
		{"POST", "/v1/conversations/dm:alice:bob/members"}, {"DELETE", "/v1/conversations/dm:alice:bob/members/"},
		{"POST", "/v1/conversations/dm:alice:bob/messages"}, {"GET", "/v1/conversations/dm:alice:bob/messages"},
		{"POST", "/v1/conversations/dm:alice:bob/delivered"}, {"POST", "/v1/conversations/dm:alice:bob/read"},
		{"GET", "/v1/conversations/dm:alice:bob/status"}, {"GET", "/v1/inbox"},
		{"POST", "/v1/media"}, {"GET", "/v1/media/"},
		{"GET", "/v1/channels"}, {"POST", "/v1/conversations/g:x/join"}, {"PATCH", "/v1/conversations/g:x"},
		{"PUT", "/v1/conversations/g:x/members/bob/role"},
	}
	for i := range routes {
		f.Add(uint8(i), "", "", []byte(`{}`))
	}
	f.Add(uint8(11), "", "", []byte(`{"message_id":"m1","content":"hi"}`))
	f.Add(uint8(12), "", "before_seq=5&limit=10", []byte(nil))
	f.Add(uint8(12), "", "after_seq=-1", []byte(nil))
	f.Add(uint8(7), "", "", []byte(`{"type":"group","name":"ops","members":["bob"]}`))
	f.Add(uint8(0), "", "", []byte(`{"user_id":"x","password":"`+strings.Repeat("p", 300)+`"}`))
	f.Add(uint8(5), "bob", "", []byte("{\"display_name\":\"\xff\"}"))
	f.Add(uint8(18), "media/alice/../../etc/passwd", "", []byte(nil))
	f.Add(uint8(8), "g:%zz", "x=%ff", []byte(nil))
	f.Add(uint8(19), "", "after=g:a&limit=500", []byte(nil))
	f.Add(uint8(21), "", "", []byte(`{"name":"ops","topic":"\u202e"}`))
	f.Add(uint8(22), "", "", []byte(`{"role":"owner"}`))

	srv := servertest.Start(f)
	alice := register(f, srv.URL, "alice")
	register(f, srv.URL, "bob")
	client := &http.Client{}
	f.Fuzz(func(t *testing.T, route uint8, suffix, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		url := srv.URL + r.path + suffix
		if query != "" {
			url += "?" + query
		}
		req, err := http.NewRequest(r.method, url, bytes.NewReader(body))
		if err != nil {
			return // not a URL a client could send
		}
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return // refused by the HTTP layer before the handler (e.g. a bad request line)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
			return
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && r.path == "/v1/media/" {
			return // the media redirect
		}
		var e wire.ErrorResponse
		if err := json.Unmarshal(data, &e); err != nil || e.Error == nil || e.Error.Code == "" {
			if resp.StatusCode == http.StatusBadRequest && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				return // net/http's own answer to a malformed request, before any handler
			}
			t.Fatalf("%s %s: %d without a JSON error: %q", r.method, url, resp.StatusCode, data)
		}
		switch {
		case e.Error.Code == wire.CodeInternal:
			t.Fatalf("%s %s: internal error: %+v", r.method, url, e.Error)
		case resp.StatusCode == http.StatusServiceUnavailable && e.Error.RetryAfterMs <= 0:
			t.Fatalf("%s %s: 503 without a retry hint: %+v", r.method, url, e.Error)
		}
	})
}
