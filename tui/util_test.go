package tui

import (
	"slices"
	"testing"
	"time"
)

func TestTimeLabels(t *testing.T) {
	now := fixtureNow // Tuesday 10 March 2026, 15:30 UTC
	for _, c := range []struct {
		t          time.Time
		short, day string
	}{
		{now.Add(-time.Hour), "14:30", "Today"},
		{now.Add(-20 * time.Hour), "Yesterday", "Yesterday"},
		{now.Add(-3 * 24 * time.Hour), "Saturday", "Saturday, 7 March"},
		{now.Add(-30 * 24 * time.Hour), "8 Feb", "Sunday, 8 February"},
		{now.AddDate(-1, 0, 0), "10 Mar 2025", "Monday, 10 March 2025"},
	} {
		if got := shortWhen(c.t, now, time.UTC); got != c.short {
			t.Errorf("shortWhen(%v) = %q, want %q", c.t, got, c.short)
		}
		if got := dayLabel(c.t, now, time.UTC); got != c.day {
			t.Errorf("dayLabel(%v) = %q, want %q", c.t, got, c.day)
		}
	}
	// The day follows the reader's time zone: at 15:30 UTC it is already the
	// 11th in Tokyo, so 14:00 UTC (23:00 there) was yesterday.
	tokyo := time.FixedZone("JST", 9*3600)
	at := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	if got := dayLabel(at, now, time.UTC); got != "Today" {
		t.Errorf("in UTC: %q, want Today", got)
	}
	if got := dayLabel(at, now, tokyo); got != "Yesterday" {
		t.Errorf("in Tokyo: %q, want Yesterday", got)
	}
}

func TestSplitMembers(t *testing.T) {
	got := splitMembers("Bob, @carol;dave  bob\tEve")
	if want := []string{"bob", "carol", "dave", "eve"}; !slices.Equal(got, want) {
		t.Fatalf("splitMembers = %q, want %q", got, want)
	}
}
