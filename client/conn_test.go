package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// fakeServer accepts one WebSocket and writes msgs to it as they stand, one
// WebSocket message each, then waits for the client to close.
func fakeServer(t *testing.T, msgs ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sock, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer sock.CloseNow()
		for _, m := range msgs {
			if err := sock.Write(r.Context(), websocket.MessageText, []byte(m)); err != nil {
				return
			}
		}
		sock.Read(r.Context()) // until the client goes
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A message may carry several frames, one per line: Read returns them one at a
// time and in order, across messages, skipping empty lines; a bad line is an
// error of its own and the frames after it still come.
func TestConnReadsBatchedFrames(t *testing.T) {
	url := fakeServer(t,
		`{"type":"hello","user_id":"alice"}`+"\n"+`{"type":"pong","id":"p1"}`,
		`{"type":"pong","id":"p2"}`,
		"\n"+`{"type":"pong","id":"p3"}`+"\n\n"+`{"type":"pong","id":"p4"}`+"\n",
		"\n",
		`{"type":"pong","id":"p5"}`+"\n"+`{"type":"pong"`+"\n"+`{"type":"launch"}`+"\n"+`{"type":"pong","id":"p6"}`,
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := client.Dial(ctx, url, "token", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if conn.UserID() != "alice" {
		t.Fatalf("user %q, want alice from the hello", conn.UserID())
	}
	var got []string
	for len(got) < 8 {
		f, err := conn.Read(ctx)
		switch {
		case wire.ErrorCode(err) == wire.CodeInvalid:
			got = append(got, "invalid")
		case err != nil:
			t.Fatalf("after %v: %v", got, err)
		default:
			got = append(got, f.ID)
		}
	}
	want := []string{"p1", "p2", "p3", "p4", "p5", "invalid", "invalid", "p6"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("read %v, want %v", got, want)
		}
	}
}
