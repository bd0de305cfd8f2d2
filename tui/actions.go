package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// oneLine is another member's text made safe for one line of the screen.
func oneLine(s string) string { return termtext.OneLine(s) }

// What the composer is writing besides a plain message: each acts on one
// message (chatModel.target).
type composeAction int

const (
	actMessage composeAction = iota
	actReply
	actEdit
	actReact
)

// visible says whether a row of the history is a message to show: events
// (reactions, edits, deletes) only change the messages they point at.
func visible(m wire.Message) bool { return m.Kind == "" }

// messageAt finds the loaded message (or event) at seq.
func (m *chatModel) messageAt(seq int64) (wire.Message, bool) {
	i := sort.Search(len(m.msgs), func(i int) bool { return m.msgs[i].SeqNo >= seq })
	if i < len(m.msgs) && m.msgs[i].SeqNo == seq {
		return m.msgs[i], true
	}
	return wire.Message{}, false
}

// changed takes a message as events left it (client.ChangedEvent).
func (m *chatModel) changed(x wire.Message) {
	i := sort.Search(len(m.msgs), func(i int) bool { return m.msgs[i].SeqNo >= x.SeqNo })
	if i < len(m.msgs) && m.msgs[i].SeqNo == x.SeqNo && m.msgs[i].UpdatedSeq < x.UpdatedSeq {
		m.msgs[i] = x
		m.msgsVersion++ // a reply quoting it may change too: draw everything
		if m.target.SeqNo == x.SeqNo {
			m.target = x
		}
	}
}

// step moves the selection to the next visible message before (up) or after
// it; from none, it starts at the newest. It reports whether it moved.
func (m *chatModel) step(up bool) bool {
	start, dir := len(m.msgs), -1
	if m.selected != 0 {
		start = sort.Search(len(m.msgs), func(i int) bool { return m.msgs[i].SeqNo >= m.selected })
		if !up {
			dir = 1
		}
	}
	for i := start + dir; i >= 0 && i < len(m.msgs); i += dir {
		if visible(m.msgs[i]) && !m.msgs[i].Deleted {
			m.selected = m.msgs[i].SeqNo
			return true
		}
	}
	return false
}

// acted is the message an action key works on: the selected one, else the
// newest (with mine, the newest of mine).
func (m *chatModel) acted(mine bool) (wire.Message, bool) {
	if x, ok := m.messageAt(m.selected); ok && m.selected != 0 {
		return x, true
	}
	for i := len(m.msgs) - 1; i >= 0; i-- {
		x := m.msgs[i]
		if visible(x) && !x.Deleted && (!mine || x.SenderID == m.c.me) {
			return x, true
		}
	}
	return wire.Message{}, false
}

// handleActionKey serves the keys that act on messages, while reading: s
// selects (then ↑/↓ move, esc lets go), r replies, p goes to what a reply
// answers, + reacts, e edits, D deletes (pressed twice). handled is false for any other key.
func (m *chatModel) handleActionKey(msg tea.KeyPressMsg) (cmd tea.Cmd, handled bool) {
	k := m.c.keys
	key := msg.String()
	if key != "D" {
		m.confirmDelete = 0
	}
	if m.selected != 0 {
		switch {
		case matches(msg, k.Up):
			m.step(true)
			m.render()
			m.showSelected()
			return m.maybeLoadOlder(), true
		case matches(msg, k.Down):
			m.step(false)
			m.render()
			m.showSelected()
			return m.maybeLoadNewer(), true
		case matches(msg, k.Back):
			m.selected = 0
			m.render()
			return nil, true
		}
	}
	switch {
	case matches(msg, k.Select):
		if m.selected != 0 {
			m.selected = 0
		} else if !m.step(true) {
			return flash("no message to select", false), true
		}
		m.render()
		m.showSelected()
		return nil, true
	case matches(msg, k.Reply):
		return m.startAction(actReply, false), true
	case matches(msg, k.Quoted):
		return m.gotoQuoted(), true
	case matches(msg, k.React):
		return m.startAction(actReact, false), true
	case matches(msg, k.EditMsg):
		return m.startAction(actEdit, true), true
	case matches(msg, k.OpenFile):
		return m.openAttachment(), true
	case matches(msg, k.SaveFile):
		return m.saveAttachment(), true
	case matches(msg, k.Delete):
		x, ok := m.acted(false)
		if !ok {
			return flash("no message to delete", false), true
		}
		if m.confirmDelete != x.SeqNo {
			m.confirmDelete = x.SeqNo
			whose := m.c.who(x.SenderID) + "'s message"
			if x.SenderID == m.c.me {
				whose = "your message"
			}
			return flash("delete "+whose+" for everyone? press D again", false), true
		}
		m.confirmDelete = 0
		m.selected = 0
		m.render()
		return m.sendMessage(wire.Message{ConversationID: m.conv.ConversationID, Kind: wire.KindDelete, TargetSeq: x.SeqNo}, ""), true
	}
	return nil, false
}

