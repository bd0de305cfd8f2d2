package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mtibben/confusables"
)

// The static table gives mtibben/confusables' answers: every rune, alone
// and after a letter and before a combining mark (NFD reorders and
// decomposes around it), has the skeleton its Skeleton gives.
func TestSkeletonMatchesConfusables(t *testing.T) {
	if len(confusableFrom) < 6000 {
		t.Fatalf("%d runes in the table: the generated file is short", len(confusableFrom))
	}
	mismatches := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), "a" + string(r) + "\u0301"} {
			if got, want := skeleton(s), confusables.Skeleton(s); got != want {
				mismatches++
				if mismatches <= 10 {
					t.Errorf("skeleton(%+q) = %+q, confusables.Skeleton gives %+q", s, got, want)
				}
			}
		}
	}
	if mismatches > 10 {
		t.Errorf("%d mismatches in all", mismatches)
	}
}

// Names as people write them, through NameKey's folding too.
func TestNameKeyMatchesConfusables(t *testing.T) {
	for _, s := range []string{"alice", "аlice", "ALICE", "Ann  Lee", "rn", "m", "ℌello", "𝐀𝐥𝐢𝐜𝐞", "Zoë", "Zoe\u0308", "paypal", "pаypаl", "ǅemal", "ﬁnn", "O'Brien", "0lga", "Olga", "李小龍", ""} {
		if got, want := NameKey(s), confusables.Skeleton(strings.ToLower(strings.Join(strings.Fields(s), " "))); got != want {
			t.Errorf("NameKey(%q) = %+q, confusables.Skeleton gives %+q", s, got, want)
		}
	}
}
