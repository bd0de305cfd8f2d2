package wire

import (
	"crypto/rand"
	"github.com/chatterm/chat/internal/termtext"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on identifiers. User ids are lowercase so that "Bob" and "bob" cannot be
// two accounts, and contain no ':' so direct conversation ids can be derived.
const (
	MaxUserIDLen         = 32
	MaxMessageIDLen      = 64
	MaxConversationIDLen = 80
	MaxDisplayNameLen    = 64
	MaxStatusTextLen     = 140
	MaxGroupNameLen      = 64
	MinPasswordLen       = 8
	MaxPasswordLen       = 256
	// MaxUnread bounds an inbox entry's unread count: the server counts stored
	// messages (not seq_no arithmetic) and stops here; MaxUnread means "this
	// many or more".
	MaxUnread = 1000
)

// DirectPrefix and GroupPrefix start every conversation id.
const (
	DirectPrefix = "dm:"
	GroupPrefix  = "g:"
)

// ValidateUserID accepts 1–32 characters of a-z, 0-9, '.', '_' and '-', starting
// with a letter or digit.
func ValidateUserID(id string) error {
	if id == "" {
		return Errorf(CodeInvalid, "user_id is empty")
	}
	if len(id) > MaxUserIDLen {
		return Errorf(CodeInvalid, "user_id is longer than %d characters", MaxUserIDLen)
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return Errorf(CodeInvalid, "user_id %q may hold only a-z, 0-9, '.', '_' and '-', and must start with a letter or digit", truncate(id, 40))
		}
	}
	return nil
}

// ValidateMessageID accepts 1–64 printable ASCII characters without spaces.
func ValidateMessageID(id string) error {
	if id == "" {
		return Errorf(CodeInvalid, "message_id is empty")
	}
	if len(id) > MaxMessageIDLen {
		return Errorf(CodeInvalid, "message_id is longer than %d characters", MaxMessageIDLen)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return Errorf(CodeInvalid, "message_id may hold only printable ASCII without spaces")
		}
	}
	return nil
}

// ValidateConversationID checks the shape of a conversation id (not its existence).
func ValidateConversationID(id string) error {
	if id == "" {
		return Errorf(CodeInvalid, "conversation_id is empty")
	}
	if len(id) > MaxConversationIDLen || !utf8.ValidString(id) {
		return Errorf(CodeInvalid, "conversation_id is malformed")
	}
	if !strings.HasPrefix(id, DirectPrefix) && !strings.HasPrefix(id, GroupPrefix) {
		return Errorf(CodeInvalid, "conversation_id %q must start with %q or %q", truncate(id, 40), DirectPrefix, GroupPrefix)
	}
	for _, r := range id {
		if r <= ' ' || r > '~' {
			return Errorf(CodeInvalid, "conversation_id may hold only printable ASCII")
		}
	}
	return nil
}

// DirectConversationID derives the id of the direct conversation between two users,
// so that "send to bob" always finds the same conversation from either side.
func DirectConversationID(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return DirectPrefix + a + ":" + b
}

// DirectMembers splits a direct conversation id into its two members. They are
// the same user in a note to self (dm:alice:alice), the conversation a user
// has with themselves.
func DirectMembers(id string) (a, b string, ok bool) {
	rest, found := strings.CutPrefix(id, DirectPrefix)
	if !found {
		return "", "", false
	}
	a, b, ok = strings.Cut(rest, ":")
	if !ok || ValidateUserID(a) != nil || ValidateUserID(b) != nil || a > b {
		return "", "", false
	}
	return a, b, true
}

// NewGroupID returns a fresh, random group conversation id.
func NewGroupID() string { return GroupPrefix + strings.ToLower(rand.Text()) }

// MediaPrefix starts every media_id: media/<uploader>/<random>.
const MediaPrefix = "media/"

