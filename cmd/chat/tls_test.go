package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/internal/testcert"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// The chat binary against a server on HTTPS whose certificate a private CA
// signed: with --ca-file (or CHAT_CA_FILE) register, send over HTTPS and tail
// over WSS work; without it the certificate is refused with a hint to pass
// the CA; with --insecure it works and says, once, that nothing is checked.
func TestPrivateCA(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca.Leaf(t, "127.0.0.1").WriteFiles(t, cert, key)
	cf, err := node.LoadCertFile(cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.TLS = cf.TLSConfig() }))
	caFile := ca.WriteFile(t, dir)

	alice := &user{t: t, name: "alice", srv: srv, home: t.TempDir()}
	bob := &user{t: t, name: "bob", srv: srv, home: t.TempDir(), env: []string{"CHAT_CA_FILE=" + caFile}}

	// Refused without the CA: one line, exit 1, pointing at --ca-file.
	_, errOut, code := alice.run(pw+"\n", "register", "alice", "--password-stdin")
	if code != exitFailure || !strings.Contains(errOut, "--ca-file") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("without the CA: exit %d %q", code, errOut)
	}
	alice.must(pw+"\n", "--ca-file", caFile, "register", "alice", "--password-stdin")
	bob.must(pw+"\n", "register", "bob", "--password-stdin") // CHAT_CA_FILE

	c := bob.cmd("tail", "--with", "alice", "--json")
	stdout, _ := c.StdoutPipe()
	var tailErr bytes.Buffer
	c.Stderr = &tailErr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	lines := make(chan wire.Message, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m wire.Message
			json.Unmarshal(sc.Bytes(), &m)
			lines <- m
		}
	}()
	// The flag among the command's own flags, like --server.
	alice.must("", "send", "--to", "bob", "--ca-file", caFile, "over https")
	select {
	case m := <-lines:
		if m.Content != "over https" || m.SenderID != "alice" {
			t.Fatalf("tail printed %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("tail over wss printed nothing; stderr %q", tailErr.String())
	}
	c.Process.Signal(syscall.SIGINT)
	if err := c.Wait(); err != nil {
		t.Fatalf("tail: %v; stderr %q", err, tailErr.String())
	}

	// --insecure: works, with the warning on stderr, once.
	out, errOut, code := alice.run("", "--insecure", "history", "--with", "bob")
	if code != 0 || !strings.Contains(out, "over https") || strings.Count(errOut, "warning: --insecure") != 1 {
		t.Fatalf("--insecure: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	insecure := &user{t: t, name: "alice", srv: srv, home: alice.home, env: []string{"CHAT_INSECURE=1"}}
	if _, errOut, code := insecure.run("", "whoami"); code != 0 || !strings.Contains(errOut, "warning: --insecure") {
		t.Fatalf("CHAT_INSECURE=1: exit %d %q", code, errOut)
	}
	// Turned off again by the flag: verification is back.
	if _, errOut, code := insecure.run("", "whoami", "--insecure=false"); code != exitFailure || strings.Contains(errOut, "warning") {
		t.Fatalf("CHAT_INSECURE=1 --insecure=false: exit %d %q", code, errOut)
	}
	// Without either, the stored login does not get around the check.
	if _, _, code := alice.run("", "whoami"); code != exitFailure {
		t.Fatalf("no CA, no --insecure: exit %d", code)
	}

	// A CA file that does not load is a usage error, as a flag or a variable;
	// so is a variable's value chat does not take.
	for _, u := range []*user{
		{t: t, srv: srv, home: alice.home, env: []string{"CHAT_CA_FILE=" + filepath.Join(dir, "missing.pem")}},
		{t: t, srv: srv, home: alice.home, env: []string{"CHAT_INSECURE=maybe"}},
		{t: t, srv: srv, home: alice.home, env: []string{"CHAT_TIMER_SLACK_US=-1"}},
		{t: t, srv: srv, home: alice.home, env: []string{"CHAT_TIMER_SLACK_US=2000000"}},
	} {
		if _, errOut, code := u.run("", "whoami"); code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("%v: exit %d %q", u.env, code, errOut)
		}
	}
	if _, errOut, code := alice.run("", "whoami", "--ca-file", key); code != exitUsage || !strings.Contains(errOut, "no PEM certificate") {
		t.Fatalf("--ca-file with a key in it: exit %d %q", code, errOut)
	}
}
