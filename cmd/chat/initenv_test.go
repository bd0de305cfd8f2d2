package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Inside tmux, with standard output a terminal, no package initialiser of
// the real binary runs `tmux info` (lipgloss's package-level Writer did, on
// every start: internal/initenv). TTY_FORCE makes colorprofile treat the
// output as a terminal; the tmux on PATH is a script that notes each run.
func TestStartRunsNoTmuxBeforeMain(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho \"$@\" >> '" + ran + "'\necho '  Tc: (flag) true'\n"
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chatBin, "--help")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMUX=/tmp/tmux-1000/default,1,0", "TTY_FORCE=1", "TERM=xterm-256color", "CHAT_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chat --help: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Usage") && !strings.Contains(string(out), "usage") {
		t.Fatalf("chat --help printed no usage:\n%s", out)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("tmux ran before main: tmux %s", b)
	}
}
