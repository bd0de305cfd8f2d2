package tui

import (
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// inboxLoadedMsg carries the inbox read from the backend's cache.
type inboxLoadedMsg struct {
	entries []wire.InboxEntry
	err     error
}

// inboxModel lists conversations by most recent activity, two rows each: the
// name and time, then the last message and the unread count.
type inboxModel struct {
	c       *common
	entries []wire.InboxEntry
	cursor  int
	top     int // first visible entry
	loaded  bool
	err     error
	compact bool // one line per conversation: the sidebar beside a chat
	width   int
	height  int
	// lastMine: by conversation, the message_id of our own message its
	// preview shows, so a refusal of that message can say so there.
	lastMine map[string]string
	// sorts counts the whole list's sorts, for a test: a message moves its
	// own entry instead (inboxplace.go).
	sorts int
}

const inboxRowHeight = 2

func newInboxModel(c *common) inboxModel { return inboxModel{c: c} }

func (m *inboxModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.clamp()
}

// load reads the inbox; a command, since the cache is a disk.
func (m inboxModel) load() tea.Cmd {
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		es, err := c.be.Inbox(ctx)
		if err != nil {
			c.log.Error("load inbox", "err", err)
		}
		return inboxLoadedMsg{es, err}
	}
}

func (m inboxModel) Update(msg tea.Msg) (inboxModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case inboxLoadedMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, flash("inbox: "+errText(msg.err), true)
		}
		sel, _ := m.selected()
		m.entries = m.mergeLoaded(msg.entries)
		m.sortEntries()
		m.loaded, m.err = true, nil
		m.selectID(sel.ConversationID)
	case tea.KeyPressMsg:
		switch {
		case matches(msg, k.Up):
			m.cursor--
		case matches(msg, k.Down):
			m.cursor++
		case matches(msg, k.Top):
			m.cursor = 0
		case matches(msg, k.Bottom):
			m.cursor = len(m.entries) - 1
		case matches(msg, k.PageUp), matches(msg, k.HalfUp):
			m.cursor -= max(m.visibleRows()-1, 1)
		case matches(msg, k.PageDown), matches(msg, k.HalfDown):
			m.cursor += max(m.visibleRows()-1, 1)
		case matches(msg, k.Open):
			if e, ok := m.selected(); ok {
				m.c.post(openConversationMsg{e})
				return m, nil
			}
		}
		m.clamp()
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.cursor--
		case tea.MouseWheelDown:
			m.cursor++
		}
		m.clamp()
	}
	return m, nil
}

// mergeLoaded takes a fresh inbox from the cache but keeps what this screen
// already knows to be newer (a message just sent or received while the load was
// in flight), so a reload never steps back.
func (m *inboxModel) mergeLoaded(fresh []wire.InboxEntry) []wire.InboxEntry {
	old := make(map[string]wire.InboxEntry, len(m.entries))
	for _, e := range m.entries {
		old[e.ConversationID] = e
	}
	for i, e := range fresh {
		o, ok := old[e.ConversationID]
		if !ok {
			continue
		}
		if o.LastMessageAt.After(e.LastMessageAt) || o.LastSeq > e.LastSeq {
			e.LastMessageBody, e.LastMessageSender, e.LastMessageAt = o.LastMessageBody, o.LastMessageSender, o.LastMessageAt
			e.LastSeq = max(e.LastSeq, o.LastSeq)
			e.Unread = max(e.Unread, o.Unread)
		}
		if o.LastReadSeq > e.LastReadSeq {
			e.LastReadSeq = o.LastReadSeq
			e.Unread = min(e.Unread, max(e.LastSeq-o.LastReadSeq, 0))
		}
		fresh[i] = e
	}
	return fresh
}

func (m *inboxModel) sortEntries() {
	m.sorts++
	sort.SliceStable(m.entries, func(i, j int) bool {
		return m.entries[i].LastMessageAt.After(m.entries[j].LastMessageAt)
	})
}

func (m *inboxModel) rowHeight() int {
	if m.compact {
		return 1
	}
	return inboxRowHeight
}

func (m *inboxModel) visibleRows() int { return max((m.height-1)/m.rowHeight(), 1) }

// entryAt returns the conversation drawn at screen row y (0 is the title).
func (m inboxModel) entryAt(y int) (wire.InboxEntry, bool) {
	if y < 1 {
		return wire.InboxEntry{}, false
	}
	i := m.top + (y-1)/m.rowHeight()
	if i >= len(m.entries) || i >= m.top+m.visibleRows() {
		return wire.InboxEntry{}, false
	}
	return m.entries[i], true
}

func (m *inboxModel) clamp() {
	m.cursor = min(max(m.cursor, 0), max(len(m.entries)-1, 0))
	rows := m.visibleRows()
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+rows {
		m.top = m.cursor - rows + 1
	}
	m.top = min(max(m.top, 0), max(len(m.entries)-rows, 0))
}

