package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// conversationCreatedMsg: CreateDirect or CreateGroup answered.
type conversationCreatedMsg struct {
	conv wire.Conversation
	err  error
}

// newConvModel is the "new direct chat" (one field: who) and "new group" (name
// and members) box.
type newConvModel struct {
	c      *common
	group  bool
	inputs []textinput.Model // direct: [peer]; group: [name, members]
	focus  int
	busy   bool
	err    string
	width  int
	height int
}

func newNewConvModel(c *common) newConvModel {
	m := newConvModel{c: c}
	m.open(false)
	m.inputs[0].Blur()
	return m
}

func (m *newConvModel) SetSize(w, h int) {
	m.width, m.height = w, h
	for i := range m.inputs {
		m.inputs[i].SetWidth(m.boxWidth() - 16)
	}
}

func (m *newConvModel) boxWidth() int { return min(max(m.width-4, 30), 64) }

func (m *newConvModel) restyle() {
	st := inputStyles(m.c.styles)
	for i := range m.inputs {
		m.inputs[i].SetStyles(st)
	}
}

func (m *newConvModel) open(group bool) tea.Cmd {
	mk := func(placeholder string) textinput.Model {
		ti := textinput.New()
		ti.Prompt = "› "
		ti.Placeholder = placeholder
		return ti
	}
	m.group, m.busy, m.err, m.focus = group, false, "", 0
	if group {
		m.inputs = []textinput.Model{mk("team name"), mk("bob, carol, dave")}
		m.inputs[0].CharLimit = wire.MaxGroupNameLen
	} else {
		m.inputs = []textinput.Model{mk("user id, e.g. bob")}
		m.inputs[0].CharLimit = wire.MaxUserIDLen
	}
	m.restyle()
	m.SetSize(m.width, m.height)
	return m.inputs[0].Focus()
}

func (m newConvModel) Update(msg tea.Msg) (newConvModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case conversationCreatedMsg:
		m.busy = false
		if msg.err != nil {
			m.err = errText(msg.err)
			return m, nil
		}
		return m, nil
	case tea.KeyPressMsg:
		switch {
		case matches(msg, k.Cancel):
			m.c.post(closeOverlayMsg{})
			return m, nil
		case matches(msg, k.Submit):
			if m.focus < len(m.inputs)-1 {
				return m, m.setFocus(m.focus + 1)
			}
			return m, m.submit()
		case msg.String() == "tab" || msg.String() == "down":
			return m, m.setFocus((m.focus + 1) % len(m.inputs))
		case msg.String() == "shift+tab" || msg.String() == "up":
			return m, m.setFocus((m.focus + len(m.inputs) - 1) % len(m.inputs))
		}
	}
	var cmd tea.Cmd
	m.inputs[m.focus], cmd = m.inputs[m.focus].Update(msg)
	return m, cmd
}

func (m *newConvModel) setFocus(i int) tea.Cmd {
	m.inputs[m.focus].Blur()
	m.focus = i
	return m.inputs[i].Focus()
}

// submit validates the form here, so that a typo is reported before any request.
func (m *newConvModel) submit() tea.Cmd {
	if m.busy {
		return nil
	}
	c := m.c
	if !m.group {
		peer := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(m.inputs[0].Value())), "@")
		if err := wire.ValidateUserID(peer); err != nil {
			m.err = errText(err)
			return nil
		}
		if peer == c.me {
			m.err = "that is you; pick someone else"
			return nil
		}
		m.busy, m.err = true, ""
		return func() tea.Msg {
			ctx, cancel := c.call()
			defer cancel()
			cv, err := c.be.CreateDirect(ctx, peer)
			return conversationCreatedMsg{cv, err}
		}
	}
	name := strings.TrimSpace(m.inputs[0].Value())
	members := splitMembers(m.inputs[1].Value())
	switch {
	case name == "":
		m.err = "the group needs a name"
		return m.setFocus(0)
	case len(members) == 0:
		m.err = "add at least one member"
		return m.setFocus(1)
	}
	for _, u := range members {
		if err := wire.ValidateUserID(u); err != nil {
			m.err = errText(err)
			return nil
		}
	}
	m.busy, m.err = true, ""
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		cv, err := c.be.CreateGroup(ctx, name, members)
		return conversationCreatedMsg{cv, err}
	}
}

func (m newConvModel) View() string {
	s := m.c.styles
	title, labels := "New direct chat", []string{"With"}
	if m.group {
		title, labels = "New group", []string{"Name", "Members"}
	}
	lines := []string{s.Title.Render(title), ""}
	for i, in := range m.inputs {
		lab := s.InputLabel
		if i == m.focus {
			lab = s.InputFocus
		}
		lines = append(lines, lab.Render(padRight(labels[i], 9))+in.View())
	}
	lines = append(lines, "")
	switch {
	case m.busy:
		lines = append(lines, s.Subtle.Render("creating…"))
	case m.err != "":
		lines = append(lines, s.Error.Render(m.err))
	case m.group:
		lines = append(lines, s.Subtle.Render("members: user ids, separated by commas or spaces"))
	default:
		lines = append(lines, s.Subtle.Render("enter opens the conversation"))
	}
	return s.Overlay.Width(m.boxWidth()).Render(strings.Join(lines, "\n"))
}

// ShortHelp is the form's keys for the status line.
func (m newConvModel) ShortHelp() []helpKV {
	k := m.c.keys
	return kv(k.NextField, k.Submit, k.Cancel)
}
