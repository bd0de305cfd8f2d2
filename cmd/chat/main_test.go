package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/server/node"
	"github.com/chatterm/chat/server/servertest"
	"github.com/chatterm/chat/wire"
)

// chatBin is the chat binary built once for the whole test run: the tests run
// it as a script would, against an in-process server.
var chatBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("CHAT_TEST_BIN"); bin != "" {
		// Another build's binary against these tests: to see a new test fail
		// on the code before a fix.
		chatBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "chat-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chatBin = filepath.Join(dir, "chat")
	build := exec.Command("go", "build", "-o", chatBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build chat:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const pw = "correct horse battery"

// user is one account with its own home directory, as on its own machine.
type user struct {
	t    *testing.T
	name string
	srv  *servertest.Server
	home string
	env  []string // extra variables, e.g. CHAT_TOKEN
}

func newUser(t *testing.T, srv *servertest.Server, name string, registerFlags ...string) *user {
	t.Helper()
	u := &user{t: t, name: name, srv: srv, home: t.TempDir()}
	args := append([]string{"register", name}, registerFlags...)
	out, errOut, code := u.run(pw+"\n", append(args, "--password-stdin")...)
	if code != 0 {
		t.Fatalf("register %s: exit %d: %s%s", name, code, out, errOut)
	}
	return u
}

func (u *user) cmd(args ...string) *exec.Cmd {
	c := exec.Command(chatBin, args...)
	// Only what the test sets: nothing from the developer's own environment.
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.home,
		"CHAT_HOME=" + u.home, "CHAT_SERVER=" + u.srv.URL}, u.env...)
	return c
}

// tailLines starts `chat tail args...` as u and streams its output lines; the
// process is killed when the test ends.
func (u *user) tailLines(args ...string) (lines <-chan string, stderr *bytes.Buffer) {
	u.t.Helper()
	c := u.cmd(append([]string{"tail"}, args...)...)
	stdout, err := c.StdoutPipe()
	if err != nil {
		u.t.Fatal(err)
	}
	stderr = &bytes.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	out := make(chan string, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	return out, stderr
}

// waitLine returns the first of lines that contains want, failing the test if
// none comes within 20 s.
func waitLine(t *testing.T, lines <-chan string, stderr *bytes.Buffer, want string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("tail ended before a line with %q; stderr %q", want, stderr.String())
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("tail printed no line with %q; stderr %q", want, stderr.String())
		}
	}
}

