package tui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/chatterm/chat/wire"
)

// loginDoneMsg: Login or Register answered.
type loginDoneMsg struct {
	user, server string
	err          error
}

// loginModel is the first-run screen: the server address, then log in, or
// register (with an invite code when the server asks for one).
type loginModel struct {
	c        *common
	register bool
	inputs   []textinput.Model // server, user, password, invite
	focus    int
	busy     bool
	err      string
	width    int
	height   int
}

const (
	fieldServer = iota
	fieldUser
	fieldPassword
	fieldInvite
)

func newLoginModel(c *common, server string) loginModel {
	mk := func(placeholder string) textinput.Model {
		ti := textinput.New()
		ti.Prompt = "› "
		ti.Placeholder = placeholder
		return ti
	}
	m := loginModel{c: c}
	m.inputs = []textinput.Model{
		mk("http://localhost:8080"), mk("your user id"), mk("at least 8 characters"), mk("from your server's admin (if needed)"),
	}
	m.inputs[fieldServer].SetValue(server)
	m.inputs[fieldUser].CharLimit = wire.MaxUserIDLen
	m.inputs[fieldPassword].EchoMode = textinput.EchoPassword
	m.inputs[fieldPassword].EchoCharacter = '•'
	m.inputs[fieldPassword].CharLimit = wire.MaxPasswordLen
	if server != "" {
		m.focus = fieldUser
	}
	m.restyle()
	return m
}

func (m *loginModel) Init() tea.Cmd { return m.inputs[m.focus].Focus() }

func (m *loginModel) restyle() {
	st := inputStyles(m.c.styles)
	for i := range m.inputs {
		m.inputs[i].SetStyles(st)
	}
}

func (m *loginModel) SetSize(w, h int) {
	m.width, m.height = w, h
	for i := range m.inputs {
		m.inputs[i].SetWidth(max(min(w-20, 50), 10))
	}
}

func (m *loginModel) fields() int {
	if m.register {
		return 4
	}
	return 3
}

func (m loginModel) Update(msg tea.Msg) (loginModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case loginDoneMsg:
		m.busy = false
		if msg.err != nil {
			m.err = errText(msg.err)
			// A registration refused for its invite keeps the password typed
			// twice over: only the code needs fixing.
			if m.register && strings.Contains(strings.ToLower(m.err), "invite") {
				return m, m.setFocus(fieldInvite)
			}
			m.inputs[fieldPassword].Reset()
			return m, m.setFocus(fieldPassword)
		}
		m.err = ""
		m.inputs[fieldPassword].Reset()
		m.inputs[m.focus].Blur()
		return m, nil
	case tea.KeyPressMsg:
		if m.busy {
			return m, nil
		}
		switch {
		case matches(msg, k.ToggleMode):
			m.register = !m.register
			m.err = ""
			if m.focus >= m.fields() {
				return m, m.setFocus(m.fields() - 1)
			}
			return m, nil
		case matches(msg, k.Submit):
			// Enter moves to the next empty field, and submits from the last:
			// registering, that is the invite, which a server in invite mode
			// (the default) needs, so it is never skipped (Enter on it empty
			// submits without one, for an open server).
			for i := m.focus + 1; i < m.fields(); i++ {
				if strings.TrimSpace(m.inputs[i].Value()) == "" {
					return m, m.setFocus(i)
				}
			}
			return m, m.submit()
		case msg.String() == "tab" || msg.String() == "down":
			return m, m.setFocus((m.focus + 1) % m.fields())
		case msg.String() == "shift+tab" || msg.String() == "up":
			return m, m.setFocus((m.focus + m.fields() - 1) % m.fields())
		}
	}
	var cmd tea.Cmd
	m.inputs[m.focus], cmd = m.inputs[m.focus].Update(msg)
	return m, cmd
}

func (m *loginModel) setFocus(i int) tea.Cmd {
	m.inputs[m.focus].Blur()
	m.focus = i
	return m.inputs[i].Focus()
}

// submit checks the form before any request, so a typo gets a clear message.
func (m *loginModel) submit() tea.Cmd {
	server := strings.TrimRight(strings.TrimSpace(m.inputs[fieldServer].Value()), "/")
	user := strings.ToLower(strings.TrimSpace(m.inputs[fieldUser].Value()))
	pass := m.inputs[fieldPassword].Value()
	invite := strings.TrimSpace(m.inputs[fieldInvite].Value())
	fail := func(field int, text string) tea.Cmd {
		m.err = text
		return m.setFocus(field)
	}
	switch {
	case server == "":
		return fail(fieldServer, "enter the server address")
	case !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://"):
		server = "http://" + server
		m.inputs[fieldServer].SetValue(server)
	}
	if err := wire.ValidateUserID(user); err != nil {
		return fail(fieldUser, errText(err))
	}
	if len(pass) < wire.MinPasswordLen {
		return fail(fieldPassword, "the password needs at least 8 characters")
	}
	m.busy, m.err = true, ""
	c, register := m.c, m.register
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		var err error
		if register {
			err = c.be.Register(ctx, server, user, pass, invite)
		} else {
			err = c.be.Login(ctx, server, user, pass)
		}
		if err != nil {
			c.log.Warn("login", "server", server, "user", user, "register", register, "err", err)
		}
		return loginDoneMsg{user: user, server: server, err: err}
	}
}

func (m loginModel) View() string {
	s := m.c.styles
	title := "Log in"
	other := "ctrl+r: register a new account instead"
	if m.register {
		title = "Register"
		other = "ctrl+r: log in to an existing account instead"
	}
	labels := []string{"Server", "User", "Password", "Invite"}
	lines := []string{s.Title.Render("chat") + s.Subtle.Render(" · "+title), ""}
	for i := 0; i < m.fields(); i++ {
		lab := s.InputLabel
		if i == m.focus {
			lab = s.InputFocus
		}
		lines = append(lines, lab.Render(padRight(labels[i], 10))+m.inputs[i].View())
	}
	lines = append(lines, "")
	switch {
	case m.busy:
		lines = append(lines, s.Subtle.Render("contacting the server…"))
	case m.err != "":
		lines = append(lines, s.Error.Render(m.err))
	default:
		lines = append(lines, s.Subtle.Render("enter: next field, then "+strings.ToLower(title)))
	}
	lines = append(lines, s.Subtle.Render(other))
	box := s.Overlay.Render(strings.Join(lines, "\n"))
	return lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, box)
}
