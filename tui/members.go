package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/wire"
)

// membersLoadedMsg carries a conversation's participants and their boundaries.
type membersLoadedMsg struct {
	load     int // which reload asked for it
	conv     wire.Conversation
	statuses []wire.MemberStatus
	err      error
}

// membersAddedMsg: AddMembers answered.
type membersAddedMsg struct {
	conv wire.Conversation
	err  error
}

// membersModel lists who is in the conversation, with their role and how far
// each has received and read; in a group, a adds members.
type membersModel struct {
	c        *common
	conv     wire.InboxEntry
	parts    []wire.Participant
	statuses map[string]wire.MemberStatus
	loading  bool
	loads    int // reloads asked for: only the latest one's answer is shown
	err      error
	top      int
	width    int
	height   int

	adding  bool
	input   textinput.Model
	addErr  string
	addBusy bool
}

func newMembersModel(c *common) membersModel {
	ti := textinput.New()
	ti.Prompt = "add › "
	ti.Placeholder = "user ids"
	ti.SetStyles(inputStyles(c.styles))
	return membersModel{c: c, input: ti}
}

func (m *membersModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.input.SetWidth(40)
}

func (m *membersModel) restyle() { m.input.SetStyles(inputStyles(m.c.styles)) }

func (m *membersModel) open(e wire.InboxEntry) tea.Cmd {
	m.conv, m.parts, m.statuses, m.loading, m.err, m.top = e, nil, nil, true, nil, 0
	m.adding, m.addErr, m.addBusy = false, "", false
	m.input.Reset()
	m.input.Blur()
	return m.reload()
}

// reload asks for the member list. Loads overlap (the box's first one is
// still in flight when a member is added), and their answers may come back in
// any order: only the latest is shown, or an older list would hide the newcomer.
func (m *membersModel) reload() tea.Cmd {
	m.loads++
	e, c, load := m.conv, m.c, m.loads
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		cv, err := c.be.Conversation(ctx, e.ConversationID)
		if err != nil {
			return membersLoadedMsg{load: load, err: err}
		}
		st, err := c.be.Statuses(ctx, e.ConversationID)
		return membersLoadedMsg{load: load, conv: cv, statuses: st, err: err}
	}
}

func (m membersModel) Update(msg tea.Msg) (membersModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case membersLoadedMsg:
		if msg.load != m.loads {
			return m, nil // superseded by a later load, which may be answered already
		}
		m.loading, m.err = false, msg.err
		if msg.conv.ConversationID != "" && msg.conv.ConversationID != m.conv.ConversationID {
			return m, nil
		}
		m.parts = msg.conv.Participants
		sort.SliceStable(m.parts, func(i, j int) bool {
			if (m.parts[i].Role == wire.RoleAdmin) != (m.parts[j].Role == wire.RoleAdmin) {
				return m.parts[i].Role == wire.RoleAdmin
			}
			return m.parts[i].UserID < m.parts[j].UserID
		})
		m.statuses = map[string]wire.MemberStatus{}
		for _, s := range msg.statuses {
			m.statuses[s.UserID] = s
		}
	case membersAddedMsg:
		m.addBusy = false
		if msg.err != nil {
			m.addErr = errText(msg.err)
			return m, nil
		}
		m.adding, m.addErr = false, ""
		m.input.Reset()
		m.input.Blur()
		cmd := m.reload()
		return m, cmd
	case tea.KeyPressMsg:
		if m.adding {
			return m.updateAdding(msg)
		}
		switch {
		case msg.String() == "a" && wire.IsGroupType(m.conv.Type):
			m.adding, m.addErr = true, ""
			return m, m.input.Focus()
		case matches(msg, k.Down):
			m.top = min(m.top+1, max(len(m.parts)-m.rows(), 0))
		case matches(msg, k.Up):
			m.top = max(m.top-1, 0)
		default:
			m.c.post(closeOverlayMsg{})
		}
	}
	return m, nil
}

func (m membersModel) updateAdding(msg tea.KeyPressMsg) (membersModel, tea.Cmd) {
	k := m.c.keys
	switch {
	case matches(msg, k.Cancel):
		m.adding, m.addErr = false, ""
		m.input.Blur()
		return m, nil
	case matches(msg, k.Submit):
		if m.addBusy {
			return m, nil
		}
		users := splitMembers(m.input.Value())
		if len(users) == 0 {
			m.addErr = "type one or more user ids"
			return m, nil
		}
		for _, u := range users {
			if err := wire.ValidateUserID(u); err != nil {
				m.addErr = errText(err)
				return m, nil
			}
		}
		m.addBusy, m.addErr = true, ""
		c, id := m.c, m.conv.ConversationID
		return m, func() tea.Msg {
			ctx, cancel := c.call()
			defer cancel()
			cv, err := c.be.AddMembers(ctx, id, users)
			return membersAddedMsg{cv, err}
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

func (m membersModel) rows() int { return max(m.height-10, 1) }

func (m membersModel) View() string {
	s := m.c.styles
	title := "Members of " + m.c.title(m.conv)
	lines := []string{s.Title.Render(title), ""}
	switch {
	case m.loading:
		lines = append(lines, s.Subtle.Render("loading…"))
	case m.err != nil:
		lines = append(lines, s.Error.Render(errText(m.err)))
	default:
		for i := m.top; i < len(m.parts) && i < m.top+m.rows(); i++ {
			p := m.parts[i]
			name := m.c.label(p.UserID)
			if p.UserID == m.c.me {
				name += " (you)"
			}
			role := ""
			if p.Role == wire.RoleAdmin {
				role = "admin"
			}
			st := m.statuses[p.UserID]
			info := fmt.Sprintf("received %d · read %d", max(st.LastDeliveredSeq, st.LastReadSeq), st.LastReadSeq)
			lines = append(lines, s.Sender(p.UserID).Render(padRight(ansi.Truncate(name, 32, "…"), 18))+" "+
				s.Accent.Render(padRight(role, 6))+" "+s.Subtle.Render(info))
		}
		switch {
		case m.adding:
			lines = append(lines, "", m.input.View())
			switch {
			case m.addBusy:
				lines = append(lines, s.Subtle.Render("adding…"))
			case m.addErr != "":
				lines = append(lines, s.Error.Render(m.addErr))
			default:
				lines = append(lines, s.Subtle.Render("enter adds · esc cancels"))
			}
		case wire.IsGroupType(m.conv.Type):
			lines = append(lines, "", s.Subtle.Render(fmt.Sprintf("%d members · a adds · any other key closes", len(m.parts))))
		default:
			lines = append(lines, "", s.Subtle.Render(fmt.Sprintf("%d members · any key closes", len(m.parts))))
		}
	}
	return s.Overlay.Render(strings.Join(lines, "\n"))
}

// ShortHelp is the members box's keys for the status line.
func (m membersModel) ShortHelp() []helpKV {
	if m.adding {
		k := m.c.keys
		return kv(k.Submit, k.Cancel)
	}
	if wire.IsGroupType(m.conv.Type) {
		return []helpKV{{"a", "add"}, {"any key", "close"}}
	}
	return []helpKV{{"any key", "close"}}
}