// run runs chat with stdin and returns stdout, stderr and the exit code.
func (u *user) run(stdin string, args ...string) (string, string, int) {
	u.t.Helper()
	c := u.cmd(args...)
	c.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("run chat %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// must runs chat and fails the test unless it exits 0.
func (u *user) must(stdin string, args ...string) string {
	u.t.Helper()
	out, errOut, code := u.run(stdin, args...)
	if code != 0 {
		u.t.Fatalf("chat %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

// api is an HTTP client logged in as the user, for checking the server side.
func (u *user) api() *client.API {
	u.t.Helper()
	acct, err := client.Config{Home: u.home, Server: u.srv.URL}.LoadAccount()
	if err != nil {
		u.t.Fatal(err)
	}
	return client.NewAPI(acct.Server, acct.Token, &http.Client{})
}

func contents(t *testing.T, api *client.API, conv string) []string {
	t.Helper()
	h, err := api.History(context.Background(), conv, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(h.Messages) - 1; i >= 0; i-- {
		out = append(out, h.Messages[i].Content)
	}
	return out
}

func TestAccount(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice")
	t.Run("OK", func(t *testing.T) {
		if out := alice.must("", "whoami"); out != "alice\n" {
			t.Fatalf("whoami = %q", out)
		}
		var files []string
		filepath.Walk(alice.home, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
				}
			}
			return nil
		})
		if len(files) == 0 {
			t.Fatal("no login stored")
		}
		// Log in again (a new token), from a second home.
		second := &user{t: t, name: "alice", srv: srv, home: t.TempDir()}
		if out := second.must(pw+"\n", "login", "alice", "--password-stdin"); !strings.Contains(out, "Logged in as alice") {
			t.Fatalf("login said %q", out)
		}
		second.must("", "logout")
		if _, errOut, code := second.run("", "whoami"); code != exitAuth || !strings.Contains(errOut, "chat login") {
			t.Fatalf("whoami after logout: exit %d %q", code, errOut)
		}
		// The first home's token still works.
		alice.must("", "whoami")
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		other := &user{t: t, name: "alice", srv: srv, home: t.TempDir()}
		_, errOut, code := other.run("wrong password\n", "login", "alice", "--password-stdin")
		if code != exitAuth || !strings.Contains(errOut, "wrong user or password") {
			t.Fatalf("exit %d %q", code, errOut)
		}
	})
	t.Run("ErrPasswordTooShort", func(t *testing.T) {
		other := &user{t: t, name: "dave", srv: srv, home: t.TempDir()}
		_, errOut, code := other.run("short\n", "register", "dave", "--password-stdin")
		if code != exitUsage || !strings.Contains(errOut, "password must be") {
			t.Fatalf("exit %d %q, want 2 and the server's reason", code, errOut)
		}
	})
	t.Run("ErrNoTerminal", func(t *testing.T) {
		other := &user{t: t, name: "alice", srv: srv, home: t.TempDir()}
		// Standard input is a pipe: chat must not prompt.
		_, errOut, code := other.run(pw+"\n", "login", "alice")
		if code != exitUsage || !strings.Contains(errOut, "--password-stdin") {
			t.Fatalf("exit %d %q", code, errOut)
		}
	})
	t.Run("OKToken", func(t *testing.T) {
		token := &user{t: t, name: "alice", srv: srv, home: t.TempDir(), env: []string{"CHAT_TOKEN=" + alice.api().Token()}}
		if out := token.must("", "whoami"); out != "alice\n" {
			t.Fatalf("whoami with CHAT_TOKEN = %q", out)
		}
	})
}

func TestSend(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")

	t.Run("OKArgsAndPipe", func(t *testing.T) {
		out := alice.must("", "send", "--to", "bob", "hello", "bob")
		if strings.TrimSpace(out) == "" {
			t.Fatal("no seq_no printed")
		}
		alice.must("piped text\n", "send", "--to", "bob")
		alice.must("dash text\n", "send", "--to", "bob", "-")
		got := contents(t, bob.api(), conv)
		want := []string{"hello bob", "piped text", "dash text"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("bob sees %q, want %q", got, want)
		}
	})
	t.Run("OKLinesInOrder", func(t *testing.T) {
		g := alice.must("", "group", "create", "lines", "--members", "bob")
		gid := strings.TrimSpace(g)
		var in strings.Builder
		for i := 1; i <= 20; i++ {
			fmt.Fprintf(&in, "line %02d\n", i)
			if i == 10 {
				in.WriteString("\n") // empty lines are skipped
			}
		}
		out := alice.must(in.String(), "send", "--group", gid, "--lines")
		seqs := strings.Fields(out)
		if len(seqs) != 20 {
			t.Fatalf("printed %d seq_nos: %q", len(seqs), out)
		}
		got := contents(t, bob.api(), gid)
		for i, c := range got {
			if c != fmt.Sprintf("line %02d", i+1) {
				t.Fatalf("message %d is %q: %q", i, c, got)
			}
		}
		if len(got) != 20 {
			t.Fatalf("bob sees %d messages", len(got))
		}
	})
	t.Run("OKJSON", func(t *testing.T) {
		out := alice.must("a\r\nb", "send", "--to", "bob", "--lines", "--json") // CRLF, and no newline at the end
		sc := bufio.NewScanner(strings.NewReader(out))
		var prev int64
		n := 0
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			for _, k := range []string{"conversation_id", "seq_no", "message_id", "timestamp"} {
				if _, ok := r[k]; !ok {
					t.Fatalf("line %q lacks %s", sc.Text(), k)
				}
			}
			var resp wire.SendResponse
			json.Unmarshal(sc.Bytes(), &resp)
			if resp.ConversationID != conv || resp.SeqNo <= prev || resp.Timestamp.IsZero() {
				t.Fatalf("answer %+v after seq %d", resp, prev)
			}
			prev = resp.SeqNo
			n++
		}
		if n != 2 {
			t.Fatalf("%d JSON lines: %q", n, out)
		}
	})
	t.Run("OKIdempotentRetry", func(t *testing.T) {
		first := alice.must("", "send", "--to", "bob", "--message-id", "deploy-42", "deploying v42")
		again := alice.must("", "send", "--to", "bob", "--message-id", "deploy-42", "deploying v42")
		if first != again {
			t.Fatalf("retry printed %q, first %q", again, first)
		}
		lines1 := alice.must("x\ny\n", "send", "--to", "bob", "--lines", "--message-id", "batch-7")
		lines2 := alice.must("x\ny\n", "send", "--to", "bob", "--lines", "--message-id", "batch-7")
		if lines1 != lines2 {
			t.Fatalf("retried --lines printed %q, first %q", lines2, lines1)
		}
		n := 0
		for _, c := range contents(t, bob.api(), conv) {
			if c == "deploying v42" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("bob sees the retried message %d times", n)
		}
	})
}

func TestExitCodes(t *testing.T) {
	srv := servertest.Start(t)
	alice := newUser(t, srv, "alice")
	newUser(t, srv, "bob")
	nobody := &user{t: t, name: "nobody", srv: srv, home: t.TempDir()}
	badToken := &user{t: t, name: "x", srv: srv, home: t.TempDir(), env: []string{"CHAT_TOKEN=not-a-token"}}
	down := &user{t: t, name: "x", srv: srv, home: t.TempDir(), env: []string{"CHAT_SERVER=http://127.0.0.1:1", "CHAT_TOKEN=whatever"}}
	cases := []struct {
		name   string
		u      *user
		args   []string
		code   int
		stderr string // a fragment of the one-line error
	}{
		{"ErrUsageNoTarget", alice, []string{"send", "hi"}, exitUsage, "--to USER or --group ID"},
		{"ErrUsageBadFlag", alice, []string{"send", "--to", "bob", "--frobnicate", "hi"}, exitUsage, "frobnicate"},
		{"ErrUsageUnknownCommand", alice, []string{"sned"}, exitUsage, "unknown command"},
		{"ErrUsageBadWait", alice, []string{"send", "--to", "bob", "--wait", "soon", "hi"}, exitUsage, "--wait"},
		{"ErrNotLoggedIn", nobody, []string{"send", "--to", "bob", "hi"}, exitAuth, "chat login"},
		{"ErrTokenRefused", badToken, []string{"send", "--group", "g:abc", "hi"}, exitAuth, "chat login"},
		{"ErrUsageRefusedByServer", alice, []string{"group", "create", "team\u202e", "--members", "bob"}, exitUsage, "name"},
		{"ErrUnknownUser", alice, []string{"send", "--to", "carol", "hi"}, exitUnknown, "carol"},
		{"ErrUnknownGroup", alice, []string{"send", "--group", "g:doesnotexist", "hi"}, exitUnknown, "g:doesnotexist"},
		{"ErrUnknownHistory", alice, []string{"history", "--group", "g:doesnotexist"}, exitUnknown, "g:doesnotexist"},
		{"ErrServerDown", down, []string{"send", "--timeout", "1s", "--group", "g:abc", "hi"}, exitFailure, "cannot reach"},
		// issue 28: one kind of error, one code, and hints that name real flags.
		{"ErrUsageBadServerURL", alice, []string{"send", "--server", "ftp://chat.example.com", "--to", "bob", "hi"}, exitUsage, "--server"},
		{"ErrUsageBadServerEnv", &user{t: t, srv: srv, home: alice.home, env: []string{"CHAT_SERVER=http://"}}, []string{"ls"}, exitUsage, "CHAT_SERVER"},
		{"ErrUsageOverServerLimit", alice, []string{"send", "--to", "bob", strings.Repeat("x", 17<<10)}, exitUsage, "the limit is"},
		{"ErrUsageHistoryNoTarget", alice, []string{"history"}, exitUsage, "give --with USER or --group ID"},
		{"ErrUsagePresenceBoth", alice, []string{"presence", "--with", "bob", "--group", "g:abc"}, exitUsage, "give --with USER or --group ID, not both"},
		{"ErrUnknownHistoryUser", alice, []string{"history", "--with", "bobb"}, exitUnknown, `no user "bobb"`},
		{"ErrUnknownPresenceUser", alice, []string{"presence", "--with", "bobb"}, exitUnknown, `no user "bobb"`},
		{"ErrUnknownTailUser", alice, []string{"tail", "--with", "bobb"}, exitUnknown, `no user "bobb"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := c.u.run("", c.args...)
			if code != c.code || !strings.Contains(errOut, c.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d with %q", code, errOut, c.code, c.stderr)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Fatalf("want one line on stderr and nothing on stdout; got %q / %q", out, errOut)
			}
		})
	}
	t.Run("ErrUsageOverStdinLimit", func(t *testing.T) {
		out, errOut, code := alice.run(strings.Repeat("x", 4<<20+1), "send", "--to", "bob")
		if code != exitUsage || out != "" || !strings.Contains(errOut, "over 4 MiB") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2", code, out, errOut)
		}
	})
	t.Run("ErrWrongPasswordSaysNoMoreThanThat", func(t *testing.T) {
		// Right after chat login, "run chat login" is no advice.
		second := &user{t: t, srv: srv, home: t.TempDir()}
		out, errOut, code := second.run("not the password\n", "login", "alice", "--password-stdin")
		if code != exitAuth || out != "" || errOut != "chat login: wrong user or password for alice\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("ErrRateLimited", func(t *testing.T) {
		limited := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.SendRate = 1 }))
		carol := newUser(t, limited, "carol")
		newUser(t, limited, "dave")
		for i := 0; i < 10; i++ {
			// A hint longer than --timeout is not waited out: the exit says so.
			_, errOut, code := carol.run("", "send", "--timeout", "300ms", "--to", "dave", fmt.Sprint("burst ", i))
			if code == exitRateLimited {
				if !strings.Contains(errOut, "retry after") {
					t.Fatalf("no retry hint: %q", errOut)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		}
		t.Fatal("ten sends at once were never rate limited")
	})
}

// A scripted sender paces itself on the server's retry hints: --lines gets
// every line through a send rate far below the input's, each once and in order.
func TestSendLinesPacesOnRateLimit(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *node.Config) { c.SendRate = 20 }))
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	var in strings.Builder
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	out := alice.must(in.String(), "send", "--to", "bob", "--lines", "--message-id", "job-7")
	if n := strings.Count(out, "\n"); n != 70 {
		t.Fatalf("printed %d seq_nos for 70 lines:\n%s", n, out)
	}
	got := contents(t, bob.api(), wire.DirectConversationID("alice", "bob"))
	if len(got) != 70 || got[0] != "line 1" || got[69] != "line 70" {
		t.Fatalf("bob has %d messages: %q", len(got), got)
	}
	for i, c := range got {
		if c != fmt.Sprintf("line %d", i+1) {
			t.Fatalf("message %d is %q: out of order or duplicated", i+1, c)
		}
	}
	// The documented retry loop: the same ids again store nothing new.
	alice.must(in.String(), "send", "--to", "bob", "--lines", "--message-id", "job-7")
	if again := contents(t, bob.api(), wire.DirectConversationID("alice", "bob")); len(again) != 70 {
		t.Fatalf("rerun with the same --message-id: %d messages, want 70", len(again))
	}
}

func TestSendWaitRead(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")

	t.Run("OK", func(t *testing.T) {
		c := alice.cmd("send", "--to", "bob", "--wait", "read", "--timeout", "20s", "--json", "please read")
		var out bytes.Buffer
		stdout, _ := c.StdoutPipe()
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// The message is stored (its answer is printed) but chat keeps waiting.
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var resp wire.SendResponse
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		exited := make(chan error, 1)
		go func() { io.Copy(&out, stdout); exited <- c.Wait() }()
		select {
		case err := <-exited:
			t.Fatalf("chat returned before bob read: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		// Delivered is not read.
		if _, err := bob.api().MarkDelivered(context.Background(), conv, resp.SeqNo); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			t.Fatalf("chat returned on delivered: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		start := time.Now()
		if _, err := bob.api().MarkRead(context.Background(), conv, resp.SeqNo); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("chat failed: %v", err)
			}
			t.Logf("returned %v after the read", time.Since(start))
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			t.Fatal("chat did not return after bob read")
		}
	})
	t.Run("ErrTimeout", func(t *testing.T) {
		out, errOut, code := alice.run("", "send", "--to", "bob", "--wait", "read", "--timeout", "300ms", "unread")
		if code != exitFailure || !strings.Contains(errOut, "not read within") || strings.TrimSpace(out) == "" {
			t.Fatalf("exit %d, %q / %q", code, out, errOut)
		}
	})
}

func TestHistoryAndLs(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	var in strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&in, "m%02d\n", i)
	}
	alice.must(in.String(), "send", "--to", "bob", "--lines")

	t.Run("OKHistory", func(t *testing.T) {
		out := bob.must("", "history", "--with", "alice", "--limit", "10", "--json")
		var ms []wire.Message
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var m wire.Message
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		if len(ms) != 10 || ms[0].Content != "m16" || ms[9].Content != "m25" {
			t.Fatalf("history %+v", ms)
		}
		older := bob.must("", "history", "--with", "alice", "--limit", "10", "--before", fmt.Sprint(ms[0].SeqNo))
		if !strings.Contains(older, "m06") || !strings.Contains(older, "m15") || strings.Contains(older, "m16") {
			t.Fatalf("older page:\n%s", older)
		}
	})
	t.Run("OKLs", func(t *testing.T) {
		out := bob.must("", "ls", "--json")
		var e wire.InboxEntry
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &e); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if e.Peer != "alice" || e.Unread != 25 || e.LastMessageBody != "m25" {
			t.Fatalf("inbox entry %+v", e)
		}
		if human := bob.must("", "ls"); !strings.Contains(human, "@alice") || !strings.Contains(human, "(25)") {
			t.Fatalf("ls:\n%s", human)
		}
	})
}

func TestTail(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	carol := newUser(t, srv, "carol")
	conv := wire.DirectConversationID("alice", "bob")
	alice.must("", "send", "--to", "bob", "waiting for you")

	c := bob.cmd("tail", "--with", "alice", "--json")
	stdout, _ := c.StdoutPipe()
	var errOut bytes.Buffer
	c.Stderr = &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	next := func() wire.Message {
		t.Helper()
		got := make(chan wire.Message, 1)
		go func() {
			var m wire.Message
			if lines.Scan() {
				json.Unmarshal(lines.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			t.Fatalf("tail printed nothing; stderr %q", errOut.String())
		}
		return wire.Message{}
	}
	// What was waiting comes first, then live messages; carol's are filtered out.
	if m := next(); m.Content != "waiting for you" {
		t.Fatalf("first line %+v", m)
	}
	carol.must("", "send", "--to", "bob", "not for this tail")
	resp := alice.must("", "send", "--to", "bob", "--json", "live")
	if m := next(); m.Content != "live" || m.SenderID != "alice" || m.ConversationID != conv {
		t.Fatalf("second line %+v", m)
	}
	var sent wire.SendResponse
	json.Unmarshal([]byte(resp), &sent)
	// tail acked: alice sees the message delivered.
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := alice.api().Status(context.Background(), conv)
		if err != nil {
			t.Fatal(err)
		}
		delivered := false
		for _, m := range st.Members {
			if m.UserID == "bob" && m.LastDeliveredSeq >= sent.SeqNo {
				delivered = true
			}
		}
		if delivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's delivered boundary never reached %d: %+v", sent.SeqNo, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Interrupted, tail ends normally.
	c.Process.Signal(syscall.SIGINT)
	if err := c.Wait(); err != nil {
		t.Fatalf("tail after SIGINT: %v; stderr %q", err, errOut.String())
	}
}

func TestGroup(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	newUser(t, srv, "carol")
	gid := strings.TrimSpace(alice.must("", "group", "create", "ops team", "--members", "bob"))
	if !strings.HasPrefix(gid, wire.GroupPrefix) {
		t.Fatalf("group id %q", gid)
	}
	alice.must("", "group", "add", gid, "carol")
	show := alice.must("", "group", "show", gid)
	for _, u := range []string{"alice", "bob", "carol"} {
		if !strings.Contains(show, u) {
			t.Fatalf("show lacks %s:\n%s", u, show)
		}
	}
	bob.must("", "send", "--group", gid, "hi all")
	alice.must("", "group", "remove", gid, "carol")
	if _, errOut, code := bob.run("", "group", "add", gid, "carol"); code == 0 || errOut == "" {
		t.Fatalf("a non-admin added a member: exit %d", code)
	}
	if _, _, code := alice.run("", "group", "create", "x"); code != exitUsage {
		t.Fatalf("create without members: exit %d", code)
	}
}

func TestHelp(t *testing.T) {
	srv := servertest.Start(t)
	u := &user{t: t, srv: srv, home: t.TempDir()}
	out := u.must("", "--help")
	for _, code := range []string{"0  ", "1  ", "2  ", "3  ", "4  ", "5  ", "130  "} {
		if !strings.Contains(out, code) {
			t.Fatalf("chat --help does not document exit code %q", code)
		}
	}
	for _, c := range commands {
		out := u.must("", c.name, "--help")
		if !strings.Contains(out, "Example") {
			t.Errorf("chat %s --help has no examples:\n%s", c.name, out)
		}
	}
}

// The program runs in-process too (run is what main calls).
func TestRunInProcess(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"send", "--bogus"}, strings.NewReader(""), &out, &errOut)
	if code != exitUsage || !strings.HasPrefix(errOut.String(), "chat send: ") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"help", "send"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), "--message-id") {
		t.Fatalf("help send: exit %d, %q", code, out.String())
	}
}

// chat send must start fast (under 30 ms in all), so no linked package may do
// heavy work at init: go-runewidth v0.0.27 once spent 40-140 ms building a
// width table there. What init builds is counted in bytes allocated, which
// do not change with the machine's load (init's clock time did: 3 ms quiet,
// over 15 on a busy machine); the time to start is chatbench cli's figure.
func TestStartupInitIsCheap(t *testing.T) {
	const limit = 1 << 20 // bytes one package may allocate in init
	c := exec.Command(chatBin, "--help")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var errOut bytes.Buffer
	c.Stderr = &errOut
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	read := 0
	sc := bufio.NewScanner(&errOut)
	for sc.Scan() {
		// init github.com/x/y @1.2 ms, 139 ms clock, 18776 bytes, 44 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," {
			continue
		}
		read++
		var n int
		fmt.Sscan(f[7], &n)
		if n > limit {
			t.Errorf("package %s allocates %d bytes in init on every start of chat (%s ms clock), over %d", f[1], n, f[5], limit)
		}
	}
	if read == 0 {
		t.Fatal("no init trace read")
	}
}

func TestAttachment(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	file := filepath.Join(t.TempDir(), "report.txt")
	if err := os.WriteFile(file, []byte("week 47: all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		alice.must("", "send", "--to", "bob", "--attach", file, "the report")
		alice.must("", "send", "--to", "bob", "--attach", file) // no text
		out := bob.must("", "history", "--with", "alice", "--json")
		var ms []wire.Message
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var m wire.Message
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		if len(ms) != 2 || ms[0].Content != "the report" || ms[0].Attachment == "" || ms[1].Content != "" || ms[1].Attachment == "" {
			t.Fatalf("bob's history %+v", ms)
		}
		saved := filepath.Join(t.TempDir(), "saved.txt")
		bob.must("", "media", ms[0].Attachment, "-o", saved)
		if got, _ := os.ReadFile(saved); string(got) != "week 47: all green\n" {
			t.Fatalf("downloaded %q", got)
		}
		if ms[0].AttachmentInfo == nil || *ms[0].AttachmentInfo != (wire.AttachmentInfo{Name: "report.txt", Type: "text/plain", Size: 19}) {
			t.Fatalf("attachment described as %+v", ms[0].AttachmentInfo)
		}
		if human := bob.must("", "history", "--with", "alice"); !strings.Contains(human, "[attachment report.txt, text/plain, 19 B media/alice/") {
			t.Fatalf("history shows no attachment:\n%s", human)
		}
	})
	t.Run("ErrNoFile", func(t *testing.T) {
		_, errOut, code := alice.run("", "send", "--to", "bob", "--attach", "/nonexistent/x.png", "hi")
		if code != exitUsage || !strings.Contains(errOut, "--attach") {
			t.Fatalf("exit %d %q", code, errOut)
		}
	})
	t.Run("ErrWithLines", func(t *testing.T) {
		if _, _, code := alice.run("a\n", "send", "--to", "bob", "--lines", "--attach", file); code != exitUsage {
			t.Fatalf("exit %d", code)
		}
	})
}

// runApp runs chat in-process as u, with stdin and the environment the test
// gives, until it ends or interruptAfter has passed (then ctx is cancelled,
// as SIGINT does in main); the run must end within 10 s of that.
func (u *user) runApp(a *app, interruptAfter time.Duration, args ...string) (stdout, stderr string, code int) {
	u.t.Helper()
	var out, errOut bytes.Buffer
	a.stdout, a.stderr = &out, &errOut
	env := map[string]string{"CHAT_HOME": u.home, "CHAT_SERVER": u.srv.URL}
	a.getenv = func(k string) string { return env[k] }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- a.main(ctx, args) }()
	time.AfterFunc(interruptAfter, cancel)
	select {
	case code = <-done:
	case <-time.After(interruptAfter + 10*time.Second):
		u.t.Fatalf("chat %v still runs 10 s after Ctrl-C; stderr %q", args, errOut.String())
	}
	return out.String(), errOut.String(), code
}

// Issue 28: Ctrl-C while chat waits for the terminal ends the command at
// once with exit 130, and sends nothing.
func TestInterruptedReads(t *testing.T) {
	srv := servertest.Start(t)
	alice, bob := newUser(t, srv, "alice"), newUser(t, srv, "bob")
	conv := wire.DirectConversationID("alice", "bob")
	t.Run("ErrSendReadingTheMessage", func(t *testing.T) {
		alice.must("", "send", "--to", "bob", "before")
		for _, args := range [][]string{{"send", "--to", "bob"}, {"send", "--to", "bob", "--lines"}} {
			pr, pw := io.Pipe() // typed text that never ends
			defer pw.Close()
			go pw.Write([]byte("half a mess"))
			out, errOut, code := alice.runApp(&app{stdin: pr}, 300*time.Millisecond, args...)
			if code != exitInterrupted || out != "" || errOut != "chat send: interrupted\n" {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want 130 and \"interrupted\"", args, code, out, errOut)
			}
		}
		if got := contents(t, bob.api(), conv); len(got) != 1 {
			t.Fatalf("bob has %q", got)
		}
	})
	t.Run("ErrPasswordPrompt", func(t *testing.T) {
		for _, args := range [][]string{{"login", "alice"}, {"register", "carol"}} {
			typed := make(chan []byte) // no line is ever typed
			a := &app{stdin: strings.NewReader(""),
				stdinTTY:     func() (uintptr, bool) { return 0, true },
				readPassword: func(uintptr) ([]byte, error) { return <-typed, nil }}
			out, errOut, code := alice.runApp(a, 300*time.Millisecond, args...)
			want := "Password: \nchat " + args[0] + ": interrupted\n"
			if code != exitInterrupted || out != "" || errOut != want {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q; want 130 and %q", args, code, out, errOut, want)
			}
		}
	})
}
