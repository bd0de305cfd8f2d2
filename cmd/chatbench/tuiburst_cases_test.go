package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestParseBurstCases(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		got, err := parseBurstCases(" tail, open ")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !got[burstViewTail] || !got[burstViewOpen] {
			t.Errorf("views %v, want tail and open", got)
		}
	})
	for _, bad := range []string{"", ",", "tail,chat"} {
		t.Run("ErrInvalid "+bad, func(t *testing.T) {
			if _, err := parseBurstCases(bad); err == nil {
				t.Errorf("%q was taken", bad)
			}
		})
	}
}

// --tui-burst-cases tail runs chat tail's cases only, and --tail-cpuprofile
// gets a profile of it (written when ctrl+c stops it).
func TestTUIBurstTailOnly(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("the tui-burst scenario needs tmux on PATH (apt-get install tmux)")
	}
	bin := buildChat(t)
	dir := t.TempDir()
	out, prof := filepath.Join(dir, "out.json"), filepath.Join(dir, "tail.prof")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--chat-bin", bin, "--tui-burst-history", "0",
		"--tui-burst-messages", "40", "--tui-burst-rate", "300", "--tui-burst-cases", "tail", "--tail-cpuprofile", prof, "tui-burst"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Scenarios struct {
			TUIBurst TUIBurstResult `json:"tui-burst"`
		}
	}
	readJSON(t, out, &rep)
	r := rep.Scenarios.TUIBurst
	if len(r.Cases) != 4 {
		t.Fatalf("%+v: want 4 cases (2 conversations × burst, steady), all chat tail", r)
	}
	for _, c := range r.Cases {
		if c.View != "chat tail" || c.Messages != 40 {
			t.Errorf("%+v: want chat tail only, 40 messages", c)
		}
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("tail's CPU profile: %v (size %v); want one written", err, fi)
	}
}
