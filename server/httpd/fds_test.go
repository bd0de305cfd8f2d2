package httpd_test

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testenv"

	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
)

// A server out of file descriptors waits with backoff, says so once, and
// serves again by itself as soon as some are free. It runs in a process of
// its own, with a low open-file limit, since the limit is the process's.
func TestOutOfFilesRecovers(t *testing.T) {
	if os.Getenv("CHAT_TEST_FD_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOutOfFilesRecovers$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "CHAT_TEST_FD_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestOutOfFilesRecovers") {
			t.Fatalf("in a process of its own: %v\n%s", err, out)
		}
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var logs testenv.LogBuffer
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) {
		c.MaxConns, c.ConnsPerAddr = -1, -1 // so that the process does run out
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}))
	healthy(t, srv.URL)
	// Use up every descriptor but one, then connect with that one: the
	// connection waits in the listen queue, and accepting it fails.
	var spare []*os.File
	defer func() {
		for _, f := range spare {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		spare = append(spare, f)
	}
	spare[len(spare)-1].Close()
	spare = spare[:len(spare)-1]
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial with the last descriptor: %v", err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "too many open files") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line while out of descriptors:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // a spinning accept loop would log, or burn, in this second
	if n := strings.Count(logs.String(), "too many open files"); n != 1 {
		t.Fatalf("%d log lines for one shortage, want 1:\n%s", n, logs.String())
	}
	for _, f := range spare {
		f.Close()
	}
	spare = nil
	// Free again: the waiting connection is served, and so is another address.
	c.SetDeadline(time.Now().Add(5 * time.Second))
	healthzOn(t, c)
	resp, err := from("127.0.0.2").Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after the shortage: %v %v", resp, err)
	}
	resp.Body.Close()
	if !strings.Contains(logs.String(), "accepting connections again") {
		t.Fatalf("no log line for the recovery:\n%s", logs.String())
	}
}
