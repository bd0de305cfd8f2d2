package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// The server's own packages: what Node.Close must have ended when it returns.
var serverPackages = []string{
	"github.com/chatterm/chat/server.",
	"github.com/chatterm/chat/server/conn.",
	"github.com/chatterm/chat/server/protocol.",
	"github.com/chatterm/chat/server/httpd.",
	"github.com/chatterm/chat/server/node.",
	"github.com/chatterm/chat/server/sqlite.",
	"github.com/chatterm/chat/server/inmem.",
	"github.com/chatterm/chat/server/files.",
	"github.com/chatterm/chat/internal/gopool.",
}

func register(t *testing.T, base, user string) string {
	t.Helper()
	body, _ := json.Marshal(wire.RegisterRequest{UserID: user, Password: "password-" + user})
	resp, err := http.Post(base+"/v1/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var auth wire.AuthResponse
	if err := json.NewDecoder(resp.Body).Decode(&auth); err != nil || auth.Token == "" {
		t.Fatalf("register %s: %d %v", user, resp.StatusCode, err)
	}
	return auth.Token
}

// Close with sockets open and sends in flight: it returns once every
// socket's read loop and writers, the protocol engine's workers and sweeps,
// and the Service's background jobs have ended, and closes the backends only
// then (a read loop still calling into a closed store would fail).
func TestCloseEndsEverythingItStarted(t *testing.T) {
	srv := servertest.Start(t)
	conv := wire.DirectConversationID("alice", "bob")
	tokens := map[string]string{"alice": register(t, srv.URL, "alice"), "bob": register(t, srv.URL, "bob")}
	var clients sync.WaitGroup
	received := make(chan struct{}, 1024)
	for i := range 6 {
		user := []string{"alice", "bob"}[i%2]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		sock, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/v1/ws",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tokens[user]}}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sock.CloseNow() })
		clients.Add(2)
		go func() { // reads until the server closes the socket
			defer clients.Done()
			for {
				_, data, err := sock.Read(context.Background())
				if err != nil {
					return
				}
				if bytes.Contains(data, []byte(`"type":"message"`)) {
					select {
					case received <- struct{}{}:
					default:
					}
				}
			}
		}()
		go func() { // sends until the socket is gone
			defer clients.Done()
			for n := 0; ; n++ {
				data, _ := wire.EncodeFrame(wire.Frame{Type: wire.TypeSend, ID: fmt.Sprint(n), ConversationID: conv,
					MessageID: fmt.Sprintf("%d-%d", i, n), Content: "in flight"})
				if sock.Write(context.Background(), websocket.MessageText, data) != nil {
					return
				}
				// Paced so the readers keep up: flooded as fast as the server
				// stores, each socket gets the other five's messages faster
				// than a reader in this process takes them, and the server
				// rightly closes it as a slow consumer before Close is tried.
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	for range 20 { // messages are flowing
		select {
		case <-received:
		case <-time.After(10 * time.Second):
			t.Fatal("no messages delivered within 10s")
		}
	}
	if err := srv.Node.Close(); err != nil {
		t.Fatalf("Close with live sockets: %v", err)
	}
	testenv.NoGoroutinesIn(t, 5*time.Second, serverPackages...)
	clients.Wait() // every socket was closed by the server
}

// A node configured with an S3 bucket that does not exist refuses to start,
// saying so, instead of failing the first upload as something else.
func TestStartRefusesAMissingBucket(t *testing.T) {
	endpoint := testenv.DynamoEndpoint(t) // moto serves S3 too
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	_, err := node.Start(context.Background(), node.Config{
		Addr: "127.0.0.1:0", DataDir: t.TempDir(), PasswordCost: 4,
		Production: node.Production{S3Bucket: "chat-test-no-such-bucket", S3Endpoint: endpoint, S3Region: "us-east-1", S3PathStyle: true},
	})
	if err == nil || !strings.Contains(err.Error(), "--s3-bucket chat-test-no-such-bucket: it does not exist") {
		t.Fatalf("Start with a missing bucket: %v", err)
	}
}
