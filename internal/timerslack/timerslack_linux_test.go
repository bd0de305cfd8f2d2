//go:build linux && cgo

package timerslack

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every thread of the process has the slack, the runtime's own included:
// the constructor ran before any of them started.
func TestEveryThreadHasTheSlack(t *testing.T) {
	if os.Getenv("CHAT_TIMER_SLACK_US") != "" {
		t.Skip("CHAT_TIMER_SLACK_US is set: the slack is the environment's")
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 2 {
		t.Fatalf("%d threads: the runtime's own are missing", len(tasks))
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns")
		if err != nil {
			t.Skipf("the kernel does not show a thread's slack: %v", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if time.Duration(ns) != time.Millisecond {
			t.Errorf("thread %s has a timer slack of %v, want 1ms", task.Name(), time.Duration(ns))
		}
	}
	if got := Slack(); got != time.Millisecond {
		t.Errorf("Slack() = %v, want 1ms", got)
	}
}

// CHAT_TIMER_SLACK_US sets another slack; 0 leaves the one inherited.
func TestSlackFromTheEnvironment(t *testing.T) {
	if os.Getenv("TIMERSLACK_CHILD") != "" {
		os.Stdout.WriteString("slack=" + strconv.FormatInt(int64(Slack()), 10) + "\n")
		return
	}
	for _, c := range []struct {
		env  string
		want time.Duration
	}{
		{"2500", 2500 * time.Microsecond},
		{"0", 70 * time.Microsecond}, // the forking thread's, below
		{"x", 70 * time.Microsecond},
	} {
		got := childSlack(t, "CHAT_TIMER_SLACK_US="+c.env)
		if got != c.want {
			t.Errorf("CHAT_TIMER_SLACK_US=%s: the child's slack is %v, want %v", c.env, got, c.want)
		}
	}
}

// childSlack runs this test again in a new process, forked from a thread
// whose slack is 70 µs, and returns the slack the child reports.
func childSlack(t *testing.T, env string) time.Duration {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result)
	go func() {
		// The thread is left locked, so ends with the goroutine: its
		// slack is not handed to other goroutines.
		runtime.LockOSThread()
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, 70_000, 0); e != 0 {
			done <- result{err: e}
			return
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestSlackFromTheEnvironment$")
		cmd.Env = append(os.Environ(), "TIMERSLACK_CHILD=1", env)
		out, err := cmd.Output()
		done <- result{out, err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatalf("%s: %v", env, r.err)
	}
	for line := range strings.Lines(string(r.out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "slack="); ok {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return time.Duration(ns)
		}
	}
	t.Fatalf("%s: the child said no slack: %q", env, r.out)
	return 0
}
