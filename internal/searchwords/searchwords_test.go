package searchwords

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	if got, want := Terms(`  Déploy, "FAIL*" (node-3) `), []string{"deploy", "fail", "node", "3"}; !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
	if got := Terms(" ?! "); len(got) != 0 {
		t.Fatalf("Terms of no word = %q", got)
	}
}

func TestWordsAndMatch(t *testing.T) {
	text := "Cafe\u0301 au lait, the deployment FAILED"
	var words []string
	for _, w := range Words(text) {
		words = append(words, text[w.Start:w.End])
	}
	if want := []string{"Cafe\u0301", "au", "lait", "the", "deployment", "FAILED"}; !slices.Equal(words, want) {
		t.Fatalf("Words = %q, want %q (a combining accent stays with its letter)", words, want)
	}
	terms := Terms("café fail")
	for _, c := range []struct {
		word string
		want bool
	}{{"Cafe\u0301", true}, {"CAFÉS", true}, {"FAILED", true}, {"deployment", false}, {"ca", false}} {
		if got := Match(c.word, terms); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.word, terms, got, c.want)
		}
	}
}
