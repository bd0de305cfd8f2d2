package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatterm/chat/internal/testenv"
)

// The chaos run at a small size: three real chatserver processes on a
// redis-server of the run's own and moto, through every fault of the
// schedule, the Redis outage cut short. It fails when one acknowledged message is lost, duplicated,
// reordered or late on any device.
func TestChaosSmall(t *testing.T) {
	moto := testenv.DynamoEndpoint(t)
	testenv.RedisAddr(t) // services.sh has installed redis-server when this is set
	redisServer, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server: %v (scripts/services.sh installs it)", err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "github.com/chatterm/chat/cmd/chatserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build chatserver: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--moto", moto, "--chatserver", filepath.Join(bin, "chatserver"), "--redis-server", redisServer,
		"--dir", t.TempDir(), "--users", "6", "--devices", "2", "--duration", "20s", "--bound", "30s",
		"--redis-outage", "6s"}
	err = run(context.Background(), args, &stdout, &stderr)
	t.Logf("chaos:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, want := range []string{"lost                 0", "duplicated           0", "reordered            0", "CLIENT KILL", "FLUSHALL", "killed -9", "DynamoDB hung", "Redis stopped for 6s",
		"held before Redis returned"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
