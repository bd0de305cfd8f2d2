package wire

import (
	"unicode"
	"unicode/utf8"
)

//go:generate go run gen_emoji.go

// The code points emoji sequences are built from (Unicode UTS #51, section
// 1.4); the ranges are fixed by the standard, so they are written out here
// rather than generated.
const (
	zwj               = '\u200D' // joins emoji into one (👨‍👩‍👧)
	emojiVariation    = '\uFE0F' // asks for emoji presentation (❤️)
	combiningKeycap   = '\u20E3' // 1️⃣
	firstSkinTone     = '\U0001F3FB'
	lastSkinTone      = '\U0001F3FF'
	firstRegional     = '\U0001F1E6' // two regional indicators make a flag (🇫🇷)
	lastRegional      = '\U0001F1FF'
	blackFlag         = '\U0001F3F4' // the base of a subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿)
	firstTag, lastTag = '\U000E0020', '\U000E007E'
	cancelTag         = '\U000E007F'
)

// isEmoji reports whether s is exactly one emoji as UTS #51 defines its
// sequences: a flag (two regional indicators), a keycap ([0-9#*] FE0F? 20E3),
// a subdivision flag (🏴 tags… cancel-tag), or pictographs joined by ZWJ,
// each with an optional FE0F and an optional skin tone. A pictograph is an
// assigned Extended_Pictographic character (the table generated from
// Unicode's emoji-data.txt); code points Unicode keeps for future emoji
// would show as a box, so they are refused.
func isEmoji(s string) bool {
	runes := []rune(s)
	if len(runes) == 0 {
		return false
	}
	if isRegional(runes[0]) {
		return len(runes) == 2 && isRegional(runes[1])
	}
	if isKeycapBase(runes[0]) {
		rest := runes[1:]
		if len(rest) > 0 && rest[0] == emojiVariation {
			rest = rest[1:]
		}
		return len(rest) == 1 && rest[0] == combiningKeycap
	}
	if runes[0] == blackFlag && len(runes) > 2 && runes[1] >= firstTag && runes[1] <= lastTag {
		for i, r := range runes[1:] {
			if r == cancelTag {
				return i+2 == len(runes) && i >= 2
			}
			if r < firstTag || r > lastTag {
				return false
			}
		}
		return false
	}
	for i := 0; ; {
		n := pictograph(runes[i:])
		if n == 0 {
			return false
		}
		i += n
		if i == len(runes) {
			return true
		}
		if runes[i] != zwj {
			return false
		}
		i++
	}
}

// pictograph is how many runes at the start of rs make one pictograph with
// its variation selector and skin tone; 0 when rs starts with none.
func pictograph(rs []rune) int {
	if len(rs) == 0 || !unicode.Is(extendedPictographic, rs[0]) || !isAssigned(rs[0]) {
		return 0
	}
	n := 1
	if n < len(rs) && rs[n] == emojiVariation {
		n++
	}
	if n < len(rs) && rs[n] >= firstSkinTone && rs[n] <= lastSkinTone {
		n++
	}
	return n
}

func isRegional(r rune) bool { return r >= firstRegional && r <= lastRegional }

func isKeycapBase(r rune) bool { return r >= '0' && r <= '9' || r == '#' || r == '*' }

// isAssigned reports whether Go's Unicode tables give r a category other than
// unassigned.
func isAssigned(r rune) bool {
	return utf8.ValidRune(r) && (unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r))
}
