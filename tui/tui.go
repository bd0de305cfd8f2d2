// Package tui is the terminal UI of chat: a thin root model that routes on a page
// enum to one model per screen (login, inbox, chat) and overlays (finder, help,
// new chat, members), sharing one set of styles and one keymap. It talks to the
// chat client only through the Backend interface, always from commands.
package tui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// Options configure New.
type Options struct {
	Backend Backend
	// Logger receives the TUI's logs; it must not write to the terminal. Nil
	// discards them.
	Logger *slog.Logger
	// Context bounds every backend call; nil means context.Background.
	Context context.Context
	// Now and Location fix the clock and time zone (tests); nil means the real ones.
	Now      func() time.Time
	Location *time.Location
	// Dark picks the colours before the terminal reports its background; the
	// root model switches when tea.BackgroundColorMsg arrives.
	Dark bool
	// PageSize is the number of messages per history page (default 50).
	PageSize int
	// CallTimeout bounds each backend call (default 20s).
	CallTimeout time.Duration
	// Started is when the program started; the time to the first inbox from
	// the cache is logged against it (docs/tui.md). Zero: when New ran.
	Started time.Time
	// Notify is how a message that arrives unseen is told (notify.go): ""
	// or NotifyBell, NotifyOff, NotifyOSC9, NotifyOSC777, NotifyNotifySend.
	Notify string
	// OpenURL opens an attachment's URL outside the terminal; nil means
	// $BROWSER, else xdg-open (open on macOS).
	OpenURL func(url string) error
	// HighlightWords: a message from someone else holding one of these
	// words is treated as a mention of the user (mentions.go), like
	// weechat's highlight_words.
	HighlightWords []string
	// AfterInbox runs once, when the first inbox (from the cache) is in the
	// model: what would compete with its first paint waits for it (the
	// connection's start, a terminal probe). cmd/chat starts the session here.
	AfterInbox tea.Cmd
	// Pacer slows Bubble Tea's renderer while nothing changes (pacer.go);
	// nil leaves it ticking at its frame rate.
	Pacer *FramePacer
}

// common is what every screen shares: soft-serve's common.Common.
type common struct {
	ctx     context.Context
	be      Backend
	me      string
	server  string
	styles  *Styles
	keys    KeyMap
	now     func() time.Time
	loc     *time.Location
	log     *slog.Logger
	page    int
	timeout time.Duration
	started time.Time
	notify  string // Options.Notify
	openURL func(url string) error
	inputs  inputHistory    // what was sent, by conversation (inputhistory.go)
	muted   map[string]bool // conversations that ring nothing (mute.go)
	// highlight: Options.HighlightWords.
	highlight []string
	marks     readMarks     // read reports on their way (markread.go)
	readGap   time.Duration // the rest between a report's answer and the next
	// parts is the sidebar and status line as last drawn, with what they
	// were drawn from (render.go): the same for every copy of the model.
	parts partsShown
	names names // people's display names (names.go)
	pacer *FramePacer
	// inboxShown is the inbox page's rows as last drawn (inboxrows.go).
	inboxShown inboxShown
	header     headerShown // the chat's header, as last drawn (chatheader.go)

	// posted holds what a screen asks of the root from inside an Update (close
	// this box, open that conversation); the root applies it before that
	// Update returns. Not a command: a command's message queues behind keys
	// already typed, which would then go to the box that was closing.
	posted []tea.Msg
}

// post asks the root to apply msg at the end of the current Update.
func (c *common) post(msg tea.Msg) { c.posted = append(c.posted, msg) }

// call runs a backend call with the per-call timeout; used inside commands only.
func (c *common) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, c.timeout)
}

type page int

const (
	pageLogin page = iota
	pageInbox
	pageChat
)

type overlay int

const (
	overlayNone overlay = iota
	overlayFinder
	overlayHelp
	overlayNewChat
	overlayMembers
	overlaySearch
	overlayMentions
	overlayChannels
)

// Messages the root model sends or that several screens send to it.
type (
	// openConversationMsg asks the root to show a conversation.
	openConversationMsg struct{ entry wire.InboxEntry }
	// closeOverlayMsg closes the finder, help, new chat or members box.
	closeOverlayMsg struct{}
	// eventsClosedMsg: the backend closed its event channel.
	eventsClosedMsg struct{}
	// clockMsg redraws the "reconnecting in N s" countdown.
	clockMsg time.Time
	// flashMsg shows a notice in the status line for a few seconds.
	flashMsg struct {
		text string
		err  bool
	}
	flashExpiredMsg struct{ id int }
)

