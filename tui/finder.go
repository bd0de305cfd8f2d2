package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// finderModel switches conversations by name: type a few letters of it, in
// order, and press enter (ctrl+k, as in Slack and Discord).
type finderModel struct {
	c       *common
	input   textinput.Model
	entries []wire.InboxEntry
	names   []string
	hits    []int
	cursor  int
	width   int
	height  int
}

const finderMaxRows = 10

func newFinderModel(c *common) finderModel {
	ti := textinput.New()
	ti.Prompt = "› "
	ti.Placeholder = "conversation name"
	m := finderModel{c: c, input: ti}
	m.restyle()
	return m
}

func (m *finderModel) restyle() {
	st := inputStyles(m.c.styles)
	m.input.SetStyles(st)
}

func (m *finderModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.input.SetWidth(m.boxWidth() - 6)
}

func (m *finderModel) boxWidth() int { return min(max(m.width-4, 20), 60) }

func (m *finderModel) open(entries []wire.InboxEntry) tea.Cmd {
	m.entries = entries
	m.names = make([]string, len(entries))
	for i, e := range entries {
		m.names[i] = m.c.title(e)
	}
	m.input.Reset()
	m.filter()
	return m.input.Focus()
}

func (m *finderModel) filter() {
	m.hits = fuzzyFilter(strings.TrimSpace(m.input.Value()), m.names)
	m.cursor = 0
}

func (m finderModel) Update(msg tea.Msg) (finderModel, tea.Cmd) {
	k := m.c.keys
	if msg, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case matches(msg, k.FinderClose):
			m.input.Blur()
			m.c.post(closeOverlayMsg{})
			return m, nil
		case matches(msg, k.FinderOpen):
			if m.cursor < len(m.hits) {
				e := m.entries[m.hits[m.cursor]]
				m.input.Blur()
				m.c.post(openConversationMsg{e})
				return m, nil
			}
			if peer, ok := m.newPeer(); ok {
				// No conversation by that name: start one with that user.
				c := m.c
				m.input.Blur()
				return m, func() tea.Msg {
					ctx, cancel := c.call()
					defer cancel()
					cv, err := c.be.CreateDirect(ctx, peer)
					return conversationCreatedMsg{cv, err}
				}
			}
			return m, nil
		case matches(msg, k.FinderUp):
			m.cursor = max(m.cursor-1, 0)
			return m, nil
		case matches(msg, k.FinderDown):
			m.cursor = min(m.cursor+1, max(len(m.hits)-1, 0))
			return m, nil
		}
	}
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		m.filter()
	}
	return m, cmd
}

// newPeer is the query as a user id to start a direct chat with, when it is one.
func (m finderModel) newPeer() (string, bool) {
	q := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(m.input.Value())), "@")
	if q == "" || q == m.c.me || wire.ValidateUserID(q) != nil {
		return "", false
	}
	return q, true
}

func (m finderModel) View() string {
	s := m.c.styles
	w := m.boxWidth() - 4
	lines := []string{s.Title.Render("Switch to"), m.input.View(), ""}
	rows := min(finderMaxRows, max(m.height-8, 1))
	first := max(m.cursor-rows+1, 0)
	for i := first; i < len(m.hits) && i < first+rows; i++ {
		e := m.entries[m.hits[i]]
		mark := "  "
		if wire.IsGroupType(e.Type) {
			mark = s.GroupMark.Render("# ")
		}
		badge := ""
		if e.Unread > 0 {
			badge = s.Unread.Render(" (" + wire.UnreadLabel(e.Unread) + ")")
		}
		name := ansi.Truncate(m.names[m.hits[i]], w-4-ansi.StringWidth(ansi.Strip(badge)), "…")
		bar := "  "
		if i == m.cursor {
			bar = s.Cursor.Render("▌ ")
			name = s.Title.Render(name)
		}
		lines = append(lines, bar+mark+name+badge)
	}
	if len(m.hits) == 0 {
		if peer, ok := m.newPeer(); ok {
			lines = append(lines, s.Subtle.Render("  no match · enter: message "+peer))
		} else {
			lines = append(lines, s.Subtle.Render("  no match"))
		}
	}
	return s.Overlay.Width(m.boxWidth()).Render(strings.Join(lines, "\n"))
}

// ShortHelp is the finder's keys for the status line.
func (m finderModel) ShortHelp() []helpKV {
	k := m.c.keys
	return kv(k.FinderDown, k.FinderOpen, k.FinderClose)
}
