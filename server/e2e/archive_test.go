package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

// metric reads one counter from /metrics.
func metric(t *testing.T, srv *servertest.Server, name string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+servertest.MetricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func TestColdTierIsTransparent(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.ArchiveAfter = time.Nanosecond // everything is "old" at once
		c.ArchiveInterval = 20 * time.Millisecond
	}))
	alice, bob := register(t, srv, "alice"), register(t, srv, "bob")
	conv := alice.direct("bob")
	const n = 12
	for i := 1; i <= n; i++ {
		alice.send(conv, fmt.Sprintf("m%d", i), fmt.Sprintf("old message %d", i))
	}
	testenv.WaitFor(t, wait, func() bool { return metric(t, srv, "chat_messages_archived_total") >= n })
	h := bob.history(conv, 0, 100)
	if len(h.Messages) != n {
		t.Fatalf("history has %d messages", len(h.Messages))
	}
	for _, m := range h.Messages {
		if m.Content != fmt.Sprintf("old message %d", m.SeqNo) || m.Timestamp.IsZero() {
			t.Fatalf("archived message came back as %+v", m)
		}
	}
	// A device catching up gets archived messages whole too.
	bws := dial(t, bob)
	for i := 1; i <= n; i++ {
		if m := bws.next(isMessage(conv)).Message; m.Content != fmt.Sprintf("old message %d", i) {
			t.Fatalf("catch-up got %+v", m)
		}
	}
}
