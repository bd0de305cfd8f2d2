package sqlite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chatterm/chat/server"
	"github.com/chatterm/chat/wire"
)

// A message's mentions are kept comma-separated: user ids and @all/@here hold
// no comma (wire.ValidateUserID).
func encodeMentions(names []string) string { return strings.Join(names, ",") }

func decodeMentions(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// insertMentions gives each member m mentions a mentions row, in the write
// that inserts m: the count the inbox reads is then never behind the message.
func (s *Store) insertMentions(m server.Message) error {
	for _, name := range m.Mentions {
		var err error
		if name == wire.MentionAll || name == wire.MentionHere {
			_, err = s.hot("insertMentionAll").exec(m.ConversationID, m.SenderID, m.SeqNo)
		} else {
			_, err = s.hot("insertMention").exec(name, m.ConversationID, m.SeqNo)
		}
		if err != nil {
			return fmt.Errorf("mention of %s: %w", name, err)
		}
	}
	return nil
}

// mentionSeqsColumn is the inbox's column of a member's mention seq_nos (the
// newest wire.MaxUnread, comma-separated), read with the entry.
var mentionSeqsColumn = `(SELECT group_concat(seq_no) FROM (SELECT seq_no FROM mentions mn
	WHERE mn.user_id = p.user_id AND mn.conversation_id = p.conversation_id
	ORDER BY seq_no DESC LIMIT ` + strconv.Itoa(wire.MaxUnread) + `))`

// parseSeqs reads mentionSeqsColumn into ascending seq_nos.
func parseSeqs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mention seq_no %q: %w", p, err)
		}
		out[i] = n
	}
	slices.Sort(out) // group_concat promises no order
	return out, nil
}
