package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"
	"github.com/chatterm/chat/wire"
)

// serve starts a chatserver on dir (open registration) for the test.
func serve(t *testing.T, dir string) *Main {
	t.Helper()
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--registration", "open", "--send-rate", "-1", "--auth-rate", "-1"},
		func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func post(t *testing.T, url, token string, body, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func tool(args ...string) (int, string) {
	code, _, stderr := toolOut(args...)
	return code, stderr
}

func toolOut(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code, _ = runTool(context.Background(), args, &out, &errOut, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// A backup taken while messages are being sent restores to a server that has
// every message acknowledged before the backup began, in order, and the
// blobs; restore refuses a used directory, a running server's directory and
// a file that is not a backup; a second server on a directory in use stops.
func TestBackupDuringSendsRestores(t *testing.T) {
	dir := t.TempDir()
	m := serve(t, dir)
	base := "http://" + m.Addr()
	var alice, bob wire.AuthResponse
	post(t, base+"/v1/register", "", wire.RegisterRequest{UserID: "alice", Password: "password-alice"}, &alice)
	post(t, base+"/v1/register", "", wire.RegisterRequest{UserID: "bob", Password: "password-bob"}, &bob)
	conv := wire.DirectConversationID("alice", "bob")
	post(t, base+"/v1/conversations", alice.Token, wire.CreateConversationRequest{Type: wire.Direct, Members: []string{"bob"}}, nil)
	// A blob as the files store keeps one (media, archived messages).
	blob := filepath.Join(dir, "blobs", "media", "alice", "blob-1")
	if err := os.MkdirAll(filepath.Dir(blob), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, []byte("an attachment"), 0o640); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var acked []string // message ids answered stored, in answer order
	stop := make(chan struct{})
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("m%05d", i)
			var sent wire.SendResponse
			if post(t, base+"/v1/conversations/"+conv+"/messages", alice.Token, wire.SendRequest{MessageID: id, Content: "message " + id}, &sent) == http.StatusCreated {
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}
	}()
	testenv.WaitFor(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 100
	})
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	file := filepath.Join(t.TempDir(), "backup.tar.gz")
	if code, errOut := tool("backup", "--data-dir", dir, file); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errOut)
	}
	close(stop)
	<-sending

	// A second server on the same directory, while the first serves.
	second := NewMain(io.Discard)
	second.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" })
	if err := second.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "in use by another chatserver") {
		second.Close()
		t.Fatalf("a second server on a directory in use: %v", err)
	}
	if code, errOut := tool("restore", "--data-dir", dir, "--force", file); code != 1 || !strings.Contains(errOut, "in use by a chatserver") {
		t.Fatalf("restore into a running server's directory: exit %d: %s", code, errOut)
	}
	m.Close()

	restored := t.TempDir()
	if code, errOut := tool("restore", "--data-dir", restored, file); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	if code, errOut := tool("restore", "--data-dir", restored, file); code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("restore into a directory with data: exit %d: %s", code, errOut)
	}
	if got, err := os.ReadFile(filepath.Join(restored, "blobs", "media", "alice", "blob-1")); err != nil || string(got) != "an attachment" {
		t.Fatalf("restored blob: %q, %v", got, err)
	}

	m = serve(t, restored)
	defer m.Close()
	var ids []string
	for beforeSeq := int64(0); ; {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/v1/conversations/%s/messages?limit=%d&before_seq=%d", m.Addr(), conv, wire.MaxPageSize, beforeSeq), nil)
		req.Header.Set("Authorization", "Bearer "+bob.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page wire.HistoryResponse
		json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		for _, msg := range page.Messages {
			ids = append(ids, msg.MessageID)
		}
		if page.NextBeforeSeq == 0 {
			break
		}
		beforeSeq = page.NextBeforeSeq
	}
	// History pages come newest first: oldest first, the sends' order.
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	if len(ids) < len(before) {
		t.Fatalf("restored %d messages, want at least the %d acknowledged before the backup", len(ids), len(before))
	}
	for i, id := range before {
		if ids[i] != id {
			t.Fatalf("restored message %d is %s, want %s (every message acknowledged before the backup, in order)", i, ids[i], id)
		}
	}

	bad := filepath.Join(t.TempDir(), "not-a-backup.tar.gz")
	os.WriteFile(bad, []byte("hello"), 0o600)
	if code, errOut := tool("restore", "--data-dir", t.TempDir(), bad); code != 1 || !strings.Contains(errOut, "not a chatserver backup") {
		t.Fatalf("restore of a file that is not a backup: exit %d: %s", code, errOut)
	}
	if code, _ := tool("backup"); code != 2 {
		t.Fatalf("backup without FILE: exit %d, want 2", code)
	}
}