// ValidateMediaID checks the shape of a media_id.
func ValidateMediaID(id string) error {
	rest, ok := strings.CutPrefix(id, MediaPrefix)
	user, token, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || ValidateUserID(user) != nil || len(token) < 16 || len(token) > 64 || strings.ContainsAny(token, "/.") {
		return Errorf(CodeInvalid, "attachment %q is not a media_id from POST /v1/media", truncate(id, 80))
	}
	for _, r := range token {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return Errorf(CodeInvalid, "attachment %q is not a media_id from POST /v1/media", truncate(id, 80))
		}
	}
	return nil
}

// MediaOwner is the user who uploaded a (valid) media_id.
func MediaOwner(id string) string {
	rest, _ := strings.CutPrefix(id, MediaPrefix)
	user, _, _ := strings.Cut(rest, "/")
	return user
}

// NewMediaID returns a fresh media_id for user.
func NewMediaID(user string) string { return MediaPrefix + user + "/" + strings.ToLower(rand.Text()) }

// NewMessageID returns a fresh message id: 26 characters, the first 10 the
// current Unix millisecond and the other 16 random (80 bits), all in lowercase
// base32hex, whose digits sort in ASCII order. So ids made later sort later,
// and the server's idempotency index, keyed by (conversation_id, message_id),
// takes each new id at the end of its conversation's range: one leaf page
// written per conversation and commit instead of a random one, which in a
// large conversation is also a page read (BenchmarkSendBatchAndAck with
// 26-character ids: 9.3–9.5 µs of CPU per message against 10.0–10.1 random).
func NewMessageID() string { return newMessageID(time.Now()) }

func newMessageID(now time.Time) string {
	var b [26]byte
	ms := uint64(now.UnixMilli())
	for i := 9; i >= 0; i-- {
		b[i] = base32hexLower[ms&31]
		ms >>= 5
	}
	random := rand.Text() // 26 characters of the standard alphabet
	for i := range 16 {
		b[10+i] = base32hexLower[strings.IndexByte(base32Std, random[i])]
	}
	return string(b[:])
}

const (
	base32Std      = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	base32hexLower = "0123456789abcdefghijklmnopqrstuv"
)

// ValidateName accepts a display name, status or group name: valid UTF-8, at
// most maxLen characters, with no control characters (C0, DEL, C1, line and
// paragraph separators) and no invisible format characters — bidi controls
// among them, which would let a name read differently from what it is — except
// the zero-width joiners U+200C and U+200D that emoji and some scripts need.
// field names the field in the error.
func ValidateName(field, v string, maxLen int) error {
	if !utf8.ValidString(v) {
		return Errorf(CodeInvalid, "%s is not valid UTF-8", field)
	}
	if utf8.RuneCountInString(v) > maxLen {
		return Errorf(CodeInvalid, "%s is longer than %d characters", field, maxLen)
	}
	for _, r := range v {
		switch {
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029':
			return Errorf(CodeInvalid, "%s must be one line of text without control characters (found %U)", field, r)
		case r == '\u200c' || r == '\u200d':
		case unicode.Is(unicode.Cf, r):
			return Errorf(CodeInvalid, "%s must not hold invisible formatting characters such as bidi controls (found %U)", field, r)
		}
	}
	return ValidateNotBlank(field, v)
}

// ValidateNotBlank refuses text that is not empty but shows nothing: only
// spaces, fillers such as U+3164, zero-width characters or combining marks
// (termtext.Blank). Empty text is for the caller to allow or not.
func ValidateNotBlank(field, v string) error {
	if v != "" && termtext.Blank(v) {
		return Errorf(CodeBlank, "%s shows as blank: it needs a visible character, not only spaces, fillers such as U+3164 or zero-width characters", field)
	}
	return nil
}

// UnreadLabel shows an unread count, "1000+" at the cap (MaxUnread).
func UnreadLabel(n int64) string {
	if n >= MaxUnread {
		return strconv.Itoa(MaxUnread) + "+"
	}
	return strconv.FormatInt(n, 10)
}
