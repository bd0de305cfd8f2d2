package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
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
	if !strings.Contains(stdout.String(), "share of echo rate") {
		t.Errorf("table lacks the echo ratio:\n%s", stdout.String())
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
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Scenarios map[string]ChatResult }
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
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
		{"--history-warmup", "-1", "history"},
		{"--history-pages", "0", "history"},
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
