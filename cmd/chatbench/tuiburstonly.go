package main

import (
	"fmt"
	"strings"
)

// burstOnly is --tui-burst-only: the words asked for, by what they pick.
// Profiling one case (a group with the chat open, say) need not sit
// through the other eleven.
type burstOnly struct {
	conv, view, load map[string]bool // empty: all of that kind
}

// The words, and the case names they stand for.
var (
	burstConvWords = map[string]string{"direct": "direct", "group": "group of 10"}
	burstViewWords = map[string]string{"open": "chat open", "inbox": "inbox shown", "tail": "chat tail"}
	burstLoadWords = map[string]string{"burst": "burst", "steady": "steady"}
)

func parseBurstOnly(s string) (burstOnly, error) {
	o := burstOnly{conv: map[string]bool{}, view: map[string]bool{}, load: map[string]bool{}}
	for w := range strings.SplitSeq(s, ",") {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
		case burstConvWords[w] != "":
			o.conv[burstConvWords[w]] = true
		case burstViewWords[w] != "":
			o.view[burstViewWords[w]] = true
		case burstLoadWords[w] != "":
			o.load[burstLoadWords[w]] = true
		default:
			return o, fmt.Errorf("--tui-burst-only: %q is none of direct, group, open, inbox, tail, burst, steady", w)
		}
	}
	return o, nil
}

// wants says whether a case of this conversation, view and load runs; an
// empty argument matches any.
func (o burstOnly) wants(conv, view, load string) bool {
	pick := func(set map[string]bool, name string) bool { return name == "" || len(set) == 0 || set[name] }
	return pick(o.conv, conv) && pick(o.view, view) && pick(o.load, load)
}

// burstOnly is the parsed --tui-burst-only (checked with the flags).
func (b *bench) burstOnly() burstOnly {
	o, _ := parseBurstOnly(b.tuiBurstOnly)
	return o
}
