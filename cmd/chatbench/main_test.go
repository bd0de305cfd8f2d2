package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios run end to end against a real in-process server at a tiny size
// and report what they measured; figures themselves are not judged here.
func TestScenariosRunInProcess(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--duration", "500ms", "--users", "6", "--window", "4",
		"--groups", "5", "--fanout-duration", "300ms", "--idle-conns", "20", "--history-messages", "300", "--history-pages", "20",
		"--reconnect-clients", "5", "echo", "throughput", "latency", "fanout", "idle", "history", "reconnect"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep Report
	readJSON(t, out, &rep)
	for _, s := range []string{"echo", "throughput", "latency", "fanout", "idle", "history", "reconnect"} {
		if rep.Scenarios[s] == nil {
			t.Errorf("no %s result in the JSON", s)
		}
	}
	var thr ChatResult
	raw, _ := json.Marshal(rep.Scenarios["throughput"])
	json.Unmarshal(raw, &thr)
	if thr.Delivered == 0 || thr.Lost != 0 || thr.Disorder != 0 || thr.Acked < thr.Delivered {
		t.Errorf("throughput: %+v: want deliveries, all acked, none lost or out of order", thr)
	}
	for _, ratio := range []string{"share of echo rate, one frame per message", "share of echo rate, frames joined up to"} {
		if !strings.Contains(stdout.String(), ratio) {
			t.Errorf("table lacks %q:\n%s", ratio, stdout.String())
		}
	}
	for _, s := range []string{"echo_joined", "throughput_unjoined"} {
		var r ChatResult
		raw, _ := json.Marshal(rep.Scenarios[s])
		json.Unmarshal(raw, &r)
		if r.Delivered == 0 || r.Lost != 0 {
			t.Errorf("%s: %+v: want deliveries, none lost (the like-for-like runs)", s, r)
		}
	}
}

// With a rate, the echo is also offered it open loop, as latency offers it to
// the chat server: every message comes back, and the table has its row.
func TestEchoOpenLoop(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--json", out, "--duration", "300ms", "--users", "4", "--window", "2", "--rates", "200,400", "echo"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep Report
	readJSON(t, out, &rep)
	var runs []ChatResult
	raw, _ := json.Marshal(rep.Scenarios["echo_open_loop"])
	json.Unmarshal(raw, &runs)
	if len(runs) != 2 {
		t.Fatalf("echo_open_loop: %d runs, want one per rate (2)", len(runs))
	}
	for i, r := range runs {
		if r.Delivered == 0 || r.Lost != 0 || r.Disorder != 0 || r.Offered != []float64{200, 400}[i] {
			t.Errorf("run %d: %+v: want echoes at the offered rate, none lost or out of order", i, r)
		}
	}
	for _, row := range []string{"echo@200", "echo@400"} {
		if !strings.Contains(stdout.String(), row) {
			t.Errorf("table lacks %s:\n%s", row, stdout.String())
		}
	}
}

// Acking after every message, the acks a batch of deliveries asks for go out
// together; every message still ends up acked, none lost or out of order.
func TestThroughputAckEveryMessage(t *testing.T) {
	thr := runThroughput(t, "--ack-interval", "0")
	if thr.Delivered == 0 || thr.Lost != 0 || thr.Disorder != 0 || thr.Acked != thr.Delivered+thr.Earlier {
		t.Errorf("throughput: %+v: want deliveries, each acked once, none lost or out of order", thr)
	}
}

// runThroughput runs the throughput scenario at a small size on an in-process
// server with the extra flags, and returns its result from the JSON report.
func runThroughput(t *testing.T, flags ...string) ChatResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := append([]string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--duration", "500ms", "--users", "6", "--window", "8"}, flags...)
	if err := run(context.Background(), append(args, "throughput"), &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep struct{ Scenarios map[string]ChatResult }
	readJSON(t, out, &rep)
	return rep.Scenarios["throughput"]
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nonsense"},
		{"--users", "3", "throughput"},
		{"--groups", "1", "fanout"},
		{"--server", "http://127.0.0.1:1", "--inproc", "idle"},
		{"--size", "5", "throughput"},
		{"--client-batch", "0", "throughput"},
		{"--server-max-in-flight", "-1", "throughput"},
		{"--server-redeliver-after", "-1s", "fanout"},
		{"--fanout-ack-interval", "0", "fanout"},
		{"--history-warmup", "-1", "history"},
		{"--history-pages", "0", "history"},
		{"--cli-runs", "0", "cli"},
		{"--tui-runs", "0", "tui"},
		{"--tui-messages", "0", "tui"},
		{"--chat-bin", "/nonexistent/chat", "cli"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("chatbench %q: no error", args)
		}
	}
}

// An unreachable --server fails the scenario with an error rather than hanging.
func TestUnreachableServer(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--server", "http://127.0.0.1:1", "--users", "2", "--duration", "100ms", "throughput"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "throughput") {
		t.Fatalf("got %v, want the throughput scenario to fail", err)
	}
}

