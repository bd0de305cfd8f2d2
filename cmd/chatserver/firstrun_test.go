package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fresh server says how its first account (the admin) is made, and how the
// others register in its registration mode; once claimed, it says nothing.
// Shutting down is logged too.
func TestFirstRunSaysHowToRegister(t *testing.T) {
	dir := t.TempDir()
	start := func() (*Main, *bytes.Buffer) {
		t.Helper()
		logs := new(bytes.Buffer)
		m := NewMain(logs)
		if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" }); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return m, logs
	}
	m, buf := start()
	logs := buf.String()
	for _, want := range []string{"no account yet", "chat --server http://" + m.Addr() + " register NAME", "chat invite"} {
		if !strings.Contains(logs, want) {
			t.Errorf("a fresh server's log lacks %q:\n%s", want, logs)
		}
	}
	resp, err := http.Post("http://"+m.Addr()+"/v1/register", "application/json",
		strings.NewReader(`{"user_id":"alice","password":"password-alice"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("register the first account: %d", resp.StatusCode)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Shutting down is said, at its start and its end.
	for _, want := range []string{"chatserver shutting down", "chatserver stopped"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the log of a shutdown lacks %q:\n%s", want, buf.String())
		}
	}
	m, buf = start()
	defer m.Close()
	if logs := buf.String(); strings.Contains(logs, "no account yet") {
		t.Fatalf("a server with an admin still gives the first-run hint:\n%s", logs)
	}
}

// A data directory that cannot be one is said as such, naming the flag.
func TestDataDirThatIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", file}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("started on a data directory that is a file")
	}
	if !strings.Contains(err.Error(), "--data-dir "+file+": cannot make it a directory") {
		t.Fatalf("error = %v", err)
	}
}
