package early

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestForTUI(t *testing.T) {
	for _, tc := range []struct {
		args []string
		tui  bool
	}{
		{[]string{"chat"}, true},
		{[]string{"/usr/local/bin/chat"}, true},
		{[]string{"chat", "send", "--to", "bob"}, false},
		{[]string{"chat", "--help"}, false},
		{[]string{"chat", "--home", "/tmp/x"}, false}, // runTUI starts it
	} {
		if got := ForTUI(tc.args); got != tc.tui {
			t.Errorf("ForTUI(%q) = %v, want %v", tc.args, got, tc.tui)
		}
	}
}

// The work runs once however often Start is called, and Done is closed
// only after it has returned.
func TestJobRunsOnceThenDone(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	j := NewJob(func() {
		runs.Add(1)
		<-release
	})
	select {
	case <-j.Done():
		t.Fatal("Done is closed before the job was started")
	default:
	}
	j.Start()
	j.Start()
	select {
	case <-j.Done():
		t.Fatal("Done is closed while the work is running")
	case <-time.After(10 * time.Millisecond):
	}
	close(release)
	select {
	case <-j.Done():
	case <-time.After(time.Minute):
		t.Fatal("Done was not closed within a minute of the work's end")
	}
	j.Start()
	if n := runs.Load(); n != 1 {
		t.Errorf("the work ran %d times, want once", n)
	}
}
