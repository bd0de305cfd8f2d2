package main

import "testing"

func TestBurstOnlyPicksCases(t *testing.T) {
	o, err := parseBurstOnly("group,open")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		conv, view, load string
		want             bool
	}{
		{"group of 10", "chat open", "burst", true},
		{"group of 10", "chat open", "steady", true},
		{"direct", "chat open", "burst", false},
		{"group of 10", "inbox shown", "burst", false},
		{"", "chat tail", "", false},
		{"group of 10", "", "", true},
	} {
		if got := o.wants(c.conv, c.view, c.load); got != c.want {
			t.Errorf("wants(%q, %q, %q) = %v, want %v", c.conv, c.view, c.load, got, c.want)
		}
	}
	all, _ := parseBurstOnly("")
	if !all.wants("direct", "chat tail", "steady") {
		t.Error("no words: every case runs")
	}
	if _, err := parseBurstOnly("group,opened"); err == nil {
		t.Error("an unknown word is accepted")
	}
}