func (m inboxModel) selected() (wire.InboxEntry, bool) {
	if m.cursor < 0 || m.cursor >= len(m.entries) {
		return wire.InboxEntry{}, false
	}
	return m.entries[m.cursor], true
}

// entry returns the conversation with that id, if the inbox has it.
func (m inboxModel) entry(id string) (wire.InboxEntry, bool) {
	for _, e := range m.entries {
		if e.ConversationID == id {
			return e, true
		}
	}
	return wire.InboxEntry{}, false
}

func (m *inboxModel) selectID(id string) {
	for i, e := range m.entries {
		if e.ConversationID == id {
			m.cursor = i
			break
		}
	}
	m.clamp()
}

// markRead moves a conversation's read boundary to seq, what its chat
// showed, with unread messages from others left after it.
func (m *inboxModel) markRead(id string, seq, unread int64) {
	for i := range m.entries {
		if m.entries[i].ConversationID == id && m.entries[i].LastReadSeq <= seq {
			m.entries[i].LastReadSeq = seq
			m.entries[i].Unread = min(m.entries[i].Unread, unread)
		}
	}
}

// upsert adds or replaces an entry and keeps the order.
func (m *inboxModel) upsert(e wire.InboxEntry) {
	sel, _ := m.selected()
	for i := range m.entries {
		if m.entries[i].ConversationID == e.ConversationID {
			m.entries[i] = e
			m.sortEntries()
			m.selectID(sel.ConversationID)
			return
		}
	}
	m.entries = append(m.entries, e)
	m.sortEntries()
	m.selectID(sel.ConversationID)
}

// applyMessage updates the preview, time and unread count for a new message,
// moving its conversation to its place (the top); events (reactions, edits,
// deletes) change nothing. It returns false for an unknown conversation.
func (m *inboxModel) applyMessage(msg wire.Message, seen bool) bool {
	sel, _ := m.selected()
	known := m.takeBatched(msg, seen)
	m.selectID(sel.ConversationID)
	return known
}

// takeMessage is applyMessage's update of the entry, without moving it: the
// entry's index when its time may have moved, -1 when nothing that orders
// it changed; known is false for an unknown conversation.
func (m *inboxModel) takeMessage(msg wire.Message, seen bool) (moved int, known bool) {
	for i := range m.entries {
		e := &m.entries[i]
		if e.ConversationID != msg.ConversationID {
			continue
		}
		if !visible(msg) {
			// A reaction, edit or delete is no message to preview: the
			// preview stays on the newest message. When the event changes
			// that message, the cache has the line as it now reads.
			return -1, true
		}
		if msg.SeqNo > 0 && msg.SeqNo < e.LastSeq {
			return -1, true // an old message (catch-up of history): nothing changes
		}
		if msg.SeqNo > e.LastSeq {
			e.LastSeq = msg.SeqNo
			if !seen {
				e.Unread++
				if m.c.mentionsMe(msg) {
					e.Mentions++
				}
			}
		}
		e.LastMessageBody = msg.Content
		e.LastMessageSender = msg.SenderID
		if m.lastMine == nil {
			m.lastMine = map[string]string{}
		}
		if msg.SenderID == m.c.me {
			m.lastMine[msg.ConversationID] = msg.MessageID
		} else {
			delete(m.lastMine, msg.ConversationID)
		}
		if seen {
			e.Unread, e.Mentions = 0, 0
		}
		if msg.Timestamp.IsZero() || msg.Timestamp.Equal(e.LastMessageAt) {
			return -1, true
		}
		e.LastMessageAt = msg.Timestamp
		return i, true
	}
	return -1, false
}

// notSent marks the preview of a conversation whose last message, ours, the
// server refused: the inbox must not show it as sent.
func (m *inboxModel) notSent(convID, messageID string) {
	if m.lastMine[convID] != messageID {
		return // the preview shows another message by now
	}
	for i := range m.entries {
		if e := &m.entries[i]; e.ConversationID == convID && !strings.HasPrefix(e.LastMessageBody, notSentMark) {
			e.LastMessageBody = notSentMark + e.LastMessageBody
		}
	}
}

// notSentMark starts the preview of a message the server refused.
const notSentMark = "✗ not sent: "

// nextUnread finds the first conversation with unread messages after current,
// wrapping around.
func (m inboxModel) nextUnread(current string) (wire.InboxEntry, bool) {
	start := 0
	for i, e := range m.entries {
		if e.ConversationID == current {
			start = i + 1
		}
	}
	n := len(m.entries)
	for i := range n {
		e := m.entries[(start+i)%n]
		if e.Unread > 0 && e.ConversationID != current {
			return e, true
		}
	}
	return wire.InboxEntry{}, false
}

// totalUnread counts what is unread outside muted chats (a muted chat asks
// for no attention), as the rows label it: capped at wire.MaxUnread, "1000+",
// so the total never claims more than the rows beside it can show.
func (m inboxModel) totalUnread() (n int64, label string) {
	for _, e := range m.entries {
		if !m.c.muted[e.ConversationID] {
			n += e.Unread
		}
	}
	return n, wire.UnreadLabel(n)
}

