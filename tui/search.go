package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// SearchHit is a message a search found; Snippet has the matched words
// between SnippetStart and SnippetEnd.
type SearchHit struct {
	Message wire.Message
	Snippet string
}

// The marks around matched words in SearchHit.Snippet (localstore's).
const (
	SnippetStart = "\x02"
	SnippetEnd   = "\x03"
)

// searchResultsMsg answers one query of the search box.
type searchResultsMsg struct {
	query, conv string
	hits        []SearchHit
	more        bool // another page follows
	next        bool // a page after those shown, to add to them
	err         error
	indexing    int // messages still to index before the search can run
}

// openAtMsg asks the root to show a conversation at one message.
type openAtMsg struct {
	entry wire.InboxEntry
	seq   int64
}

// searchModel is the search box (/): messages cached on this machine with
// every word typed, newest first; enter shows one in its conversation.
type searchModel struct {
	c     *common
	input textinput.Model
	conv  wire.InboxEntry   // the conversation searched; empty: all
	names map[string]string // conversation titles, by id
	hits  []SearchHit
	err   error
	// asked is the query whose answer is awaited (""): until it comes the
	// box says so, not "nothing"; indexing counts the messages the cache
	// still indexes before it can answer.
	asked    string
	indexing int
	// more: the results go on past those shown; the next page is asked
	// for as the cursor reaches the last (loadingMore until it comes).
	more, loadingMore bool
	cursor            int
	width             int
	height            int
}

const searchLimit = 50

func newSearchModel(c *common) searchModel {
	ti := textinput.New()
	ti.Prompt = "/ "
	ti.Placeholder = "words to find"
	m := searchModel{c: c, input: ti}
	m.restyle()
	return m
}

func (m *searchModel) restyle() { m.input.SetStyles(inputStyles(m.c.styles)) }

func (m *searchModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.input.SetWidth(m.boxWidth() - 6)
}

func (m *searchModel) boxWidth() int { return min(max(m.width-4, 20), 90) }

// open starts a search of one conversation (conv set) or of all of entries.
func (m *searchModel) open(conv wire.InboxEntry, entries []wire.InboxEntry) tea.Cmd {
	m.conv, m.hits, m.err, m.cursor, m.asked, m.indexing = conv, nil, nil, 0, "", 0
	m.more, m.loadingMore = false, false
	m.names = make(map[string]string, len(entries))
	for _, e := range entries {
		m.names[e.ConversationID] = m.c.title(e)
	}
	m.input.Reset()
	return m.input.Focus()
}

func (m searchModel) Update(msg tea.Msg) (searchModel, tea.Cmd) {
	k := m.c.keys
	switch msg := msg.(type) {
	case searchResultsMsg:
		if msg.query != strings.TrimSpace(m.input.Value()) || msg.conv != m.conv.ConversationID {
			return m, nil // an answer to what was typed before
		}
		if msg.indexing > 0 && msg.err == nil {
			m.indexing = msg.indexing
			return m, m.search(msg.query) // the next step
		}
		if msg.next {
			m.loadingMore = false
			if msg.err != nil {
				m.err = msg.err
				return m, nil
			}
			m.hits, m.more = append(m.hits, msg.hits...), msg.more
			return m, m.c.askNames(hitNames(msg.hits)...) // searchnames.go
		}
		m.hits, m.err, m.cursor, m.asked, m.indexing = msg.hits, msg.err, 0, "", 0
		m.more, m.loadingMore = msg.more, false
		return m, m.c.askNames(hitNames(msg.hits)...)
	case tea.KeyPressMsg:
		switch {
		case matches(msg, k.FinderClose):
			m.input.Blur()
			m.c.post(closeOverlayMsg{})
			return m, nil
		case matches(msg, k.FinderOpen):
			if m.cursor < len(m.hits) {
				h := m.hits[m.cursor].Message
				m.input.Blur()
				m.c.post(openAtMsg{entry: wire.InboxEntry{ConversationID: h.ConversationID}, seq: h.SeqNo})
			}
			return m, nil
		case matches(msg, k.FinderUp):
			m.cursor = max(m.cursor-1, 0)
			return m, nil
		case matches(msg, k.FinderDown):
			m.cursor = min(m.cursor+1, max(len(m.hits)-1, 0))
			return m, m.searchMore()
		}
	}
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if q := strings.TrimSpace(m.input.Value()); m.input.Value() != before {
		if q == "" {
			m.hits, m.err, m.asked = nil, nil, ""
			return m, cmd
		}
		m.asked = q
		return m, tea.Batch(cmd, m.search(q))
	}
	return m, cmd
}

// indexStep is how many messages one step of indexing takes on: about a
// tenth of a second, so the count on screen moves and no step nears the
// call's timeout (a backlog of tens of thousands took longer than it).
const indexStep = 2000

