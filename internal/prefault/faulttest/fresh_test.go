package faulttest_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/chatterm/chat/internal/prefault/faulttest"
)

// The test runs in a child of this process, with the environment given.
func TestInFreshProcessRunsInAChild(t *testing.T) {
	parent := strconv.Itoa(os.Getpid())
	faulttest.InFreshProcess(t, []string{"FAULTTEST_PARENT=" + parent}, func(t *testing.T) {
		if got, want := os.Getenv("FAULTTEST_PARENT"), strconv.Itoa(os.Getppid()); got != want {
			t.Errorf("the test ran with FAULTTEST_PARENT=%q, its parent is %s", got, want)
		}
	})
}

// A skip in the fresh process skips the test here too, rather than
// passing it untested.
func TestInFreshProcessSkipsWhatTheChildSkips(t *testing.T) {
	var skipped *testing.T
	t.Run("skipped", func(t *testing.T) {
		skipped = t
		faulttest.InFreshProcess(t, nil, func(t *testing.T) {
			t.Skip("skipped in the fresh process")
		})
		t.Error("the fresh process skipped the test and this one went on")
	})
	if !skipped.Skipped() {
		t.Error("the fresh process skipped the test and this one did not")
	}
}

// Subtests are run by their own name, so only the one asked for runs.
func TestInFreshProcessRunsASubtest(t *testing.T) {
	for _, name := range []string{"a b", "c.d"} {
		t.Run(name, func(t *testing.T) {
			parent := strconv.Itoa(os.Getpid())
			faulttest.InFreshProcess(t, []string{"FAULTTEST_PARENT=" + parent}, func(t *testing.T) {
				if got, want := os.Getenv("FAULTTEST_PARENT"), strconv.Itoa(os.Getppid()); got != want {
					t.Errorf("the test ran with FAULTTEST_PARENT=%q, its parent is %s", got, want)
				}
			})
		})
	}
}