func (m inboxModel) View() string {
	s := m.c.styles
	var b strings.Builder
	b.WriteString(m.title())
	switch {
	case m.err != nil && len(m.entries) == 0:
		b.WriteString("\n\n " + s.Error.Render("Could not read the inbox: "+errText(m.err)))
		return b.String()
	case !m.loaded:
		b.WriteString("\n\n " + s.Subtle.Render("Loading…"))
		return b.String()
	case len(m.entries) == 0:
		b.WriteString("\n\n " + s.Subtle.Render("No conversations yet. Press n to message someone, N to start a group."))
		return b.String()
	}
	rows := m.visibleRows()
	for i := m.top; i < len(m.entries) && i < m.top+rows; i++ {
		b.WriteString("\n")
		if m.compact {
			b.WriteString(m.compactRow(m.entries[i], i == m.cursor))
		} else {
			b.WriteString(m.row(m.entries[i], i == m.cursor))
		}
	}
	return b.String()
}

// title is the inbox's first line: its name and the unread total.
func (m inboxModel) title() string {
	s := m.c.styles
	title := s.Title.Render(" Conversations")
	if n, label := m.totalUnread(); n > 0 {
		title += s.Unread.Render("  " + label + " unread")
	}
	return title
}

func (m inboxModel) row(e wire.InboxEntry, sel bool) string {
	s := m.c.styles
	w := m.width
	// On the selected row every piece carries the selection background, since an
	// outer background would be cut short by the inner styles' resets.
	st := func(x lipgloss.Style) lipgloss.Style {
		if sel {
			return x.Background(s.Selected.GetBackground())
		}
		return x
	}
	plain := st(lipgloss.NewStyle())
	bar := plain.Render("  ")
	if sel {
		bar = st(s.Cursor).Render("▌ ")
	}
	mark := plain.Render("  ")
	if wire.IsGroupType(e.Type) {
		mark = st(s.GroupMark).Render("# ")
	}
	nameStyle := s.App
	if e.Unread > 0 {
		nameStyle = s.UnreadName
	}
	whenText := shortWhen(e.LastMessageAt, m.c.now(), m.c.loc)
	nameW := max(w-4-ansi.StringWidth(whenText)-2, 1)
	name := ansi.Truncate(m.c.title(e), nameW, "…")
	gap1 := max(w-4-ansi.StringWidth(name)-ansi.StringWidth(whenText)-1, 1)
	line1 := bar + mark + st(nameStyle).Render(name) + plain.Render(strings.Repeat(" ", gap1)) +
		st(s.Subtle).Render(whenText) + plain.Render(" ")

	badgeText := ""
	if e.Unread > 0 {
		badgeText = "(" + wire.UnreadLabel(e.Unread) + ")"
	}
	mentionText := mentionBadge(e)
	preview := termtext.OneLine(e.LastMessageBody)
	switch {
	case e.LastMessageSender == "":
	case e.LastMessageSender == m.c.me:
		preview = "you: " + preview
	case wire.IsGroupType(e.Type):
		preview = m.c.who(e.LastMessageSender) + ": " + preview
	}
	prevW := max(w-4-ansi.StringWidth(mentionText+badgeText)-2, 1)
	preview = ansi.Truncate(preview, prevW, "…")
	gap2 := max(w-4-ansi.StringWidth(preview)-ansi.StringWidth(mentionText+badgeText)-1, 1)
	line2 := bar + plain.Render("  ") + st(s.Subtle).Render(preview) + plain.Render(strings.Repeat(" ", gap2)) +
		st(s.Mention).Render(mentionText) + st(s.Unread).Render(badgeText) + plain.Render(" ")
	return line1 + "\n" + line2
}

// compactRow is one line: the marks, the name and the unread count.
func (m inboxModel) compactRow(e wire.InboxEntry, sel bool) string {
	s := m.c.styles
	bar, mark := "  ", "  "
	if sel {
		bar = s.Cursor.Render("▌ ")
	}
	if wire.IsGroupType(e.Type) {
		mark = s.GroupMark.Render("# ")
	}
	badge := ""
	if e.Unread > 0 {
		badge = " " + mentionBadge(e) + wire.UnreadLabel(e.Unread)
	}
	name := ansi.Truncate(m.c.title(e), max(m.width-4-len(badge)-1, 1), "…")
	nameStyle := s.App
	switch {
	case sel:
		nameStyle = s.Title
	case e.Unread > 0:
		nameStyle = s.UnreadName
	}
	gap := strings.Repeat(" ", max(m.width-4-ansi.StringWidth(name)-len(badge)-1, 0))
	return bar + mark + nameStyle.Render(name) + gap + s.Unread.Render(badge)
}

func padRight(s string, w int) string {
	if d := w - lipgloss.Width(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}

// ShortHelp is the inbox's keys for the status line.
func (m inboxModel) ShortHelp() []helpKV {
	k := m.c.keys
	return kv(k.Open, k.NewDirect, k.NewGroup, k.Finder, k.Help)
}