// Model is the root Bubble Tea model.
type Model struct {
	c       *common
	page    page
	overlay overlay
	width   int
	height  int
	conn    client.State

	// afterInbox is Options.AfterInbox until the first inbox is loaded.
	afterInbox tea.Cmd

	login    loginModel
	inbox    inboxModel
	chat     chatModel
	finder   finderModel
	search   searchModel
	help     helpModel
	newChat  newConvModel
	members  membersModel
	channels channelsModel

	// mentions is the mentions view (@, mentions.go).
	mentions mentionsModel
	// confirmLeave: the chat whose L asked "leave?" (leave.go).
	confirmLeave string

	// resumeWriting: the composer had focus when an overlay opened, so it gets
	// it back when the overlay closes.
	resumeWriting bool
	// blurred: the terminal reported losing focus; nothing counts as read
	// until it comes back.
	blurred bool
	// lastNotify: when a message arriving unseen was last told (notify.go).
	lastNotify time.Time
	// held: what arrived unseen within the hold-off after the last
	// notification, told in one summary at its end (notify.go).
	held heldNotes
	// mouseOff: the mouse is the terminal's (f2): text can be selected and
	// copied as anywhere else, and the wheel no longer scrolls the history.
	mouseOff bool
	// quitArmed: ctrl+c was pressed with work unsent and the user was asked;
	// the next key decides (ctrl+c quits, anything else keeps the client).
	quitArmed bool

	flash    string
	flashErr bool
	flashID  int
	clockOn  bool
}

// New builds the root model. It starts on the inbox when the backend has a
// session, else on the first-run screen.
func New(o Options) Model {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.PageSize <= 0 {
		o.PageSize = 50
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 20 * time.Second
	}
	if o.Started.IsZero() {
		o.Started = time.Now()
	}
	if o.OpenURL == nil {
		o.OpenURL = openURL
	}
	user, server := o.Backend.Session()
	c := &common{
		ctx: o.Context, be: o.Backend, me: user, server: server,
		styles: NewStyles(o.Dark), keys: DefaultKeyMap(),
		now: o.Now, loc: o.Location, log: o.Logger, page: o.PageSize, timeout: o.CallTimeout,
		started: o.Started, notify: o.Notify, openURL: o.OpenURL, highlight: o.HighlightWords,
		pacer: o.Pacer, readGap: readReportGap,
	}
	m := Model{c: c, page: pageInbox, conn: client.State{Status: client.Connecting}, afterInbox: o.AfterInbox}
	m.login = newLoginModel(c, server)
	m.inbox = newInboxModel(c)
	m.chat = newChatModel(c)
	m.finder = newFinderModel(c)
	m.search = newSearchModel(c)
	m.mentions = mentionsModel{c: c}
	m.help = newHelpModel(c)
	m.newChat = newNewConvModel(c)
	m.members = newMembersModel(c)
	m.channels = newChannelsModel(c)
	if user == "" {
		m.page = pageLogin
	}
	return m
}

// Init loads the inbox from the cache, starts reading live events and asks the
// terminal for its background colour.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{waitEvent(m.c.be.Events(), boundaryHold), tea.RequestBackgroundColor}
	if m.page == pageLogin {
		cmds = append(cmds, m.login.Init())
	} else {
		cmds = append(cmds, m.inbox.load(), loadMutes(m.c), loadKeptInput(m.c))
	}
	return tea.Batch(cmds...)
}

// maxEventBatch bounds the events one Update applies together.
const maxEventBatch = 512

// eventBatchMsg is events that were waiting together: applied in one Update,
// so a burst of messages costs one frame, not one per message.
type eventBatchMsg []client.Event

// waitEvent returns the backend's next event, with any others already
// waiting; Update re-arms it after each. Boundary moves are held a little
// for more (eventpump.go).
func waitEvent(ch <-chan client.Event, hold time.Duration) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsClosedMsg{}
		}
		batch := drainEvents(ch, eventBatchMsg{ev})
		if onlyBoundaries(batch) {
			batch = holdBoundaries(ch, batch, hold)
		}
		if len(batch) == 1 {
			return batch[0]
		}
		return batch
	}
}

