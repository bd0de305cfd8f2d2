package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/chatterm/chat/internal/testenv"
)

// The storm scenario at a small size on the test Redis (a shared one: the
// commands counted include other tests', which only this check tolerates):
// both runs, over three node processes and clients in three worker processes
// (at most 7 each; 20 is not a multiple of either), register every client and
// measure sends.
func TestStormScenario(t *testing.T) {
	addr := testenv.RedisAddr(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--tmp", t.TempDir(), "--json", out, "--storm-redis", addr, "--storm-clients", "20", "--storm-nodes", "3", "--storm-worker-clients", "7", "storm"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep Report
	readJSON(t, out, &rep)
	var runs []StormResult
	raw, _ := json.Marshal(rep.Scenarios["storm"])
	if err := json.Unmarshal(raw, &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Queue || !runs[1].Queue {
		t.Fatalf("storm runs = %+v, want one synchronous, then one through Kafka", runs)
	}
	for _, r := range runs {
		if r.Clients != 20 || r.Workers != 3 || r.Failed != 0 || r.HelloSeconds <= 0 || r.Registered < r.HelloSeconds || r.Commands <= 0 || r.PeakCmds <= 0 || r.Sends == 0 ||
			r.NodesCPU <= 0 || r.ClientsCPU <= 0 {
			t.Errorf("storm run %+v: want 20 clients in 3 processes, all with a hello and registered, Redis commands counted, sends measured, the nodes' and clients' CPU read", r)
		}
	}
}