// Sends the server refuses as overloaded are sent again after the hint, as the
// real client does, and still arrive once, in order.
func TestOverloadedSendsAreSentAgain(t *testing.T) {
	thr := runThroughput(t, "--server-max-in-flight", "2")
	if thr.Retried == 0 {
		t.Fatalf("throughput: %+v: no send was refused, so none was sent again (is --server-max-in-flight passed on?)", thr)
	}
	if thr.Errors != 0 || thr.Lost != 0 || thr.Disorder != 0 || thr.Stored != thr.Sent || thr.Delivered != thr.Stored {
		t.Fatalf("throughput: %+v: want every send stored and delivered once, in order, without errors", thr)
	}
}

// The cli scenario runs the real chat binary once per message and reports both
// command shapes; every run must have printed the next seq_no.
func TestCLIScenario(t *testing.T) {
	bin := buildChat(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--chat-bin", bin, "--cli-runs", "5", "cli"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep struct{ Scenarios struct{ CLI CLIResult } }
	readJSON(t, out, &rep)
	for _, shape := range []string{"send --to", "send --group"} {
		if p := rep.Scenarios.CLI.Send[shape]; p.Count != 5 || p.P50 <= 0 {
			t.Errorf("%s: %+v, want 5 timed runs", shape, p)
		}
	}
}

// A binary that does not answer as chat does fails the scenario.
func TestCLIScenarioChecksTheOutput(t *testing.T) {
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("no echo binary")
	}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"--inproc", "--tmp", t.TempDir(), "--chat-bin", echo, "--cli-runs", "2", "cli"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not a conversation id") {
		t.Fatalf("got %v, want the cli scenario to refuse what echo printed", err)
	}
}

// The tui scenario starts the real chat binary in tmux on a seeded cache and
// reads both figures; each start must have painted the newest conversation and
// logged its inbox load.
func TestTUIScenario(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("the tui scenario needs tmux on PATH (apt-get install tmux)")
	}
	bin := buildChat(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--tmp", t.TempDir(), "--json", out, "--chat-bin", bin, "--tui-messages", "600", "--tui-runs", "3", "tui"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep struct{ Scenarios struct{ TUI TUIResult } }
	readJSON(t, out, &rep)
	r := rep.Scenarios.TUI
	if r.Messages != 600 || r.InBinary.Count != 3 || r.OnScreen.Count != 3 || r.Baseline.Count != 3 || r.InBinary.P50 <= 0 || r.OnScreen.P50 < r.InBinary.P50 {
		t.Errorf("%+v: want 3 timed starts (and 3 of the shell) over 600 messages, the wall clock above the binary's own", r)
	}
}

// The tui-burst scenario end to end, small: every case sends its messages,
// sees the last one on the real TUI's screen (or in chat tail's pane), and
// reports a CPU figure and the lag.
func TestTUIBurstScenario(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("the tui-burst scenario needs tmux on PATH (apt-get install tmux)")
	}
	bin := buildChat(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--chat-bin", bin, "--tui-burst-history", "120",
		"--tui-burst-messages", "60", "--tui-burst-rate", "300", "tui-burst"}
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
	if len(r.Cases) != 12 || r.History != 120 || !r.LoadedAll || r.IdleSeconds != 10 {
		t.Fatalf("%+v: want 12 cases (2 conversations × chat, inbox, tail × burst, steady) over 120 messages loaded", r)
	}
	seen := map[string]bool{}
	for _, c := range r.Cases {
		seen[c.Conversation+"/"+c.View+"/"+c.Load] = true
		if c.Messages != 60 || c.SentPerSec <= 0 || c.LagMS < 0 {
			t.Errorf("%+v: want 60 messages sent and a lag from stored to on screen", c)
		}
	}
	if len(seen) != 12 {
		t.Errorf("cases %v: want each conversation, view and load once", seen)
	}
}

// buildChat builds the chat binary the cli and tui scenarios run.
func buildChat(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chat")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/chatterm/chat/cmd/chat").CombinedOutput(); err != nil {
		t.Fatalf("build chat: %v\n%s", err, out)
	}
	return bin
}

// readJSON decodes the report chatbench wrote to path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// A fanout run longer than the server's grace period: the delivery worker sends
// again what a connected receiver has not acked once the grace period is over,
// so the receivers ack, as the real client does, and then no message may come
// twice. Before they acked, every receiver got the first window again at the
// grace period, and a run shorter than it (CI's) never showed it.
func TestFanoutPastTheGracePeriod(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--inproc", "--tmp", t.TempDir(), "--json", out, "--server-redeliver-after", "300ms",
		"--groups", "5", "--fanout-senders", "1", "--fanout-duration", "1500ms", "--fanout-ack-interval", "50ms", "--window", "4", "fanout"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("chatbench: %v\n%s", err, stderr.String())
	}
	var rep struct{ Scenarios map[string][]FanoutResult }
	readJSON(t, out, &rep)
	if len(rep.Scenarios["fanout"]) != 1 {
		t.Fatalf("fanout: %+v: want one group's result", rep.Scenarios["fanout"])
	}
	r := rep.Scenarios["fanout"][0].Chat
	if r.Delivered == 0 || r.Lost != 0 || r.Disorder != 0 || r.Acked < r.Delivered {
		t.Fatalf("fanout: %+v: want deliveries, all acked, none lost, none twice", r)
	}
}
