package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatterm/chat/server/dynamo"
	"github.com/chatterm/chat/server/sqlite"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"--addr", "127.0.0.1:0", "version"}} {
		var out, errOut bytes.Buffer
		m := NewMain(&errOut)
		m.Stdout = &out
		if err := m.ParseFlags(args, func(string) string { return "" }); err != errHelp {
			t.Fatalf("%v: %v, want the run to end with exit 0", args, err)
		}
		want := fmt.Sprintf("sqlite schema %d\ndynamodb schema %d\n", sqlite.SchemaVersion(), dynamo.SchemaVersion)
		if !strings.HasPrefix(out.String(), "chatserver dev\n") || !strings.HasSuffix(out.String(), want) || errOut.Len() > 0 {
			t.Fatalf("%v printed %q (stderr %q)", args, out.String(), errOut.String())
		}
	}
}

// The schema number reported is the one a new database gets.
func TestSQLiteSchemaVersionIsWhatOpenLeaves(t *testing.T) {
	data := t.TempDir()
	m := NewMain(&bytes.Buffer{})
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", data}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "chat.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != sqlite.SchemaVersion() || v < 1 {
		t.Fatalf("user_version %d, SchemaVersion %d", v, sqlite.SchemaVersion())
	}
}

// The real binary: the version set at build time, and flag mistakes exit 2
// with one line on stderr.
func TestBinaryVersionAndFlagErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "chatserver")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir} // no CHATSERVER_* from outside
		c.Dir = dir
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errOut.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), 0
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, code := run(args...)
		if code != 0 || !strings.HasPrefix(out, "chatserver 9.8.7-test\n") || !strings.Contains(out, "\nsqlite schema ") || errOut != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"--tls-cert", "cert.pem"},
		{"--tls-cert", "cert.pem", "--tls-key", "key.pem"}, // neither exists
		{"--acme-domain", "chat.example.com", "--tls-cert", "cert.pem", "--tls-key", "key.pem"},
		{"--acme-domain", "10.0.0.1"},
	} {
		out, errOut, code := run(args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "chatserver: ") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
}
