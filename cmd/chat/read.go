package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

const historyUsage = `
Usage: chat history (--with USER | --group ID) [--before SEQ] [--limit N] [--raw] [--json]

Prints up to --limit messages before --before (default: the newest), oldest
first. When older messages exist, the next page's --before is on stderr. With
--json, one message object per line. Message text is drawn from its Markdown
(bold, code, quotes, lists, links), styled on a terminal and plain in a file
or pipe; --raw prints it as written.

Examples:
  chat history --with bob
  chat history --group g:7f3k2 --limit 100 --before 301
  chat history --with bob --json | jq -r .content
`

func (a *app) runHistory(ctx context.Context, args []string) error {
	fs := a.flags("history", historyUsage)
	with := fs.String("with", "", "the direct conversation with `USER`")
	group := fs.String("group", "", "conversation `ID`")
	before := fs.Int64("before", 0, "only messages with seq_no below `SEQ`")
	limit := fs.Int("limit", wire.DefaultPageSize, fmt.Sprintf("at most `N` messages (1-%d)", wire.MaxPageSize))
	asJSON := fs.Bool("json", false, "one JSON message per line")
	raw := fs.Bool("raw", false, "print message text as stored, its Markdown not drawn")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > wire.MaxPageSize {
		return usagef("--limit must be between 1 and %d", wire.MaxPageSize)
	}
	if *before < 0 {
		return usagef("--before must not be negative")
	}
	api, acct, err := a.login()
	if err != nil {
		return err
	}
	conv, err := target(ctx, api, acct, "--with", *with, *group, true)
	if err != nil {
		return err
	}
	resp, err := api.History(ctx, conv, *before, *limit)
	if err != nil {
		return peerTarget(ctx, api, *with, err)
	}
	msgs := resp.Messages
	slices.Reverse(msgs) // the server pages newest first; a log reads oldest first
	enc := json.NewEncoder(a.stdout)
	quotes := pageQuotes(msgs, cachedQuotes(ctx, nil, api))
	who := cachedNames(ctx, api)
	text := a.textFormat(*raw)
	for _, m := range msgs {
		if *asJSON {
			if err := enc.Encode(m); err != nil {
				return err
			}
			continue
		}
		printMessage(a.stdout, m, false, quotes, who, text)
	}
	if resp.NextBeforeSeq > 0 && !*asJSON {
		fmt.Fprintf(a.stderr, "(older messages: add --before %d)\n", resp.NextBeforeSeq)
	}
	return nil
}

// printMessage writes one message as a human-readable line; a reply begins
// with what it answers, as quotes finds it (nil: its seq_no only). Users
// appear as who labels them (nil: by id); the text as format draws it.
func printMessage(w io.Writer, m wire.Message, withConversation bool, quotes quoter, who namer, format textFormat) {
	conv := ""
	if withConversation {
		conv = m.ConversationID + " "
	}
	ts := m.Timestamp.Local().Format("2006-01-02 15:04:05")
	sender := who.label(m.SenderID)
	// Another member wrote this text: it reaches the terminal only through the
	// sanitiser (docs/security.md), in format.body. --json prints it exact
	// instead.
	text := format.body(m.Content)
	switch m.Kind {
	case wire.KindReaction:
		if m.Content == "" {
			fmt.Fprintf(w, "%s %s#%d %s took back their reaction to #%d\n", ts, conv, m.SeqNo, sender, m.TargetSeq)
		} else {
			fmt.Fprintf(w, "%s %s#%d %s reacted %s to #%d\n", ts, conv, m.SeqNo, sender, termtext.OneLine(m.Content), m.TargetSeq)
		}
		return
	case wire.KindEdit:
		if text == "" { // the message was deleted since: its edits say nothing
			fmt.Fprintf(w, "%s %s#%d %s edited #%d\n", ts, conv, m.SeqNo, sender, m.TargetSeq)
		} else {
			fmt.Fprintf(w, "%s %s#%d %s edited #%d: %s\n", ts, conv, m.SeqNo, sender, m.TargetSeq, text)
		}
		return
	case wire.KindDelete:
		fmt.Fprintf(w, "%s %s#%d %s deleted #%d\n", ts, conv, m.SeqNo, sender, m.TargetSeq)
		return
	case "":
	default: // a membership event, or a kind this version does not know
		if printMembershipEvent(w, ts, conv, m, who) {
			return
		}
		fmt.Fprintf(w, "%s %s#%d %s: (%s of #%d)\n", ts, conv, m.SeqNo, sender, termtext.OneLine(m.Kind), m.TargetSeq)
		return
	}
	if m.Attachment != "" {
		if text != "" {
			text += " "
		}
		text += "[attachment " + attachmentLabel(m) + termtext.OneLine(m.Attachment) + "]"
	}
	if m.ReplyTo > 0 {
		text = replyLabel(m, quotes, who) + " " + text
	}
	switch {
	case m.Deleted:
		text = "[deleted]"
	case m.Edited:
		text += " (edited)"
	}
	if r := reactionsLine(m.Reactions); r != "" {
		text += "  [" + r + "]"
	}
	fmt.Fprintf(w, "%s %s#%d %s: %s\n", ts, conv, m.SeqNo, sender, text)
}

