package termtext

import (
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

//go:generate go run gen_confusables.go

// skeleton is the confusable skeleton of UTS #39 (section 4): s in NFD, each
// rune confusables.txt maps replaced by its target, and NFD again — what
// github.com/mtibben/confusables' Skeleton computes, from the same table held
// as static data (confusables_table.go) instead of a map that package builds
// before main in every program linking it (gen_confusables.go says more).
func skeleton(s string) string {
	return norm.NFD.String(mapConfusables(norm.NFD.String(s)))
}

// mapConfusables replaces each rune of s that confusables.txt maps by its
// target.
func mapConfusables(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if to, ok := confusableTarget(r); ok {
			b.WriteString(to)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// confusableTarget is what confusables.txt maps r to, if it maps r.
func confusableTarget(r rune) (string, bool) {
	i, ok := slices.BinarySearch(confusableFrom[:], r)
	if !ok {
		return "", false
	}
	start := uint16(0)
	if i > 0 {
		start = confusableEnds[i-1]
	}
	return confusableTargets[start:confusableEnds[i]], true
}