// Update routes a message to the screen it concerns, then applies what the
// screens posted meanwhile, so that the next key finds the screen it changed
// to. Nothing here does I/O.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	return m.updateAll(msg)
}

// updateAll is Update returning the model as a value, so Live can keep it
// without boxing it (live.go).
func (m Model) updateAll(msg tea.Msg) (Model, tea.Cmd) {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg, tea.MouseWheelMsg, tea.MouseClickMsg, tea.WindowSizeMsg:
		m.c.pacer.keyed() // the user's input is drawn at the full frame rate
	}
	m, cmd := m.update(msg)
	if len(m.c.posted) == 0 {
		return m, cmd
	}
	cmds := []tea.Cmd{cmd}
	for len(m.c.posted) > 0 {
		next := m.c.posted[0]
		m.c.posted = m.c.posted[1:]
		m, cmd = m.update(next)
		cmds = append(cmds, cmd)
	}
	m.c.posted = nil
	return m, tea.Batch(cmds...)
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
		return m, nil

	case tea.BlurMsg:
		m.blurred = true
		m.resize()
		return m, nil

	case tea.FocusMsg:
		m.blurred = false
		m.resize()
		var cmd tea.Cmd
		if m.page == pageChat {
			cmd = m.chat.maybeMarkRead()
			m.syncRead()
		}
		return m, cmd

	case tea.BackgroundColorMsg:
		m.c.styles = NewStyles(msg.IsDark())
		m.restyle()
		return m, nil

	case tea.KeyPressMsg:
		return m.handleKey(msg)

	case tea.MouseClickMsg:
		if m.overlay == overlayNone && msg.Button == tea.MouseLeft {
			if m.page == pageInbox || m.sidebar() && msg.X < sidebarWidth {
				if e, ok := m.inbox.entryAt(msg.Y); ok {
					m.c.post(openConversationMsg{e})
				}
			}
		}
		return m, nil

	case tea.MouseWheelMsg:
		switch {
		case m.overlay != overlayNone:
		case m.sidebar() && msg.X < sidebarWidth:
			var cmd tea.Cmd
			m.inbox, cmd = m.inbox.Update(msg)
			return m, cmd
		case m.page == pageChat:
			var cmd tea.Cmd
			m.chat, cmd = m.chat.Update(msg)
			return m, cmd
		case m.page == pageInbox:
			var cmd tea.Cmd
			m.inbox, cmd = m.inbox.Update(msg)
			return m, cmd
		}
		return m, nil

	case client.Event:
		cmd := m.handleEvent(msg)
		return m, tea.Batch(cmd, waitEvent(m.c.be.Events(), boundaryHold))

	case eventBatchMsg:
		cmds := make([]tea.Cmd, 0, len(msg)+1)
		for _, ev := range msg {
			cmds = append(cmds, m.handleEvent(ev))
		}
		return m, tea.Batch(append(cmds, waitEvent(m.c.be.Events(), boundaryHold))...)

	case eventsClosedMsg:
		m.conn = client.State{Status: client.Offline, Unsent: m.conn.Unsent}
		m.chat.disconnected = true
		return m, nil

	case clockMsg:
		if m.conn.Status == client.Reconnecting {
			return m, clockTick()
		}
		m.clockOn = false
		return m, nil

	case flashMsg:
		m.flashID++
		m.flash, m.flashErr = termtext.Clean(msg.text, false), msg.err
		id := m.flashID
		return m, tea.Tick(5*time.Second, func(time.Time) tea.Msg { return flashExpiredMsg{id} })

	case notifyHeldMsg:
		return m, m.notifyHeld()

	case readRestedMsg:
		return m, m.c.readRested(msg)

	case flashExpiredMsg:
		if msg.id == m.flashID {
			m.flash = ""
		}
		return m, nil

	case loginDoneMsg:
		var cmd tea.Cmd
		m.login, cmd = m.login.Update(msg)
		if msg.err != nil {
			return m, cmd
		}
		m.c.me, m.c.server = msg.user, msg.server
		m.page = pageInbox
		m.resize()
		m.c.muted = nil // the new account's, read next
		return m, tea.Batch(cmd, m.inbox.load(), loadMutes(m.c), loadKeptInput(m.c))

	case openConversationMsg:
		m.overlay = overlayNone
		m.page = pageChat
		m.inbox.selectID(msg.entry.ConversationID)
		cmd := m.chat.open(msg.entry)
		m.resize()
		return m, cmd

	case closeOverlayMsg:
		return m, m.closeOverlay()

	case openAtMsg:
		m.overlay = overlayNone
		if m.page == pageChat && m.chat.conv.ConversationID == msg.entry.ConversationID {
			return m, m.chat.jump(msg.seq)
		}
		e := msg.entry
		if known, ok := m.inbox.entry(e.ConversationID); ok {
			e = known
		}
		m.page = pageChat
		m.inbox.selectID(e.ConversationID)
		cmd := m.chat.open(e)
		m.resize()
		return m, tea.Batch(cmd, m.chat.jump(msg.seq))

	case conversationCreatedMsg:
		var cmd tea.Cmd
		m.newChat, cmd = m.newChat.Update(msg)
		if msg.err != nil {
			if m.overlay != overlayNewChat {
				// From the finder: its box closes, the reason stays on the status line.
				return m, tea.Batch(m.closeOverlay(), flash("could not start the chat: "+errText(msg.err), true))
			}
			return m, cmd
		}
		e := entryFromConversation(msg.conv, m.c.me)
		m.inbox.upsert(e)
		m.c.post(openConversationMsg{e})
		return m, tea.Batch(cmd, m.inbox.load())

	case inboxLoadedMsg:
		if !m.inbox.loaded && msg.err == nil {
			// The next frame paints it; the renderer adds at most one frame time.
			m.c.log.Info("inbox loaded from cache", "conversations", len(msg.entries),
				"since_start", time.Since(m.c.started))
		}
		var cmd tea.Cmd
		m.inbox, cmd = m.inbox.Update(msg)
		m.syncRead()
		names := m.c.askNames(inboxNames(msg.entries, m.c.me)...)
		if after := m.afterInbox; after != nil {
			// The first inbox: the network waits until it is painted, names too.
			m.afterInbox = nil
			names = tea.Sequence(after, names)
		}
		return m, tea.Batch(cmd, names)

	case profilesMsg:
		m.namesUpdate(msg)
		return m, nil

	case mutesMsg, muteSavedMsg, toggleMuteMsg:
		return m, m.updateMutes(msg)

	case leftMsg:
		return m, m.left(msg)

	case keptInputMsg:
		m.applyKeptInput(msg)
		return m, nil

	case keptSavedMsg:
		if msg.err != nil {
			m.c.log.Error("save drafts or input history", "err", msg.err)
			return m, flash("could not keep the draft: "+errText(msg.err), true)
		}
		return m, nil

	case historyMsg, sendQueuedMsg, statusesMsg, convInfoMsg, markedReadMsg, presenceMsg, presenceTickMsg, typingExpiredMsg, editedMsg:
		var cmd tea.Cmd
		m.chat, cmd = m.chat.Update(msg)
		if sq, ok := msg.(sendQueuedMsg); ok && sq.err == nil {
			m.inbox.applyMessage(sq.msg, true)
		}
		if _, ok := msg.(markedReadMsg); ok {
			m.syncRead()
		}
		if h, ok := msg.(historyMsg); ok {
			cmd = tea.Batch(cmd, m.c.askNames(membershipNames(h.page.Messages)...))
		}
		if ci, ok := msg.(convInfoMsg); ok && ci.err == nil {
			ids := make([]string, len(ci.conv.Participants))
			for i, p := range ci.conv.Participants {
				ids[i] = p.UserID
			}
			cmd = tea.Batch(cmd, m.c.askNames(ids...))
		}
		return m, cmd

	case membersLoadedMsg:
		var cmd tea.Cmd
		m.members, cmd = m.members.Update(msg)
		return m, cmd

	case membersAddedMsg:
		var cmd tea.Cmd
		m.members, cmd = m.members.Update(msg)
		if msg.err == nil {
			m.chat, _ = m.chat.Update(client.ConversationEvent{Conversation: msg.conv})
		}
		return m, cmd
	}

	// Anything else (cursor blinks, component ticks) goes to whatever is focused.
	cmds = append(cmds, m.routeToFocused(msg))
	return m, tea.Batch(cmds...)
}

