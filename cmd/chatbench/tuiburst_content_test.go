package main

import (
	"strings"
	"testing"
)

// Only a run's last message carries its marker, so the pane shows the
// marker only once the last message is on screen.
func TestOnlyTheLastMessageCarriesTheMarker(t *testing.T) {
	const n, marker = 2000, "end-of-run-07"
	for i := 1; i < n; i++ {
		if c := burstContent(i, n, marker); strings.Contains(c, marker) {
			t.Fatalf("message %d of %d says %q: it carries the marker %q", i, n, c, marker)
		}
	}
	if c := burstContent(n, n, marker); c != marker {
		t.Fatalf("the last message says %q, want the marker %q", c, marker)
	}
}
