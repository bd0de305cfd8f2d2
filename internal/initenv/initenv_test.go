package initenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The package's init ran before this test: in a process started with TMUX,
// the variable is gone until Restore, then back with its value. The test
// starts itself again with TMUX set, and the child reports.
func TestRestoreGivesTmuxBack(t *testing.T) {
	if os.Getenv("INITENV_CHILD") != "" {
		if v, ok := os.LookupEnv("TMUX"); ok {
			t.Fatalf("before Restore TMUX=%q: package initialisers would see it", v)
		}
		Restore()
		if v := os.Getenv("TMUX"); v != "/tmp/tmux-1000/default,1,0" {
			t.Fatalf("after Restore TMUX=%q, want the value the process was started with", v)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreGivesTmuxBack$", "-test.v")
	cmd.Env = append(os.Environ(), "INITENV_CHILD=1", "TMUX=/tmp/tmux-1000/default,1,0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// Outside tmux there is nothing to give back: Restore sets no TMUX.
func TestRestoreOutsideTmuxSetsNothing(t *testing.T) {
	if os.Getenv("INITENV_CHILD") != "" {
		Restore()
		if v, ok := os.LookupEnv("TMUX"); ok {
			t.Fatalf("TMUX=%q after Restore in a process started without it", v)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreOutsideTmuxSetsNothing$", "-test.v")
	env := []string{"INITENV_CHILD=1"}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TMUX=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
