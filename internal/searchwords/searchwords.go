// Package searchwords reads words as a search of the cache matches them:
// what a person typed split into words, and a word of a text matching one
// of them when it starts with it, case and accents ignored — as the cache's
// full-text index (FTS4, unicode61 with remove_diacritics=2) matches a
// quoted prefix term. The cache marks its snippets with it, and the TUI the
// membership lines it draws again with names.
package searchwords

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Query is the words of what a person typed (letters and digits), as typed.
func Query(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// Terms is Query's words folded, ready for Match.
func Terms(query string) []string {
	words := Query(query)
	for i, w := range words {
		words[i] = Fold(w)
	}
	return words
}

// Fold is a word as the index keeps it: lower case, accents dropped.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// Span is a word of a text, text[Start:End].
type Span struct{ Start, End int }

// Words are the spans of text's words: letters and digits, with the
// combining marks that follow a letter.
func Words(text string) []Span {
	var words []Span
	inWord := false
	for i, r := range text {
		w := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) && inWord
		switch {
		case w && !inWord:
			words = append(words, Span{Start: i})
		case !w && inWord:
			words[len(words)-1].End = i
		}
		inWord = w
	}
	if inWord {
		words[len(words)-1].End = len(text)
	}
	return words
}

// Match reports whether word starts with one of terms (Terms).
func Match(word string, terms []string) bool {
	f := Fold(word)
	for _, t := range terms {
		if strings.HasPrefix(f, t) {
			return true
		}
	}
	return false
}