// startAction opens the composer to reply to, react to or edit the acted-on
// message (for an edit, one of mine).
func (m *chatModel) startAction(a composeAction, mine bool) tea.Cmd {
	x, ok := m.acted(mine)
	if !ok || (a == actEdit && x.SenderID != m.c.me) {
		if a == actEdit {
			return flash("only your own messages can be edited", false)
		}
		return flash("no message to act on", false)
	}
	if m.action == actMessage {
		m.stashed = m.compose.Value()
	}
	m.action, m.target, m.actionFromReading = a, x, !m.composing
	m.compose.Reset()
	if a == actEdit {
		m.compose.SetValue(x.Content)
	}
	m.selected = 0
	m.render()
	return m.focusCompose()
}

// quickReactions are what a reaction offers under the keys 1–6 while nothing
// is typed yet: the emoji chat apps put first.
var quickReactions = [...]string{"👍", "❤", "😂", "🎉", "😮", "🙏"}

// quickReaction is the emoji key picks when a reaction's composer is still
// empty; ok is false for any other key, or once something is typed.
func (m *chatModel) quickReaction(key string) (emoji string, ok bool) {
	if m.action != actReact || m.compose.Value() != "" || len(key) != 1 || key[0] < '1' || int(key[0]-'1') >= len(quickReactions) {
		return "", false
	}
	return quickReactions[key[0]-'1'], true
}

// quickPicks is the line of quickReactions with their keys.
func quickPicks() string {
	parts := make([]string, len(quickReactions))
	for i, e := range quickReactions {
		parts[i] = fmt.Sprintf("%d %s", i+1, e)
	}
	return strings.Join(parts, "  ")
}

// cancelAction leaves a reply, reaction or edit; an edit's text goes with it.
func (m *chatModel) cancelAction() {
	if m.action == actEdit {
		m.compose.Reset()
	}
	m.action, m.target, m.actionFromReading = actMessage, wire.Message{}, false
	m.unstash()
}

// unstash gives the composer back the draft an action put aside, unless
// something else was typed there since.
func (m *chatModel) unstash() {
	if m.stashed != "" && m.compose.Value() == "" {
		m.compose.SetValue(m.stashed)
	}
	m.stashed = ""
}

// editLast starts editing my newest message (↑ in an empty composer, as in
// Slack and Discord); false when I have none loaded.
func (m *chatModel) editLast() bool {
	for i := len(m.msgs) - 1; i >= 0; i-- {
		x := m.msgs[i]
		if visible(x) && !x.Deleted && x.SenderID == m.c.me {
			m.action, m.target = actEdit, x
			m.compose.SetValue(x.Content)
			m.afterLayoutChange()
			return true
		}
	}
	return false
}

// outgoing is what the composer's text becomes under the current action.
func (m *chatModel) outgoing(text string) wire.Message {
	out := wire.Message{ConversationID: m.conv.ConversationID, Content: text}
	switch m.action {
	case actReply:
		out.ReplyTo = m.target.SeqNo
	case actEdit:
		out.Kind, out.TargetSeq = wire.KindEdit, m.target.SeqNo
	case actReact:
		out.Kind, out.TargetSeq = wire.KindReaction, m.target.SeqNo
	}
	return out
}