func (m *Model) routeToFocused(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch m.overlay {
	case overlayFinder:
		m.finder, cmd = m.finder.Update(msg)
		return cmd
	case overlaySearch:
		m.search, cmd = m.search.Update(msg)
		return cmd
	case overlayMentions:
		m.mentions, cmd = m.mentions.Update(msg)
		return cmd
	case overlayNewChat:
		m.newChat, cmd = m.newChat.Update(msg)
		return cmd
	case overlayHelp:
		return nil
	case overlayMembers:
		m.members, cmd = m.members.Update(msg)
		return cmd
	case overlayChannels:
		m.channels, cmd = m.channels.Update(msg)
		return cmd
	}
	switch m.page {
	case pageLogin:
		m.login, cmd = m.login.Update(msg)
	case pageInbox:
		m.inbox, cmd = m.inbox.Update(msg)
	case pageChat:
		m.chat, cmd = m.chat.Update(msg)
	}
	return cmd
}

// typing reports whether the focused element takes text, so that printable keys
// such as ? and u go to it rather than to global bindings.
func (m *Model) typing() bool {
	switch m.overlay {
	case overlayFinder, overlayNewChat, overlaySearch:
		return true
	case overlayMembers:
		return m.members.adding
	case overlayHelp:
		return false
	}
	switch m.page {
	case pageLogin:
		return true
	case pageChat:
		return m.chat.composing
	}
	return false
}

