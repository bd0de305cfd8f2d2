package widthwarm

import (
	"syscall"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
)

func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// Once Built is closed the table is in memory: a lookup past U+02FF,
// which would otherwise write the whole table (550 pages, each a page
// fault), touches at most a few pages.
func TestBuiltMeansTheLookupIsFree(t *testing.T) {
	Start()
	Start() // once
	select {
	case <-Built():
	case <-time.After(time.Minute):
		t.Fatal("the width table was not built within a minute")
	}
	before := minorFaults(t)
	for _, r := range []rune{'…', '▌', '─', '›', 0x1F600, 0x10FFFD} {
		_ = runewidth.RuneWidth(r)
	}
	if n := minorFaults(t) - before; n > 50 {
		t.Errorf("lookups after Built took %d page faults: the table was not built", n)
	}
}
