package faulttest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// freshEnv names the test a re-executed test binary is to run as the fresh
// process's.
const freshEnv = "FAULTTEST_FRESH"

// InFreshProcess runs test in a process of its own: the test binary again,
// running only t's test, with env added to its environment (GOGC=off, say).
// Memory that no other test, and no earlier run of the runtime's or a
// package's lazy set-up, has written is what a count of page faults needs.
//
// In that process InFreshProcess calls test with t. In this one it waits
// for the process and logs its output, fails t if the process failed or
// did not run the test, and skips t if the process skipped it (no counter,
// no populate).
func InFreshProcess(t *testing.T, env []string, test func(t *testing.T)) {
	t.Helper()
	if os.Getenv(freshEnv) == t.Name() {
		test(t)
		return
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(parts, "/"), "-test.v")
	cmd.Env = append(append(os.Environ(), freshEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("the fresh process:\n%s", out)
	if err != nil {
		t.Fatalf("the fresh process: %v", err)
	}
	switch {
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skip("the fresh process skipped the test")
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("the fresh process did not run %s", t.Name())
	}
}