func (m Model) handleKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.c.keys
	armed := m.quitArmed
	m.quitArmed = false
	// A notice is about the key before ("press D again", "ctrl+c again to
	// quit"): the next key answers it, so it goes, rather than outliving the
	// action it offered by seconds. Errors keep their time on screen.
	if !m.flashErr {
		m.flash = ""
	}
	if matches(msg, k.Quit) {
		// With text in the composer, the first ctrl+c clears it, as in a shell.
		if m.overlay == overlayNone && m.page == pageChat && m.chat.composing && m.chat.compose.Value() != "" {
			m.chat.compose.Reset()
			m.chat.afterLayoutChange()
			if u := m.unsent(); u != "" {
				m.quitArmed = true
				return m, flash("cleared; "+u+" — ctrl+c again to quit", false)
			}
			return m, flash("cleared; ctrl+c again quits", false)
		}
		// Drafts are kept across restarts (drafts.go), but a stray ctrl+c
		// (an irssi or weechat hand reaching for "cancel") still asks when
		// text or messages are waiting: the outbox is sent only once the
		// client runs again.
		if u := m.unsent(); u != "" && !armed {
			m.quitArmed = true
			return m, flash(u+" — ctrl+c again to quit", false)
		}
		return m, m.quit()
	}
	typing := m.typing()
	if m.page != pageLogin {
		switch {
		case matches(msg, k.Help) && (!typing || msg.String() == "f1"):
			if m.overlay == overlayHelp {
				m.overlay = overlayNone
				return m, nil
			}
			m.help.top, m.help.page = 0, 0
			m.openOverlay(overlayHelp)
			return m, nil
		case matches(msg, k.Finder) && m.overlay != overlayFinder:
			m.openOverlay(overlayFinder)
			return m, m.finder.open(m.inbox.entries)
		case matches(msg, k.Search) && !typing && m.overlay == overlayNone:
			var conv wire.InboxEntry
			if m.page == pageChat {
				conv = m.chat.conv
			}
			m.openOverlay(overlaySearch)
			return m, m.search.open(conv, m.inbox.entries)
		case matches(msg, k.Mentions) && !typing && m.overlay == overlayNone:
			m.openOverlay(overlayMentions)
			return m, m.mentions.open(m.inbox.entries)
		case matches(msg, k.Reconnect):
			if m.conn.Status == client.Connected {
				return m, nil
			}
			be := m.c.be
			return m, tea.Batch(func() tea.Msg { be.RetryNow(); return nil }, flash("reconnecting now…", false))
		case matches(msg, k.Mouse):
			m.mouseOff = !m.mouseOff
			if m.mouseOff {
				return m, flash("mouse released: select and copy text as in any terminal; f2 takes it back", false)
			}
			return m, flash("mouse captured: the wheel scrolls; f2 to select text", false)
		case matches(msg, k.NextUnread) && (!typing || msg.String() == "alt+n"):
			// From the inbox, an unread conversation under the cursor is the
			// next one; from a chat, the one open is not.
			if e, ok := m.inbox.selected(); ok && m.page == pageInbox && e.Unread > 0 {
				m.c.post(openConversationMsg{e})
				return m, nil
			}
			if e, ok := m.inbox.nextUnread(m.currentConv()); ok {
				m.c.post(openConversationMsg{e})
				return m, nil
			}
			return m, flash("no unread conversations", false)
		}
	}
	if m.overlay == overlayHelp {
		// Up and down scroll a card taller than the screen, left and right
		// (tab) turn its pages; any other key closes it: it is only a card
		// to read.
		switch msg.String() {
		case "right", "l", "tab", "space", "left", "h", "shift+tab":
			if m.help.turn(helpTurn(msg.String())) {
				return m, nil
			}
		}
		switch {
		case matches(msg, k.Down), matches(msg, k.PageDown):
			m.help.scroll(1)
			return m, nil
		case matches(msg, k.Up), matches(msg, k.PageUp):
			m.help.scroll(-1)
			return m, nil
		}
		return m, m.closeOverlay()
	}
	if m.overlay != overlayNone {
		return m, m.routeToFocused(msg)
	}
	switch m.page {
	case pageInbox:
		switch {
		case matches(msg, k.NewDirect):
			m.openOverlay(overlayNewChat)
			return m, m.newChat.open(false)
		case matches(msg, k.NewGroup):
			m.openOverlay(overlayNewChat)
			return m, m.newChat.open(true)
		case matches(msg, k.Channels):
			m.openOverlay(overlayChannels)
			return m, m.channels.open()
		case msg.String() == "q":
			return m, m.quit()
		}
	case pageChat:
		if !m.chat.composing {
			if cmd, ok := m.leaveKey(msg); ok {
				return m, cmd
			}
			switch {
			case matches(msg, k.Back) && m.chat.selected == 0: // esc first lets go of a selection
				m.page = pageInbox
				m.chat.close()
				m.resize()
				return m, nil
			case matches(msg, k.Members):
				m.openOverlay(overlayMembers)
				return m, m.members.open(m.chat.conv)
			}
		}
	}
	return m, m.routeToFocused(msg)
}

