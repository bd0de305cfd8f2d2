//go:build linux && cgo

package timerslack

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Every thread of the process has the slack, the runtime's own included:
// the constructor ran before any of them started. Another thread's slack is
// shown only to a process with CAP_SYS_NICE; without it, threads of the
// test's own (locked goroutines, each reading its own) stand in.
func TestEveryThreadHasTheSlack(t *testing.T) {
	if os.Getenv("CHAT_TIMER_SLACK_US") != "" {
		t.Skip("CHAT_TIMER_SLACK_US is set: the slack is the environment's")
	}
	if got := Slack(); got != time.Millisecond {
		t.Errorf("Slack() = %v, want 1ms", got)
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
		if errors.Is(err, fs.ErrPermission) {
			t.Logf("another thread's slack is not shown here (%v): checking threads of the test's own", err)
			eachThreadsOwn(t)
			return
		}
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
}

// eachThreadsOwn has several goroutines, each locked to a thread while the
// others are, read their own thread's slack.
func eachThreadsOwn(t *testing.T) {
	const n = 8
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	release := make(chan struct{})
	slacks := make([]time.Duration, n)
	for i := range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			slacks[i] = Slack()
			ready.Done()
			<-release // held, so the others get threads of their own
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	for i, s := range slacks {
		if s != time.Millisecond {
			t.Errorf("thread %d of %d has a timer slack of %v, want 1ms", i, n, s)
		}
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
		{"-1", 70 * time.Microsecond},                   // strtoul's largest number
		{"1000001", 70 * time.Microsecond},              // above a second
		{"99999999999999999999", 70 * time.Microsecond}, // past unsigned long
	} {
		got := childSlack(t, "CHAT_TIMER_SLACK_US="+c.env)
		if got != c.want {
			t.Errorf("CHAT_TIMER_SLACK_US=%s: the child's slack is %v, want %v", c.env, got, c.want)
		}
		// What the constructor refuses, CheckEnv refuses: "0" is taken
		// and leaves the inherited slack.
		if taken := c.env == "0" || got != 70*time.Microsecond; taken != (CheckEnv(c.env) == nil) {
			t.Errorf("CHAT_TIMER_SLACK_US=%s: the constructor took it: %v, CheckEnv: %v", c.env, taken, CheckEnv(c.env))
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
		// The thread's own slack goes back before it is unlocked: the
		// thread may be the main one, which Go never ends.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		was := Slack()
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, 70_000, 0); e != 0 {
			done <- result{err: e}
			return
		}
		defer syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, uintptr(was), 0)
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
