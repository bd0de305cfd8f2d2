package wire

import (
	"strings"
	"testing"
)

// Names, statuses, texts and reactions that would show as nothing are
// refused with blank_text; what shows is accepted.
func TestBlankRefused(t *testing.T) {
	blank := []string{" ", "\u3164", "\u3164\u3164", "\u115f\u1160", "\uffa0", "\u2800", "\u3000"}
	for _, v := range blank {
		if err := ValidateName("display_name", v, 64); AsError(err).Code != CodeBlank {
			t.Errorf("name %q: %v, want blank_text", v, err)
		}
		req := SendRequest{MessageID: "m1", Content: v}
		if err := req.Validate(); AsError(err).Code != CodeBlank {
			t.Errorf("message %q: %v, want blank_text", v, err)
		}
		edit := SendRequest{MessageID: "m1", Kind: KindEdit, TargetSeq: 1, Content: v}
		if err := edit.Validate(); AsError(err).Code != CodeBlank {
			t.Errorf("edit %q: %v, want blank_text", v, err)
		}
	}
	// Zero-width characters are refused in names already (format
	// characters); in a message they are blank.
	if err := (SendRequest{MessageID: "m1", Content: "\u200b\u200d"}).Validate(); AsError(err).Code != CodeBlank {
		t.Errorf("zero-width message: %v", err)
	}
	for _, v := range []string{"", "alice", "Ann \u3164Lee", "👩‍💻", "世界"} {
		if err := ValidateName("display_name", v, 64); err != nil {
			t.Errorf("name %q refused: %v", v, err)
		}
	}
	if err := (SendRequest{MessageID: "m1", Content: "  hi  "}).Validate(); err != nil {
		t.Errorf("a text with spaces around it: %v", err)
	}
}

func TestValidateReaction(t *testing.T) {
	for _, ok := range []string{"", "👍", "👍🏽", "❤️", "❤", "👩‍💻", "👨‍👩‍👧", "👨‍👩‍👧‍👦", "🇫🇷", "1️⃣", "1\u20e3", "#️⃣", "©️", "☺",
		"🧑🏻\u200d❤️\u200d💋\u200d🧑🏼", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"} {
		if err := ValidateReaction(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"hi", "a", "\u200b", "\u200d", "\u3164", "\u2800", "👍👍", "👍 ", " 👍", "1", "é", "\u0301", "1\u20e3x",
		"⌘", "a\u200d", "a\u200d👍", "👍\u200d", "\u200d👍", "🇫", "🇫🇷🇫", "\u20e3", "\U0001F3FB", "\uFE0F", "\U0001FC00", "🏴\U000E007F"} {
		if ValidateReaction(bad) == nil {
			t.Errorf("%q accepted as a reaction", bad)
		}
	}
}

func TestAttachmentName(t *testing.T) {
	for _, ok := range []string{"", "report.pdf", "photo 1.png", "résumé.txt", "数据.csv"} {
		if err := (AttachmentInfo{Name: ok}).Validate(); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"invoice\u202efdp.sh", "a\u200bb.txt", ".bashrc", "-rf", "../x", "a:b", "\u3164", "x" + strings.Repeat("\u0301", 10)} {
		if err := (AttachmentInfo{Name: bad}).Validate(); AsError(err).Code != CodeInvalid {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}
