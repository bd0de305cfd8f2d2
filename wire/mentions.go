package wire

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Mentions (docs/protocol.md, "Mentions"). A message's mentions are resolved
// by the server when it stores the message, from its content: "@carol" names
// a member by user id, "@all" and "@here" the whole group. What the server
// resolved goes out with the message (Message.Mentions) so every client shows
// and counts the same mentions whatever it would parse itself.
const (
	// MentionAll in Message.Mentions: every member of the group is mentioned,
	// and the offline ones get a push.
	MentionAll = "@all"
	// MentionHere: every member is mentioned, but only those connected are
	// meant; no push goes to an offline member.
	MentionHere = "@here"
	// MaxMentions bounds the user ids one message mentions; names after that
	// stay plain text.
	MaxMentions = 50
	// MaxMentionsPage bounds one page of GET /v1/mentions.
	MaxMentionsPage = 100
)

// MentionTokens returns the names written as mentions in content, in order and
// without repeats: "@" at the start or after a character that cannot be part
// of a user id (so "bob@example.com" mentions no one), then a user id's
// characters, lowercased, with trailing '.', '_' and '-' left out (so
// "@carol." names carol). "all" and "here" come back as MentionAll and
// MentionHere. Whether a name is a member is the server's to say.
func MentionTokens(content string) []string {
	var out []string
	prev := rune(' ')
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRuneInString(content[i:])
		if r != '@' || isIDRune(prev) || prev == '@' {
			prev = r
			i += size
			continue
		}
		j := i + 1
		for j < len(content) && isIDRune(rune(content[j])) && content[j] < utf8.RuneSelf {
			j++
		}
		name := strings.ToLower(strings.TrimRight(content[i+1:j], "._-"))
		if name != "" && ValidateUserID(name) == nil {
			switch name {
			case "all":
				name = MentionAll
			case "here":
				name = MentionHere
			}
			if !contains(out, name) {
				out = append(out, name)
			}
		}
		prev = '@'
		if j > i+1 {
			prev = 'a'
		}
		i = j
	}
	return out
}

// isIDRune says whether r may be part of a user id, in either case (a mention
// is lowercased before it is looked up).
func isIDRune(r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-')
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// MentionsUser says whether a message with these resolved mentions, sent by
// sender, mentions user: by id, or through @all or @here. Nobody mentions
// themself.
func MentionsUser(mentions []string, sender, user string) bool {
	if user == "" || sender == user {
		return false
	}
	return contains(mentions, user) || contains(mentions, MentionAll) || contains(mentions, MentionHere)
}

// ValidateResolvedMentions checks mentions as a server resolved them: user
// ids and @all/@here, none twice, at most MaxMentions ids.
func ValidateResolvedMentions(mentions []string) error {
	ids := 0
	for i, name := range mentions {
		if contains(mentions[:i], name) {
			return Errorf(CodeInvalid, "mention %q is given twice", name)
		}
		if name == MentionAll || name == MentionHere {
			continue
		}
		if ValidateUserID(name) != nil {
			return Errorf(CodeInvalid, "mention %q is not a user id, @all or @here", name)
		}
		if ids++; ids > MaxMentions {
			return Errorf(CodeInvalid, "more than %d mentions", MaxMentions)
		}
	}
	return nil
}

// MentionsResponse is GET /v1/mentions: the messages mentioning the caller,
// newest first, across their conversations. Next, when set, is the cursor=
// of the next (older) page (MentionCursor). NextBefore, the last listed
// time, is the before= older clients follow: a mention sharing that time
// with the last listed one is then left out.
type MentionsResponse struct {
	Mentions   []Message `json:"mentions"`
	Next       string    `json:"next,omitempty"`
	NextBefore time.Time `json:"next_before,omitzero"`
}

// MentionSetting is GET and PUT /v1/conversations/{id}/mentions: a group's
// rule for @all and @here. AllAdminsOnly: a member who is not an admin is
// refused (forbidden) a message using either.
type MentionSetting struct {
	AllAdminsOnly bool `json:"all_admins_only"`
}
