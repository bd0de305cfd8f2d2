package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CHAT_STARTTRACE: each step is a line of the wall clock in Unix µs, the
// ms since main, the process's CPU in ms, its minor page faults and the
// step, in order; unset, nothing is traced.
func TestStartTraceWritesTheSteps(t *testing.T) {
	if openStartTrace(func(string) string { return "" }, time.Now()) != nil {
		t.Fatal("a trace opened with CHAT_STARTTRACE unset")
	}
	path := filepath.Join(t.TempDir(), "trace")
	before := time.Now()
	tr := openStartTrace(func(k string) string {
		if k == "CHAT_STARTTRACE" {
			return path
		}
		return ""
	}, before)
	tr.mark("runTUI")
	tr.mark("session opened")
	tr.close()
	tr.mark("after close") // nothing, and no panic

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"main", "runTUI", "session opened"}
	if len(lines) != len(want) {
		t.Fatalf("trace:\n%s\nwant the steps %q", b, want)
	}
	prev := before.UnixMicro()
	for i, line := range lines {
		f := strings.SplitN(line, " ", 8)
		if len(f) != 8 || f[2] != "ms" || f[4] != "cpu-ms" || f[6] != "faults" || f[7] != want[i] {
			t.Fatalf("line %d %q: want \"<unix µs> <ms since main> ms <cpu> cpu-ms <faults> faults %s\"", i, line, want[i])
		}
		if cpu, err := strconv.ParseFloat(f[3], 64); err != nil || cpu <= 0 {
			t.Fatalf("line %d %q: CPU %s not a positive number of ms", i, line, f[3])
		}
		if n, err := strconv.Atoi(f[5]); err != nil || n <= 0 {
			t.Fatalf("line %d %q: page faults %s not a positive count", i, line, f[5])
		}
		us, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || us < prev {
			t.Fatalf("line %d %q: wall clock %s not a Unix µs at or after the one before (%d)", i, line, f[0], prev)
		}
		prev = us
	}
}

// The real binary traces from main on.
func TestStartTraceFromTheBinary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(chatBin, "--help")
	cmd.Env = append(os.Environ(), "CHAT_STARTTRACE="+path, "CHAT_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chat --help: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(b)); len(f) != 8 || f[7] != "main" {
		t.Fatalf("trace of chat --help: %q, want one line for main", b)
	}
}
