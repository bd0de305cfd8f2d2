package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/wire"
)

// TestKilledNodeLosesNothingAcknowledged runs the real binary, sends messages
// from several writers, kills the process with SIGKILL mid-stream (no graceful
// anything), restarts it on the same data directory, and checks that every send
// that was answered is stored exactly once, in order.
func TestKilledNodeLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real server")
	}
	bin := filepath.Join(t.TempDir(), "chatserver")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := t.TempDir()
	start := func(addr string) (*exec.Cmd, string) {
		cmd := exec.Command(bin, "--addr", addr, "--data-dir", data, "--registration", "open", "--send-rate", "-1", "--auth-rate", "-1")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		listening := regexp.MustCompile(`msg="chatserver listening" addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				go io.Copy(io.Discard, stderr)
				return cmd, m[1]
			}
		}
		cmd.Process.Kill()
		t.Fatal("server did not report its address")
		return nil, ""
	}
	cmd, addr := start("127.0.0.1:0")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	base := "http://" + addr

	call := func(method, path, token string, body, out any) (int, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if out != nil && resp.StatusCode < 300 {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				return resp.StatusCode, err
			}
		}
		return resp.StatusCode, nil
	}
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob"} {
		var auth wire.AuthResponse
		if st, err := call("POST", "/v1/register", "", wire.RegisterRequest{UserID: u, Password: "password-" + u}, &auth); err != nil || st != 201 {
			t.Fatalf("register %s: %d %v", u, st, err)
		}
		tokens[u] = auth.Token
	}
	var group wire.Conversation
	if st, err := call("POST", "/v1/conversations", tokens["alice"], wire.CreateConversationRequest{Type: wire.Group, Name: "g", Members: []string{"bob"}}, &group); err != nil || st != 201 {
		t.Fatalf("group: %d %v", st, err)
	}

	var mu sync.Mutex
	acked := map[int64]string{} // seq → content, for every answered send
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := []string{"alice", "bob"}[w%2]
			for i := 0; ; i++ {
				content := fmt.Sprintf("w%d-%d", w, i)
				var r wire.SendResponse
				st, err := call("POST", "/v1/conversations/"+group.ConversationID+"/messages", tokens[user], wire.SendRequest{MessageID: content, Content: content}, &r)
				if err != nil || st != 201 {
					return // the server is gone: this send was never acknowledged
				}
				mu.Lock()
				acked[r.SeqNo] = content
				mu.Unlock()
			}
		}()
	}
	for {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()

	cmd, addr = start(addr)
	base = "http://" + addr
	var stored []wire.Message
	for before := int64(0); ; {
		var h wire.HistoryResponse
		if st, err := call("GET", fmt.Sprintf("/v1/conversations/%s/messages?before_seq=%d&limit=100", group.ConversationID, before), tokens["alice"], nil, &h); err != nil || st != 200 {
			t.Fatalf("history after restart: %d %v", st, err)
		}
		stored = append(stored, h.Messages...)
		if h.NextBeforeSeq == 0 {
			break
		}
		before = h.NextBeforeSeq
	}
	bySeq := map[int64]string{}
	seen := map[string]bool{}
	for i, m := range stored {
		if i > 0 && m.SeqNo >= stored[i-1].SeqNo {
			t.Fatalf("history out of order at %d", m.SeqNo)
		}
		if seen[m.Content] {
			t.Fatalf("%q stored twice", m.Content)
		}
		seen[m.Content] = true
		bySeq[m.SeqNo] = m.Content
	}
	for seq, content := range acked {
		if bySeq[seq] != content {
			t.Fatalf("acknowledged seq %d (%q) lost after SIGKILL: stored %q", seq, content, bySeq[seq])
		}
	}
	t.Logf("%d sends acknowledged before SIGKILL, %d messages stored, all acknowledged ones present", len(acked), len(stored))
}
