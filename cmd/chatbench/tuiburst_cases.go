package main

import (
	"fmt"
	"strings"
)

// The views tui-burst can measure (--tui-burst-cases): a run of one view
// skips the others' setup, so profiling chat tail alone takes a minute, not
// the whole scenario.
const (
	burstViewOpen  = "open"  // the chat open, composer focused
	burstViewInbox = "inbox" // the inbox shown, the chat behind it
	burstViewTail  = "tail"  // chat tail in a pane of its own
)

// parseBurstCases reads a comma-separated subset of the views.
func parseBurstCases(s string) (map[string]bool, error) {
	cases := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		switch v {
		case burstViewOpen, burstViewInbox, burstViewTail:
			cases[v] = true
		case "":
		default:
			return nil, fmt.Errorf("unknown view %q (want open, inbox or tail)", v)
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no view given (want some of open, inbox, tail)")
	}
	return cases, nil
}
