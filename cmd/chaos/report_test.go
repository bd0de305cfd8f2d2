package main

import (
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