// attachmentLabel is "name, type, size " of an attachment described by its
// sender ("" when it was not).
func attachmentLabel(m wire.Message) string {
	a := m.AttachmentInfo
	if a == nil {
		return ""
	}
	var parts []string
	for _, p := range []string{termtext.OneLine(a.Name), termtext.OneLine(a.Type)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if a.Size > 0 {
		parts = append(parts, wire.SizeLabel(a.Size))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " "
}

// reactionsLine says who reacted with what: "👍 alice bob, ❤ carol", emoji by
// how many chose them (client.GroupReactions); names sorted.
func reactionsLine(reactions map[string]string) string {
	var parts []string
	for _, g := range client.GroupReactions(reactions) {
		parts = append(parts, termtext.OneLine(g.Emoji)+" "+strings.Join(g.Users, " "))
	}
	return strings.Join(parts, ", ")
}

const lsUsage = `
Usage: chat ls [--json] [--limit N]

Lists your conversations, most recent activity first, with unread counts; "@N"
before a count is how many of them mention you. With --json, one inbox entry
per line ("mentions" is that count, absent when 0).

Examples:
  chat ls
  chat ls --json | jq -r 'select(.unread > 0) | .conversation_id'
`

func (a *app) runLs(ctx context.Context, args []string) error {
	fs := a.flags("ls", lsUsage)
	asJSON := fs.Bool("json", false, "one JSON inbox entry per line")
	limit := fs.Int("limit", 50, "at most `N` conversations (1-500)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 500 {
		return usagef("--limit must be between 1 and 500")
	}
	api, _, err := a.login()
	if err != nil {
		return err
	}
	resp, err := api.Inbox(ctx, *limit)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.stdout)
	who := cachedNames(ctx, api)
	for _, e := range resp.Conversations {
		if *asJSON {
			if err := enc.Encode(e); err != nil {
				return err
			}
			continue
		}
		name := termtext.OneLine(e.Name)
		if e.Type == wire.Direct {
			name = "@" + e.Peer
			if l := who.label(e.Peer); l != e.Peer {
				name = l // "Alice Liddell (alice)"
			}
		}
		unread := ""
		if e.Unread > 0 {
			unread = "(" + wire.UnreadLabel(e.Unread) + ")"
		}
		if e.Mentions > 0 { // "@1(3)": one of the three unread mentions you
			unread = "@" + wire.UnreadLabel(e.Mentions) + unread
		}
		when := ""
		if !e.LastMessageAt.IsZero() {
			when = e.LastMessageAt.Local().Format("01-02 15:04")
		}
		preview := e.LastMessageBody
		if e.LastMessageSender != "" {
			preview = who.label(e.LastMessageSender) + ": " + preview
		}
		fmt.Fprintf(a.stdout, "%-6s %-28s %-11s %s  %s\n", unread, truncate(name, 28), when, e.ConversationID, truncate(termtext.OneLine(preview), 60))
	}
	return nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
