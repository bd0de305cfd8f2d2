package wire

import (
	"testing"
	"time"
)

// TestMessageIDsSortByTime checks what the server's index relies on: an id
// made in a later millisecond sorts after one made earlier, across digit
// carries, and ids of one millisecond are valid and distinct.
func TestMessageIDsSortByTime(t *testing.T) {
	base := time.UnixMilli(1_763_700_000_000)
	steps := []time.Duration{0, time.Millisecond, 31 * time.Millisecond, 32 * time.Millisecond, time.Second, time.Hour, 24 * 365 * time.Hour, 100 * 24 * 365 * time.Hour}
	prev := ""
	for _, d := range steps {
		id := newMessageID(base.Add(d))
		if len(id) != 26 {
			t.Fatalf("%q: %d characters, want 26", id, len(id))
		}
		if err := ValidateMessageID(id); err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if id <= prev {
			t.Fatalf("id at +%v = %q sorts before or with the one before it, %q", d, id, prev)
		}
		prev = id
	}
	seen := map[string]bool{}
	prefix := newMessageID(base)[:10]
	for range 10000 {
		id := newMessageID(base)
		if seen[id] {
			t.Fatalf("%q made twice", id)
		}
		seen[id] = true
		if id[:10] != prefix {
			t.Fatalf("%q: the time prefix of one millisecond changed", id)
		}
	}
}
