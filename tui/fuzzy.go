package tui

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fuzzyScore matches pattern as a subsequence of s, case-insensitively, and
// scores the match: consecutive runs and matches at word starts score higher,
// gaps lower. ok is false when pattern is not a subsequence.
func fuzzyScore(pattern, s string) (score int, ok bool) {
	if pattern == "" {
		return 0, true
	}
	p := []rune(strings.ToLower(pattern))
	pi := 0
	prevMatch := -2
	prev := ' '
	i := 0
	for _, r := range strings.ToLower(s) {
		if pi < len(p) && r == p[pi] {
			score += 1
			switch {
			case i == prevMatch+1:
				score += 5 // a run
			case i == 0 || !unicode.IsLetter(prev) && !unicode.IsDigit(prev):
				score += 8 // a word start
			default:
				score -= min(i-prevMatch-1, 3) // a gap
			}
			if i == 0 {
				score += 4
			}
			prevMatch = i
			pi++
		}
		prev = r
		i++
	}
	if pi < len(p) {
		return 0, false
	}
	// Shorter names win ties: "bo" should prefer "bob" over "bobby-tables".
	score -= utf8.RuneCountInString(s) / 8
	return score, true
}

// fuzzyFilter returns the indexes of names matching pattern, best first; ties
// keep the given order (most recent activity).
func fuzzyFilter(pattern string, names []string) []int {
	type hit struct{ i, score int }
	var hits []hit
	for i, n := range names {
		if sc, ok := fuzzyScore(pattern, n); ok {
			hits = append(hits, hit{i, sc})
		}
	}
	if pattern != "" {
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	}
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.i
	}
	return out
}
