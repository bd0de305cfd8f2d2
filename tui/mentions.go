package tui

import (
	"context"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// Mentions in the TUI (docs/tui.md, "Mentions"): a message names the user
// when the server resolved a mention of them (wire.MentionsUser) or, on this
// machine only, when its text holds one of Options.HighlightWords (weechat's
// highlight_words). Either rings even in a muted chat, counts as a mention
// in the inbox row and the window title, and draws the line marked.

// MentionLister is what the mentions view (@) needs of a Backend: the cached
// messages that mention the user, newest first. A Backend without it shows
// an empty view that says so.
type MentionLister interface {
	Mentions(ctx context.Context, limit int) ([]wire.Message, error)
}

// mentionsMe says whether m, from someone else, names the user: a mention
// the server resolved, or a highlight word.
func (c *common) mentionsMe(m wire.Message) bool {
	if m.SenderID == c.me || m.Kind != "" {
		return false
	}
	return wire.MentionsUser(m.Mentions, m.SenderID, c.me) || highlighted(m.Content, c.highlight)
}

// highlighted says whether text holds one of words as a whole word, case
// folded (weechat matches highlight words the same way).
func highlighted(text string, words []string) bool {
	if len(words) == 0 || text == "" {
		return false
	}
	lower := strings.ToLower(text)
	for _, w := range words {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		for i := 0; ; {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(w)
			if !wordRuneBefore(lower, start) && !wordRuneAt(lower, end) {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func wordRuneBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r := []rune(s[:i])
	return isWordRune(r[len(r)-1])
}

func wordRuneAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	return isWordRune([]rune(s[i:])[0])
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// mentionsLoadedMsg answers the mentions view's load.
type mentionsLoadedMsg struct {
	msgs []wire.Message
	err  error
}

const mentionsViewLimit = 100

// mentionsModel is the mentions view (@): the cached messages that mention
// the user, newest first, across chats; enter shows one in its chat.
type mentionsModel struct {
	c      *common
	names  map[string]string // conversation titles, by id
	msgs   []wire.Message
	err    error
	loaded bool
	cursor int
	width  int
	height int
}

func (m *mentionsModel) SetSize(w, h int) { m.width, m.height = w, h }

func (m *mentionsModel) boxWidth() int { return min(max(m.width-4, 20), 90) }

// open shows the view and loads it from the backend.
func (m *mentionsModel) open(entries []wire.InboxEntry) tea.Cmd {
	m.msgs, m.err, m.loaded, m.cursor = nil, nil, false, 0
	m.names = make(map[string]string, len(entries))
	for _, e := range entries {
		m.names[e.ConversationID] = convTitle(e, m.c.me)
	}
	c := m.c
	return func() tea.Msg {
		ml, ok := c.be.(MentionLister)
		if !ok {
			return mentionsLoadedMsg{}
		}
		ctx, cancel := c.call()
		defer cancel()
		msgs, err := ml.Mentions(ctx, mentionsViewLimit)
		return mentionsLoadedMsg{msgs: msgs, err: err}
	}
}

func (m mentionsModel) Update(msg tea.Msg) (mentionsModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case mentionsLoadedMsg:
		m.msgs, m.err, m.loaded, m.cursor = msg.msgs, msg.err, true, 0
	case tea.KeyPressMsg:
		switch {
		case matches(msg, k.FinderClose), matches(msg, k.Back):
			m.c.post(closeOverlayMsg{})
		case matches(msg, k.FinderOpen), matches(msg, k.Open):
			if m.cursor < len(m.msgs) {
				h := m.msgs[m.cursor]
				m.c.post(openAtMsg{entry: wire.InboxEntry{ConversationID: h.ConversationID}, seq: h.SeqNo})
			}
		case matches(msg, k.FinderUp), matches(msg, k.Up):
			m.cursor = max(m.cursor-1, 0)
		case matches(msg, k.FinderDown), matches(msg, k.Down):
			m.cursor = min(m.cursor+1, max(len(m.msgs)-1, 0))
		}
	}
	return m, nil
}

func (m mentionsModel) View() string {
	s := m.c.styles
	w := m.boxWidth() - 4
	lines := []string{s.Title.Render("Mentions of you"), ""}
	rows := min(12, max(m.height-8, 1))
	first := max(m.cursor-rows+1, 0)
	for i := first; i < len(m.msgs) && i < first+rows; i++ {
		h := m.msgs[i]
		name, ok := m.names[h.ConversationID]
		if !ok {
			name = h.ConversationID
		}
		head := name + " · " + h.Timestamp.In(m.c.loc).Format("Jan 2 15:04") + " " + oneLine(h.SenderID)
		bar := "  "
		if i == m.cursor {
			bar = s.Cursor.Render("▌ ")
			head = s.Title.Render(ansi.Truncate(head, w-2, "…"))
		} else {
			head = s.Subtle.Render(ansi.Truncate(head, w-2, "…"))
		}
		// Another member's text: through the sanitiser, on one line.
		text := ansi.Truncate(termtext.OneLine(wire.Preview(h.Content, h.Attachment)), w-2, "…")
		lines = append(lines, bar+head, "  "+s.Mention.Render(text))
	}
	switch {
	case m.err != nil:
		lines = append(lines, s.Error.Render("  "+errText(m.err)))
	case !m.loaded:
		lines = append(lines, s.Subtle.Render("  loading…"))
	case len(m.msgs) == 0:
		lines = append(lines, s.Subtle.Render("  no mentions of you in the messages on this machine"),
			s.Subtle.Render("  (chat mentions asks the server)"))
	}
	return s.Overlay.Width(m.boxWidth()).Render(strings.Join(lines, "\n"))
}

// ShortHelp is the view's keys for the status line.
func (m mentionsModel) ShortHelp() []helpKV {
	k := m.c.keys
	return kv(k.FinderDown, k.FinderOpen, k.FinderClose)
}

// mentionBadge is "@N" before an inbox row's unread count when N of its
// unread messages mention the user; "" otherwise.
func mentionBadge(e wire.InboxEntry) string {
	if e.Mentions <= 0 || e.Unread <= 0 {
		return ""
	}
	return "@" + wire.UnreadLabel(e.Mentions)
}

// totalMentions counts the unread mentions of every chat, muted ones too: a
// mention asks for attention wherever it is.
func (m inboxModel) totalMentions() int64 {
	var n int64
	for _, e := range m.entries {
		if e.Unread > 0 {
			n += e.Mentions
		}
	}
	return min(n, wire.MaxUnread)
}
