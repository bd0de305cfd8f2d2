package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// The channel browser (C on the inbox): the server's public channels, with
// their topics, joined ones marked; enter joins the one under the cursor (or
// opens it, if joined already) and shows its history; L leaves the joined
// channel under the cursor, as chat channel leave does (joining again shows
// the history as before, so it asks nothing first).

type (
	// channelsLoadedMsg carries the channel list.
	channelsLoadedMsg struct {
		list []wire.ChannelInfo
		err  error
	}
	// channelJoinedMsg: JoinChannel answered.
	channelJoinedMsg struct {
		conv wire.Conversation
		err  error
	}
	// channelLeftMsg: Leave answered.
	channelLeftMsg struct {
		id  string
		err error
	}
)

type channelsModel struct {
	c       *common
	list    []wire.ChannelInfo
	loading bool
	joining bool
	leaving bool
	err     error
	cursor  int
	width   int
	height  int
}

func newChannelsModel(c *common) channelsModel { return channelsModel{c: c} }

func (m *channelsModel) SetSize(w, h int) { m.width, m.height = w, h }

func (m *channelsModel) open() tea.Cmd {
	m.list, m.loading, m.joining, m.leaving, m.err, m.cursor = nil, true, false, false, nil, 0
	return m.load()
}

// load asks for the channel list, the cursor staying where it is.
func (m *channelsModel) load() tea.Cmd {
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		list, err := c.be.Channels(ctx)
		return channelsLoadedMsg{list: list, err: err}
	}
}

func (m channelsModel) Update(msg tea.Msg) (channelsModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case channelsLoadedMsg:
		m.loading, m.err, m.list = false, msg.err, msg.list
		m.cursor = min(m.cursor, max(len(m.list)-1, 0))
	case channelJoinedMsg:
		m.joining = false
		if msg.err != nil {
			m.err = msg.err
			return m, nil
		}
		// The root opens it as it does a conversation just created.
		conv := msg.conv
		return m, func() tea.Msg { return conversationCreatedMsg{conv: conv} }
	case channelLeftMsg:
		m.leaving = false
		if msg.err != nil {
			m.err = msg.err
			return m, nil
		}
		// The list again, from the server: the channel no longer marked.
		return m, m.load()
	case tea.KeyPressMsg:
		switch {
		case matches(msg, k.Down):
			m.cursor = min(m.cursor+1, max(len(m.list)-1, 0))
		case matches(msg, k.Up):
			m.cursor = max(m.cursor-1, 0)
		case msg.String() == "enter":
			if m.joining || m.cursor >= len(m.list) {
				return m, nil
			}
			m.joining, m.err = true, nil
			c, id := m.c, m.list[m.cursor].ConversationID
			return m, func() tea.Msg {
				ctx, cancel := c.call()
				defer cancel()
				conv, err := c.be.JoinChannel(ctx, id)
				return channelJoinedMsg{conv: conv, err: err}
			}
		case matches(msg, k.Leave):
			if m.joining || m.leaving || m.cursor >= len(m.list) || !m.list[m.cursor].Joined {
				return m, nil
			}
			m.leaving, m.err = true, nil
			c, id := m.c, m.list[m.cursor].ConversationID
			return m, func() tea.Msg {
				ctx, cancel := c.call()
				defer cancel()
				return channelLeftMsg{id: id, err: c.be.Leave(ctx, id)}
			}
		case matches(msg, k.Back), matches(msg, k.Channels):
			return m, func() tea.Msg { return closeOverlayMsg{} }
		}
	}
	return m, nil
}

// rows is how many channels the box shows at once.
func (m channelsModel) rows() int { return max(m.height-10, 3) }

func (m channelsModel) View() string {
	s := m.c.styles
	w := min(max(m.width-10, 30), 90)
	lines := []string{s.Title.Render("Channels"), s.Subtle.Render("joining shows the whole history"), ""}
	switch {
	case m.loading:
		lines = append(lines, s.Subtle.Render("loading…"))
	case len(m.list) == 0 && m.err == nil:
		lines = append(lines, s.Subtle.Render("no channels yet (chat channel create NAME)"))
	}
	top := max(m.cursor-m.rows()+1, 0)
	for i := top; i < len(m.list) && i < top+m.rows(); i++ {
		ch := m.list[i]
		mark := "  "
		if ch.Joined {
			mark = "✓ "
		}
		// Names and topics are other users' text: through the sanitiser.
		line := mark + termtext.OneLine(ch.Name)
		if ch.Topic != "" {
			line += s.Subtle.Render(" — " + termtext.OneLine(ch.Topic))
		}
		line = ansi.Truncate(line, w, "…")
		if i == m.cursor {
			line = s.Accent.Render("› ") + line
		} else {
			line = "  " + line
		}
		lines = append(lines, line)
	}
	if m.joining {
		lines = append(lines, "", s.Subtle.Render("joining…"))
	}
	if m.leaving {
		lines = append(lines, "", s.Subtle.Render("leaving…"))
	}
	if m.err != nil {
		lines = append(lines, "", s.Error.Render(ansi.Truncate(errText(m.err), w, "…")))
	}
	if n := len(m.list); n > m.rows() {
		lines = append(lines, "", s.Subtle.Render(fmt.Sprintf("%d of %d", m.cursor+1, n)))
	}
	return s.Overlay.Render(strings.Join(lines, "\n"))
}

func (m channelsModel) ShortHelp() []helpKV {
	k := m.c.keys
	return []helpKV{{"enter", "join / open"}, {"L", "leave"}, {k.Up.Help().Key + " " + k.Down.Help().Key, "move"}, {"esc", "close"}}
}
