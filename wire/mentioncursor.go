package wire

import (
	"strconv"
	"strings"
	"time"
)

// MentionCursor is where a page of GET /v1/mentions ended: the last mention
// it listed, by its time, conversation and seq_no. Mentions are listed newest
// first, and two in different conversations can share a time (to the
// microsecond the stores keep), so a time alone as the next page's bound
// dropped or repeated one of them; the three together are unique, and order
// every mention (Before).
type MentionCursor struct {
	Time           time.Time
	ConversationID string
	SeqNo          int64
}

// String is the cursor as MentionsResponse.Next and the cursor= parameter
// carry it: "<unix microseconds>.<seq_no>.<conversation id>" (the id last: it
// may hold any of its own separators).
func (c MentionCursor) String() string {
	return strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + strconv.FormatInt(c.SeqNo, 10) + "." + c.ConversationID
}

// ParseMentionCursor reads a cursor String wrote; an invalid one is an
// invalid error.
func ParseMentionCursor(s string) (MentionCursor, error) {
	parts := strings.SplitN(s, ".", 3)
	bad := Errorf(CodeInvalid, "cursor must be the next of the last page of mentions")
	if len(parts) != 3 {
		return MentionCursor{}, bad
	}
	micros, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || micros < 0 {
		return MentionCursor{}, bad
	}
	seq, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || seq < 1 || ValidateConversationID(parts[2]) != nil {
		return MentionCursor{}, bad
	}
	return MentionCursor{Time: time.UnixMicro(micros).UTC(), ConversationID: parts[2], SeqNo: seq}, nil
}

// Before says whether a mention at (t, conv, seq) comes after the cursor in
// the newest-first list: older, or as old and further by conversation id,
// then seq_no, both descending. A zero cursor is the start: everything comes
// after it. A cursor of a time alone (the before= of older clients) keeps
// what is strictly older.
func (c MentionCursor) Before(t time.Time, conv string, seq int64) bool {
	if c.Time.IsZero() {
		return true
	}
	a, b := t.UnixMicro(), c.Time.UnixMicro()
	switch {
	case a != b:
		return a < b
	case conv != c.ConversationID:
		return conv < c.ConversationID
	}
	return seq < c.SeqNo
}
