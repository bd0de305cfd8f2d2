package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/mdterm"
	"github.com/chatterm/chat/wire"
)

// referenceMessageLines is messageLines as it was before its parts were kept
// and its widths known as they were put together: every part through
// lipgloss's Render, the text through mdterm with a painter calling Render,
// every line measured whole (as drawMessages measured them). The drawing of
// record: messageLines must give the same bytes.
func referenceMessageLines(m *chatModel, x wire.Message, k lineKey) (lines []string, widths []int, tickBack int) {
	showName, senderW, t := k.showName, k.senderW, k.tick
	s := m.c.styles
	w := min(m.width, timeColW+senderW+1+maxContentW+tickColW)
	contentW := max(w-timeColW-senderW-1-tickColW, 8)
	timeStr := s.Time.Render(x.Timestamp.In(m.c.loc).Format("15:04") + " ")
	if k.selected {
		timeStr = s.Cursor.Render("▶") + s.Time.Render(x.Timestamp.In(m.c.loc).Format("15:04"))
	}
	name := strings.Repeat(" ", senderW)
	if showName {
		n := ansi.Truncate(m.c.who(x.SenderID), senderW, "…")
		pad := strings.Repeat(" ", senderW-ansi.StringWidth(n))
		if x.SenderID == m.c.me {
			name = s.Me.Render(n) + pad
		} else {
			name = s.Sender(x.SenderID).Render(n) + pad
		}
	}
	indent := strings.Repeat(" ", timeColW+senderW+1)
	var body []string
	if k.quote != "" {
		body = append(body, s.Faint.Render(ansi.Truncate(k.quote, contentW, "…")))
	}
	mention := m.c.mentionsMe(x)
	switch {
	case x.Deleted:
		body = append(body, s.Faint.Italic(true).Render("message deleted"))
	default:
		if x.Content != "" {
			body = append(body, mdterm.Render(x.Content, mdterm.Options{Width: contentW, Paint: func(text string, st mdterm.Style) string {
				return s.textStyle(st, mention).Render(text)
			}})...)
		}
		if x.Attachment != "" {
			body = append(body, s.Accent.Render(ansi.Truncate(attachmentLine(x), contentW, "…")))
		}
	}
	if len(body) == 0 {
		body = []string{""}
	}
	if x.Edited && !x.Deleted {
		body[len(body)-1] += s.Faint.Render(" (edited)")
	}
	text := s.Content
	if mention {
		text = s.Mention
	}
	lines = make([]string, len(body))
	for i, b := range body {
		prefix := indent
		if i == 0 {
			prefix = timeStr + name + " "
		}
		line := prefix + text.Render(b)
		if i == len(body)-1 && t != tickNone {
			line += strings.Repeat(" ", max(w-lipgloss.Width(line)-tickGlyphW-1, 1))
			if t != tickLater {
				line += m.tickGlyph(t)
			}
		}
		lines[i] = line
	}
	n := len(lines)
	if r := reactionsLine(x.Reactions, m.c.me); r != "" && !x.Deleted {
		lines = append(lines, indent+s.Subtle.Render(ansi.Truncate(r, contentW, "…")))
	}
	if reason, bad := m.failed[x.MessageID]; bad {
		lines = append(lines, indent+s.Error.Render(ansi.Truncate("not sent: "+reason, contentW, "…")))
	}
	for _, l := range lines {
		widths = append(widths, ansi.StringWidth(l))
	}
	return lines, widths, len(lines) - n
}

// Every kind of message line — names cut and not, wide characters, Markdown,
// mentions, edits, deletions, replies, attachments, reactions, a reason not
// sent, the selection, every tick, narrow and wide — is drawn byte for byte
// as the reference drawing draws it, with its widths as measured. Drawn
// twice, so a line drawn from kept parts (the time of a second, a sender's
// name) is checked as well as one drawn afresh.
func TestMessageLinesAsBefore(t *testing.T) {
	senders := []string{"bob", "alice", "carol", "日本語ユーザー", "a\u0301bc", "averyveryverylongusernamethatiscut", "👍🏽x", "a\tb"} // a tab: only from a server breaking the user-id rules
	contents := []string{"", "hi", "message 17 of end-of-run-02, about as long as people type",
		"a line of chat that is long enough to wrap once the window is narrow, as chat lines often are, and then some more words",
		"**bold** _it_ `code` [link](https://x.example) ~~gone~~ https://y.example", "> quoted\n- item\n- item two\n1. first",
		"```\ncode\twith tab\n```", "日本語のテキストです、とても長い行になるかもしれません日本語のテキストです", "👍🏽 ok 🇫🇷", "@alice look", "two\nlines",
		"a  b   c", strings.Repeat("x", 130), "tab\there", "e\u0301e\u0301 combining"}
	for _, dark := range []bool{true, false} {
		for _, width := range []int{30, 100, 250} {
			m := New(Options{Backend: fixture(), Now: func() time.Time { return fixtureNow }, Location: time.UTC, Dark: dark})
			m.c.styles = NewStyles(dark)
			m.c.highlight = []string{"combining"}
			c := &m.chat
			c.width, c.height = width, 40
			n := 0
			for round := range 2 {
				for _, sender := range senders {
					for _, content := range contents {
						n++
						x := wire.Message{ConversationID: bobConv, SeqNo: int64(n), MessageID: fmt.Sprint("m", n), SenderID: sender, Content: content,
							Timestamp: fixtureNow.Add(time.Duration(n/3)*13*time.Second + time.Duration(n%2)*time.Millisecond)}
						k := lineKey{width: width, senderW: []int{3, 8, 24}[n%3], showName: n%4 != 0, tick: tick(n % 7), seq: x.SeqNo,
							minute: x.Timestamp.Unix() / 60, selected: n%5 == 0}
						switch n % 9 {
						case 1:
							x.Edited = true
						case 2:
							x.Deleted = true
						case 3:
							x.Attachment = "report.pdf"
						case 4:
							x.Reactions = map[string]string{"bob": "👍", "alice": "🎉"}
						case 5:
							c.failed[x.MessageID] = "too long"
						case 6:
							x.ReplyTo, k.quote = 1, "bob: the line replied to, quoted and cut when it runs past the width of the text"
						case 7:
							x.Mentions = []string{"alice"}
						}
						got, gotW, gotBack := c.messageLines(x, k)
						want, wantW, wantBack := referenceMessageLines(c, x, k)
						if !slices.Equal(got, want) || gotBack != wantBack {
							t.Fatalf("round %d, %q by %q, %+v (dark %v):\n got %q (%d)\nwant %q (%d)", round, content, sender, k, dark, got, gotBack, want, wantBack)
						}
						if !slices.Equal(gotW, wantW) {
							t.Fatalf("round %d, %q by %q, %+v: widths %v, measured %v", round, content, sender, k, gotW, wantW)
						}
					}
				}
			}
		}
	}
}
