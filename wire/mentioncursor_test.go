package wire

import (
	"testing"
	"time"
)

func TestMentionCursorRoundTrip(t *testing.T) {
	ts := time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC)
	for _, c := range []MentionCursor{
		{Time: ts, ConversationID: "g:x", SeqNo: 3},
		{Time: ts, ConversationID: "dm:alice:b.o_b", SeqNo: 1 << 40},
	} {
		back, err := ParseMentionCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("%q read back as %+v, %v; want %+v", c.String(), back, err, c)
		}
	}
	for _, bad := range []string{"", "1.2", "x.1.g:x", "1.x.g:x", "1.0.g:x", "-1.1.g:x", "1.1.nope", "1.1."} {
		if _, err := ParseMentionCursor(bad); ErrorCode(err) != CodeInvalid {
			t.Errorf("ParseMentionCursor(%q) = %v, want an invalid error", bad, err)
		}
	}
}

// Before orders by time, then conversation id, then seq_no, all newest
// first; two mentions of one microsecond in two conversations are both on
// one side or the other of a cursor, never equal to it unless the same.
func TestMentionCursorOrder(t *testing.T) {
	ts := time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC)
	c := MentionCursor{Time: ts, ConversationID: "g:m", SeqNo: 5}
	for _, x := range []struct {
		t      time.Time
		conv   string
		seq    int64
		before bool
	}{
		{ts.Add(-time.Microsecond), "g:z", 9, true},
		{ts.Add(time.Microsecond), "g:a", 1, false},
		{ts, "g:a", 9, true},
		{ts, "g:z", 1, false},
		{ts, "g:m", 4, true},
		{ts, "g:m", 5, false}, // the cursor's own mention was on its page
		{ts.Add(300 * time.Nanosecond), "g:m", 5, false},
	} {
		if got := c.Before(x.t, x.conv, x.seq); got != x.before {
			t.Errorf("Before(%v, %s, %d) = %v", x.t, x.conv, x.seq, got)
		}
	}
	if !(MentionCursor{}).Before(ts, "g:a", 1) {
		t.Error("the zero cursor is not the start")
	}
	if old := (MentionCursor{Time: ts}); old.Before(ts, "g:a", 1) || !old.Before(ts.Add(-time.Microsecond), "g:a", 1) {
		t.Error("a time alone does not keep what is strictly older")
	}
}

// FuzzParseMentionCursor: never panics, and a cursor it reads writes back
// to the same cursor.
func FuzzParseMentionCursor(f *testing.F) {
	for _, s := range []string{"1795741323456789.3.g:x", "0.1.dm:a:b", "1.2", "9223372036854775807.1.g:x", ".."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseMentionCursor(s)
		if err != nil {
			return
		}
		back, err := ParseMentionCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("%q read as %+v, written %q, read back %+v %v", s, c, c.String(), back, err)
		}
	})
}