func (m *Model) openOverlay(o overlay) {
	if m.overlay == overlayNone {
		m.resumeWriting = m.page == pageChat && m.chat.composing
	}
	m.overlay = o
	m.chat.blurCompose()
}

func (m *Model) closeOverlay() tea.Cmd {
	m.overlay = overlayNone
	if m.page == pageChat && m.resumeWriting {
		return m.chat.focusCompose()
	}
	return nil
}

func (m *Model) currentConv() string {
	if m.page == pageChat {
		return m.chat.conv.ConversationID
	}
	if e, ok := m.inbox.selected(); ok {
		return e.ConversationID
	}
	return ""
}

// handleEvent applies a live event to the inbox and the open chat.
func (m *Model) handleEvent(ev client.Event) tea.Cmd {
	switch ev := ev.(type) {
	case client.StreamPausedEvent:
		return nil // Live tells the pacer once the View is decided (live.go)
	case client.InboxEvent:
		if ev.Offline { // the cache is kept; say why it may be behind
			return tea.Batch(m.inbox.load(), flash(offlineInboxNotice, false))
		}
		return m.inbox.load()
	case client.StateEvent:
		names := m.refreshNamesOnReconnect(m.conn, ev.State) // names_refresh.go
		m.conn = ev.State
		m.chat.disconnected = ev.State.Status == client.Reconnecting || ev.State.Status == client.Offline
		if ev.State.Status == client.Connected && m.page == pageChat && m.chat.stale {
			return tea.Batch(m.chat.loadNewest(), names)
		}
		if ev.State.LoggedOut && m.page != pageLogin {
			m.page, m.overlay = pageLogin, overlayNone
			m.chat.close()
			m.login.err = "the server refused the stored login: log in again"
			if ev.State.Disabled {
				m.login.err = "account disabled: ask your server's admin"
			}
			m.resize()
			return m.login.Init()
		}
		if ev.State.Status == client.Reconnecting && !m.clockOn {
			m.clockOn = true
			return clockTick()
		}
		return names
	case client.MessageEvent:
		// One message is a commit of one: the same path (messagebatch.go).
		return m.handleMessages([]wire.Message{ev.Message})
	case client.MessagesEvent:
		return m.handleMessages(ev.Messages) // messagebatch.go
	case client.ConversationEvent:
		return tea.Batch(m.inbox.load(), m.chatEvent(ev))
	case client.SentEvent, client.StatusEvent, client.TypingEvent, client.ChangedEvent:
		return m.chatEvent(ev)
	case client.ProfileEvent:
		m.namesUpdate(ev)
		return nil
	case client.SendFailedEvent:
		m.inbox.notSent(ev.ConversationID, ev.MessageID)
		return tea.Batch(m.chatEvent(ev), flash("message not sent: "+errText(ev.Err), true))
	case client.RestoredEvent:
		// The cache lost what the server lost: what is on screen may show it,
		// so the open chat is read again from the cache, from the newest.
		cmds := []tea.Cmd{m.inbox.load(), flash(ev.Notice(), ev.Lost > 0)}
		if m.page == pageChat && m.chat.active && slices.Contains(ev.Conversations, m.chat.conv.ConversationID) {
			e := m.chat.conv
			e.Unread = 0
			cmds = append(cmds, m.chat.open(e))
		}
		return tea.Batch(cmds...)
	}
	return nil
}