// search asks the backend for q; the cache answers in milliseconds, so every
// change of the query is a search. Messages that arrived since the last
// search are indexed first, a step at a time (the answer counts what is
// left, and Update asks again).
func (m searchModel) search(q string) tea.Cmd {
	c, conv := m.c, m.conv.ConversationID
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		left, err := c.be.IndexForSearch(ctx, indexStep)
		if err != nil || left > 0 {
			return searchResultsMsg{query: q, conv: conv, err: err, indexing: left}
		}
		hits, more, err := c.be.Search(ctx, q, conv, nil, searchLimit)
		return searchResultsMsg{query: q, conv: conv, hits: hits, more: more, err: err}
	}
}

// searchMore asks for the page after the last hit shown.
func (m *searchModel) searchMore() tea.Cmd {
	if !m.more || m.loadingMore || len(m.hits) == 0 || m.cursor < len(m.hits)-1 {
		return nil
	}
	m.loadingMore = true
	c, conv, q, last := m.c, m.conv.ConversationID, strings.TrimSpace(m.input.Value()), m.hits[len(m.hits)-1].Message
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		hits, more, err := c.be.Search(ctx, q, conv, &last, searchLimit)
		return searchResultsMsg{query: q, conv: conv, hits: hits, more: more, err: err, next: true}
	}
}

func (m searchModel) View() string {
	s := m.c.styles
	w := m.boxWidth() - 4
	title := "Search all conversations"
	if m.conv.ConversationID != "" {
		title = "Search " + m.c.title(m.conv)
	}
	lines := []string{s.Title.Render(ansi.Truncate(title, w, "…")), m.input.View(), ""}
	rows := min(12, max(m.height-9, 1))
	first := max(m.cursor-rows+1, 0)
	for i := first; i < len(m.hits) && i < first+rows; i++ {
		h := m.hits[i]
		head := h.Message.Timestamp.In(m.c.loc).Format("Jan 2 15:04") + " " + oneLine(m.c.who(h.Message.SenderID))
		if m.conv.ConversationID == "" {
			name, ok := m.names[h.Message.ConversationID]
			if !ok {
				name = h.Message.ConversationID
			}
			head = name + " · " + head
		}
		bar := "  "
		if i == m.cursor {
			bar = s.Cursor.Render("▌ ")
			head = s.Title.Render(ansi.Truncate(head, w-2, "…"))
		} else {
			head = s.Subtle.Render(ansi.Truncate(head, w-2, "…"))
		}
		lines = append(lines, bar+head, "  "+m.snippet(m.hitText(h), w-2))
	}
	switch {
	case m.err != nil:
		lines = append(lines, s.Error.Render("  "+errText(m.err)))
	case m.loadingMore:
		lines = append(lines, s.Subtle.Render("  more…"))
	case m.more && first+rows >= len(m.hits): // the last hit is in view
		lines = append(lines, s.Subtle.Render("  ↓ more"))
	case m.indexing > 0:
		lines = append(lines, s.Subtle.Render(fmt.Sprintf("  indexing %d messages…", m.indexing)))
	case m.asked != "" && len(m.hits) == 0:
		lines = append(lines, s.Subtle.Render("  searching…"))
	case strings.TrimSpace(m.input.Value()) != "" && len(m.hits) == 0:
		lines = append(lines, s.Subtle.Render("  nothing in the messages on this machine"),
			s.Subtle.Render("  (g in a chat loads all of it; chat fetch too)"))
	}
	return s.Overlay.Width(m.boxWidth()).Render(strings.Join(lines, "\n"))
}

// snippet draws a hit's text on one line, the matched words picked out.
func (m searchModel) snippet(sn string, w int) string {
	s := m.c.styles
	var b strings.Builder
	width := 0
	for part := range strings.SplitSeq(sn, SnippetStart) {
		hit, rest, found := strings.Cut(part, SnippetEnd)
		if !found {
			hit, rest = "", part
		}
		for _, seg := range []struct {
			text string
			on   bool
		}{{termtext.Clean(hit, false), true}, {termtext.Clean(rest, false), false}} { // spaces kept: they join the pieces
			if seg.text == "" || width >= w {
				continue
			}
			t := ansi.Truncate(seg.text, w-width, "…")
			width += ansi.StringWidth(t)
			if seg.on {
				b.WriteString(s.Accent.Bold(true).Render(t))
			} else {
				b.WriteString(s.Content.Render(t))
			}
		}
	}
	return b.String()
}

// ShortHelp is the search box's keys for the status line.
func (m searchModel) ShortHelp() []helpKV {
	k := m.c.keys
	return kv(k.FinderDown, k.FinderOpen, k.FinderClose)
}