// actionLine is the line above the composer saying what it writes, "" for a
// plain message.
func (m *chatModel) actionLine() string {
	s := m.c.styles
	var what string
	switch m.action {
	case actReply:
		what = "↪ replying to " + m.c.who(m.target.SenderID) + ": " + oneLine(m.target.Content)
	case actEdit:
		what = "✎ editing your message"
	case actReact:
		what = "react to " + m.c.who(m.target.SenderID) + "'s message: " + quickPicks() + "  or type an emoji (the same one again takes it back)"
	default:
		return ""
	}
	return s.Accent.Render(ansi.Truncate(" "+what, max(m.width-14, 10), "…")) + s.Faint.Render("  esc cancels")
}

// showSelected scrolls the selected message into view.
func (m *chatModel) showSelected() {
	if m.selLine < 0 {
		return
	}
	hist := m.historyHeight()
	top := len(m.lines) - m.offset - hist // first line on screen
	switch {
	case m.selLine < top:
		m.offset = len(m.lines) - hist - m.selLine
	case m.selLine >= top+hist:
		m.offset = max(len(m.lines)-m.selLine-1, 0)
	}
	m.afterLayoutChange()
}

// quoteLine is the first line of a reply: who and what it quotes.
func (m *chatModel) quoteLine(x wire.Message) string {
	q, ok := m.messageAt(x.ReplyTo)
	switch {
	case !ok:
		return fmt.Sprintf("↪ reply to #%d", x.ReplyTo)
	case q.Deleted:
		return "↪ " + m.c.who(q.SenderID) + ": message deleted"
	}
	return "↪ " + m.c.who(q.SenderID) + ": " + oneLine(q.Content)
}

// reactionsLine sums a message's reactions up: "👍 2  🎉 1", mine marked.
func reactionsLine(reactions map[string]string, me string) string {
	var parts []string
	for _, g := range client.GroupReactions(reactions) {
		p := fmt.Sprintf("%s %d", oneLine(g.Emoji), len(g.Users))
		for _, u := range g.Users {
			if u == me {
				p = "[" + p + "]"
				break
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "  ")
}

// gotoQuoted selects the message the selected reply answers, or without a
// selection the one the newest reply answers, loading older pages for it as
// for a search result.
func (m *chatModel) gotoQuoted() tea.Cmd {
	var quoted int64
	if x, ok := m.messageAt(m.selected); ok && m.selected != 0 {
		quoted = x.ReplyTo
	} else {
		for i := len(m.msgs) - 1; i >= 0 && quoted == 0; i-- {
			if x := m.msgs[i]; visible(x) && !x.Deleted {
				quoted = x.ReplyTo
			}
		}
	}
	if quoted == 0 {
		return flash("not a reply", false)
	}
	return m.jump(quoted)
}

// jump shows the message at seq selected (a search result): at once when it
// is loaded, else when older pages have brought it.
func (m *chatModel) jump(seq int64) tea.Cmd {
	m.blurCompose()
	m.toUnread, m.toOldest = false, false
	m.jumpTo = seq
	return m.continueJump()
}

func (m *chatModel) continueJump() tea.Cmd {
	if m.jumpTo == 0 || !m.loaded {
		return nil // the newest page's arrival carries on
	}
	if x, ok := m.messageAt(m.jumpTo); ok && visible(x) {
		m.selected, m.jumpTo = x.SeqNo, 0
		m.render()
		m.showSelected()
		return m.maybeMarkRead()
	}
	if m.loadErr == nil && len(m.msgs) > 0 && (m.more && m.msgs[0].SeqNo > m.jumpTo || m.behind && m.msgs[len(m.msgs)-1].SeqNo < m.jumpTo) {
		// Outside the window: the page around it in its place (window.go).
		return m.loadAt(m.jumpTo - int64(m.c.page)/2)
	}
	if m.more && m.loadErr == nil && len(m.msgs) == 0 {
		return m.loadOlder()
	}
	m.jumpTo = 0
	return flash("that message is not in this conversation any more", false)
}