// syncRead gives the inbox the open chat's read boundary and what is unread
// after it: opening a chat clears only what its screen showed.
func (m *Model) syncRead() {
	if m.page == pageChat && m.chat.readSent > 0 {
		m.inbox.markRead(m.chat.conv.ConversationID, m.chat.readSent, m.chat.unreadLeft)
	}
}

func (m *Model) chatEvent(ev client.Event) tea.Cmd {
	var cmd tea.Cmd
	m.chat, cmd = m.chat.Update(ev)
	return cmd
}

func clockTick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// unsent describes what quitting would leave behind: drafts (kept only in
// memory) and messages of the open chat not yet accepted by the server. It is
// empty when nothing would be lost.
func (m *Model) unsent() string {
	drafts := 0
	for id, d := range m.chat.drafts {
		// The open chat's entry is stale: its text is the composer's.
		if d != "" && id != m.chat.conv.ConversationID {
			drafts++
		}
	}
	if m.chat.compose.Value() != "" {
		drafts++
	}
	var parts []string
	if drafts > 0 {
		parts = append(parts, plural(drafts, "draft", "drafts")+" unsent")
	}
	// The outbox of every chat, as the client last counted it, not only the
	// open chat's: quitting leaves them unsent until the next start.
	if n := max(len(m.chat.pending), m.conn.Unsent); n > 0 {
		parts = append(parts, plural(n, "message", "messages")+" still sending")
	}
	return strings.Join(parts, ", ")
}

// offlineInboxNotice: the server answered the inbox from its offline copy
// (its store is out: docs/reliability.md), and this device kept its own.
const offlineInboxNotice = "the server's store is out: the inbox is this device's copy and may be behind"

func flash(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return flashMsg{text, isErr} }
}

// Wide terminals show the conversation list beside the chat, as weechat and
// gomuks do.
const (
	sidebarMinWidth = 110
	sidebarWidth    = 28
)

func (m *Model) sidebar() bool { return m.page == pageChat && m.width >= sidebarMinWidth }

func (m *Model) resize() {
	h := max(m.height-1, 1) // the status line
	m.chat.shown = m.page == pageChat
	m.login.SetSize(m.width, h)
	if m.sidebar() {
		m.inbox.compact = true
		m.inbox.SetSize(sidebarWidth, h)
		m.chat.SetSize(m.width-sidebarWidth-2, h)
	} else {
		m.inbox.compact = false
		m.inbox.SetSize(m.width, h)
		m.chat.SetSize(m.width, h)
	}
	m.finder.SetSize(m.width, h)
	m.search.SetSize(m.width, h)
	m.mentions.SetSize(m.width, h)
	m.help.SetSize(m.width, h)
	m.newChat.SetSize(m.width, h)
	m.members.SetSize(m.width, h)
	m.channels.SetSize(m.width, h)
	m.chat.active = m.page == pageChat && !m.blurred
}

func (m *Model) restyle() {
	m.login.restyle()
	m.chat.restyle()
	m.finder.restyle()
	m.search.restyle()
	m.newChat.restyle()
	m.members.restyle()
}

