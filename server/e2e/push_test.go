package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

type pushed struct{ path, body, title, conv string }

func TestPushToOfflineUsers(t *testing.T) {
	var mu sync.Mutex
	var got []pushed
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, pushed{r.URL.Path, string(body), r.Header.Get("Title"), r.Header.Get("X-Chat-Conversation")})
		mu.Unlock()
	}))
	defer hook.Close()
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.PushURL = hook.URL + "/chat-{user}" }))
	alice, bob, carol := register(t, srv, "alice"), register(t, srv, "bob"), register(t, srv, "carol")
	g := alice.group("g", "bob", "carol")
	cws := dial(t, carol) // carol is online: no push for her
	alice.send(g, "m1", "lunch at noon?")
	cws.next(isMessage(g))
	testenv.WaitFor(t, wait, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 })
	time.Sleep(100 * time.Millisecond) // a push to carol would have arrived by now
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("pushes: %+v, want exactly one (bob)", got)
	}
	if p := got[0]; p.path != "/chat-bob" || p.body != "lunch at noon?" || p.title != "New message from alice" || p.conv != g {
		t.Fatalf("push %+v", p)
	}
	_ = bob
}
