package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Each acknowledged message counts in the window of the last fault that began
// before its ack, and a second device's delay shows as that window's worst, not
// only overall. A message acknowledged during the Redis outage that reaches a
// device more than outageLimit later is counted slow, which fails the run.
func TestReportPerFaultWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	faults := []faultRun{
		{name: "flush", start: at(10), end: at(10)},
		{name: "outage", start: at(20), end: at(40), outage: true},
	}
	pop := &population{members: map[string][]string{"dm": {"a", "b"}}}
	led := &ledger{acks: []acked{
		{conv: "dm", id: "m1", sender: "a", seq: 1, index: 1, at: at(5)},
		{conv: "dm", id: "m2", sender: "a", seq: 2, index: 2, at: at(12)},
		{conv: "dm", id: "m3", sender: "a", seq: 3, index: 3, at: at(25)},
	}}
	dev := func(name, user string, got map[int64]received) *device {
		return &device{name: name, user: user, got: map[string]map[int64]received{"dm": got}}
	}
	devices := []*device{
		dev("a/0", "a", map[int64]received{1: {"m1", at(5.1)}, 2: {"m2", at(12.1)}, 3: {"m3", at(25.1)}}),
		dev("b/0", "b", map[int64]received{1: {"m1", at(5.2)}, 2: {"m2", at(12.2)}, 3: {"m3", at(31)}}),
		// b's second device: m2 late after the flush, m3 after Redis returned.
		dev("b/1", "b", map[int64]received{1: {"m1", at(5.3)}, 2: {"m2", at(16)}, 3: {"m3", at(41)}}), // after Redis returned: 16 s, past outageLimit
	}
	r := (&report{cfg: config{bound: time.Minute, redisOutage: 20 * time.Second, strictOutage: true}, faults: faults, faultsEnd: at(40)}).check(pop, led, devices)

	want := []struct {
		acked, delivered int
		worst            time.Duration
		who              string
	}{
		{1, 3, 300 * time.Millisecond, "b/1: dm seq 1"},
		{1, 3, 4 * time.Second, "b/1: dm seq 2"},
		{1, 3, 16 * time.Second, "b/1: dm seq 3"},
	}
	if len(r.windows) != len(want) {
		t.Fatalf("%d windows, want %d", len(r.windows), len(want))
	}
	for i, w := range want {
		got := r.windows[i]
		if got.acked != w.acked || got.delivered != w.delivered || got.worst.Round(time.Millisecond) != w.worst || got.worstWhat != w.who {
			t.Errorf("window %d (%s): acked %d, deliveries %d, worst %s on %q; want %d, %d, %s on %q",
				i, got.name, got.acked, got.delivered, got.worst, got.worstWhat, w.acked, w.delivered, w.worst, w.who)
		}
	}
	out := r.windows[2]
	if out.inOutage != 3 || out.heldDuring != 2 || out.outageWorst.Round(time.Millisecond) != 6*time.Second {
		t.Errorf("outage: %d deliveries, %d held during it, worst %s; want 3, 2, 6s", out.inOutage, out.heldDuring, out.outageWorst)
	}
	if len(r.slowInOutage) != 1 || !strings.Contains(r.slowInOutage[0], "b/1") {
		t.Errorf("slow in the outage: %q; want b/1's m3", r.slowInOutage)
	}
	if err := r.verdict(); err == nil || !strings.Contains(err.Error(), "slow in the Redis outage") {
		t.Errorf("verdict: %v; want the slow delivery named", err)
	}
	r.cfg.strictOutage = false
	if err := r.verdict(); err != nil {
		t.Errorf("verdict without --strict-outage: %v; want the slow delivery reported, not failed", err)
	}
}

// A node's log tells its backend outages: from an "answers again" line's
// out_for back to the first failure, a WARN never answered to the run's end,
// and one a restart ("chatserver listening") cut short to the restart.
func TestReadOutages(t *testing.T) {
	log := `time=2026-11-26T05:57:53.419Z level=WARN msg="dynamodb is failing: calls are refused or time out" service=dynamodb last_error="operation error DynamoDB: UpdateItem, context deadline exceeded" why="3 of 273 calls failed within 30s"
time=2026-11-26T05:57:58.634Z level=INFO msg="dynamodb answers again" service=dynamodb out_for=5.215s failed_calls=1 refused_calls=231
time=2026-11-26T05:58:01.000Z level=WARN msg="redis is failing: calls are refused or time out" service=redis last_error="dial tcp: connection refused"
time=2026-11-26T05:58:03.000Z level=INFO msg="chatserver listening" addr=127.0.0.1:1 node=n2
time=2026-11-26T05:58:04.020Z level=WARN msg="dynamodb is failing: calls are refused or time out" service=dynamodb last_error="operation error DynamoDB: Query, request canceled, context deadline exceeded"
`
	path := filepath.Join(t.TempDir(), "n2.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, "2026-11-26T"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	end := at("05:58:30")
	got, err := readOutages("n2", path, end)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b backendOutage) int { return a.start.Compare(b.start) })
	want := []backendOutage{
		{"n2", "dynamodb", at("05:57:53.419"), at("05:57:58.634")},
		{"n2", "redis", at("05:58:01"), at("05:58:03")},
		{"n2", "dynamodb", at("05:58:04.02"), end},
	}
	// The first: out_for (5.215 s) back from its INFO line, not the WARN's time.
	want[0].start = want[0].end.Add(-5215 * time.Millisecond)
	if !slices.Equal(got, want) {
		t.Fatalf("outages\n got %v\nwant %v", got, want)
	}
}

// The bound counts from the later of a message's ack and the faults' end,
// and moves past a backend outage a node logged before it ran out: a
// message held 25 s after the faults is late with a 17 s bound, and not
// when the store was out on a node until 10 s after the faults; one held
// 30 s after is late either way.
func TestLateCountsFromTheStoreAnswering(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	faults := []faultRun{{name: "flush", start: at(10), end: at(12)}}
	pop := &population{members: map[string][]string{"dm": {"a", "b"}}}
	led := &ledger{acks: []acked{
		{conv: "dm", id: "m1", sender: "a", seq: 1, index: 1, at: at(11)},
		{conv: "dm", id: "m2", sender: "a", seq: 2, index: 2, at: at(11.5)},
	}}
	devices := []*device{
		{name: "a/0", user: "a", got: map[string]map[int64]received{"dm": {1: {"m1", at(11)}, 2: {"m2", at(11.5)}}}},
		{name: "b/0", user: "b", got: map[string]map[int64]received{"dm": {1: {"m1", at(12 + 25)}, 2: {"m2", at(12 + 40)}}}},
	}
	base := report{cfg: config{bound: 17 * time.Second}, faults: faults, faultsEnd: at(12)}
	r := base.check(pop, led, devices)
	if len(r.late) != 2 {
		t.Fatalf("no outage logged: late %q; want both", r.late)
	}
	base.outages = []backendOutage{{node: "n1", service: "dynamodb", start: at(15), end: at(22)}}
	r = base.check(pop, led, devices)
	if len(r.late) != 1 || !strings.Contains(r.late[0], "seq 2") {
		t.Fatalf("the store out until 10 s after the faults: late %q; want only seq 2 (40 s after them)", r.late)
	}
	// An outage that began after the bound had run out moves nothing.
	base.outages = []backendOutage{{node: "n1", service: "dynamodb", start: at(12 + 18), end: at(12 + 30)}}
	if r := base.check(pop, led, devices); len(r.late) != 2 {
		t.Fatalf("an outage after the bound: late %q; want both", r.late)
	}
}