// View draws the current page, any overlay on top of it, and the status line.
func (m Model) View() tea.View {
	m.c.pacer.viewed()
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	if m.mouseOff {
		v.MouseMode = tea.MouseModeNone
	}
	v.ReportFocus = true
	v.WindowTitle = "chat"
	if m.c.me != "" {
		v.WindowTitle = "chat · " + m.c.me
		if n, label := m.inbox.totalUnread(); n > 0 {
			v.WindowTitle = fmt.Sprintf("chat · %s (%s)", m.c.me, label)
		}
		if n := m.inbox.totalMentions(); n > 0 { // muted chats too: a mention asks for attention
			v.WindowTitle += " @" + wire.UnreadLabel(n)
		}
	}
	return v
}

// render returns the screen as a string of exactly height lines of width cells.
func (m Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.height == 1 {
		return m.statusShown()
	}
	h := max(m.height-1, 1)
	p := &m.c.parts
	// The chat's lines go straight into the frame's buffer; other pages
	// (and a chat under an overlay) come as a string first.
	buf := p.frameBuf[:0]
	var body string
	inBuf := false
	switch m.page {
	case pageLogin:
		body = m.login.View()
	case pageInbox:
		inBuf = true
		for i, l := range m.inbox.pageLines(m.width, h) {
			if i > 0 {
				buf = append(buf, '\n')
			}
			buf = append(buf, l...)
		}
	case pageChat:
		lines, widths := m.chat.viewLines()
		inBuf = true
		if m.sidebar() {
			// Both sides are cut and padded to their widths, so the lines join
			// as they are: measuring them again (lipgloss.JoinHorizontal, then
			// fitBlock) was most of a frame's time in a busy chat.
			left := m.sidebarLines(h)
			right := fitLines(lines, widths, m.width-sidebarWidth-2, h)
			rule := m.c.styles.Faint.Render("│ ")
			for i := range h {
				if i > 0 {
					buf = append(buf, '\n')
				}
				buf = append(buf, left[i]...)
				buf = append(buf, rule...)
				buf = append(buf, right[i]...)
			}
		} else {
			for i, l := range fitLines(lines, widths, m.width, h) {
				if i > 0 {
					buf = append(buf, '\n')
				}
				buf = append(buf, l...)
			}
		}
	}
	if !inBuf {
		body = fitBlock(body, m.width, h)
	}
	var box string
	switch m.overlay {
	case overlayFinder:
		box = m.finder.View()
	case overlaySearch:
		box = m.search.View()
	case overlayMentions:
		box = m.mentions.View()
	case overlayHelp:
		box = m.help.View()
	case overlayNewChat:
		box = m.newChat.View()
	case overlayMembers:
		box = m.members.View()
	case overlayChannels:
		box = m.channels.View()
	}
	if box != "" {
		if inBuf {
			body, inBuf = string(buf), false
		}
		bw, bh := lipgloss.Width(box), lipgloss.Height(box)
		x := max((m.width-bw)/2, 0)
		y := max((h-bh)/3, 0)
		body = lipgloss.NewCompositor(
			lipgloss.NewLayer(body),
			lipgloss.NewLayer(box).X(x).Y(y).Z(1),
		).Render()
		body = fitBlock(body, m.width, h)
	}
	if !inBuf {
		buf = append(buf[:0], body...)
	}
	buf = append(buf, '\n')
	buf = append(buf, m.statusShown()...)
	return p.keepFrame(buf)
}

// fitBlock pads or cuts s to exactly h lines of exactly w cells, so that a
// resize never leaves stale cells behind.
func fitBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lw := ansi.StringWidth(l)
		switch {
		case lw > w:
			lines[i] = ansi.Truncate(l, w, "")
		case lw < w:
			lines[i] = l + strings.Repeat(" ", w-lw)
		}
	}
	return strings.Join(lines, "\n")
}

// errText is an error as the screen shows it; it may come from a server, so it
// is sanitised like message text.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return termtext.Clean(wireMessage(err), false)
}

// wireMessage shows a protocol error's own message and any other error whole.
func wireMessage(err error) string {
	if e := (*wire.Error)(nil); asWire(err, &e) {
		return e.Message
	}
	return err.Error()
}
