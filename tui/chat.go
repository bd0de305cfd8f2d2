package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// Messages the chat screen sends itself from its commands.
type (
	// historyMsg is one page of history (before 0: the newest page).
	historyMsg struct {
		conv   string
		before int64
		page   Page
		err    error
		// fresh: the page replaces the window (g, the first unread);
		// below: it continues the window downward (window.go). gen is the
		// window it was asked for: a page for one that was replaced since
		// would leave a gap in the new one.
		fresh, below bool
		gen          int
	}
	// sendQueuedMsg: Backend.Send accepted a message (pending until client.SentEvent).
	sendQueuedMsg struct {
		conv string
		msg  wire.Message
		err  error
		text string // what was typed, given back to the composer on error
	}
	statusesMsg struct {
		conv     string
		statuses []wire.MemberStatus
		err      error
	}
	convInfoMsg struct {
		conv wire.Conversation
		err  error
	}
	markedReadMsg struct {
		conv string
		seq  int64
		err  error
	}
)

// chatModel shows one conversation: a header, the history scrolled from the
// bottom, and the composer. History lines are rendered once per change and
// cached, so View only slices them.
type chatModel struct {
	c            *common
	conv         wire.InboxEntry
	participants []wire.Participant
	statuses     map[string]wire.MemberStatus
	topic        string // a group's or channel's, shown in the header

	msgs    []wire.Message // stored, ascending seq_no, no duplicates
	pending []wire.Message // sent by us, not yet stored; in send order
	failed  map[string]string
	// early holds stored answers that arrived before Send returned (the
	// server can answer within the time the command takes to report back);
	// addPending applies them so the message does not stay pending forever.
	early map[string]wire.SendResponse

	loaded       bool // the newest page has arrived
	more         bool // older pages may exist
	loadingOlder bool
	// The window of loaded messages (window.go): behind while it stops
	// short of the newest message, lastSeq the newest seq_no known.
	behind, loadingNewer bool
	lastSeq              int64
	windowGen            int // counts the windows started, for historyMsg.gen
	// toOldest: g/Home asked for the first message; older pages load one
	// after another (keys stay live) until it is there, or another key moves.
	toOldest bool
	// toUnread: the chat opened with unread messages; older pages load until
	// the first unread is there, and the view starts at its marker.
	toUnread bool
	newLine  int // index in lines of the "new" marker; -1 when none
	loadErr  error
	stale    bool  // the last page came from the cache only (offline)
	readSent int64 // highest seq reported read
	// unreadLeft counts the messages from others after readSent, for the
	// inbox: opening at the first unread leaves the rest unread.
	unreadLeft int64
	unreadFrom int64 // first unread seq when the chat was opened (0: none); marks "new"

	compose   composer
	composing bool
	// Acting on a message (actions.go): the selection (its seq_no, 0: none,
	// and its first line once rendered), what the composer writes and on
	// which message, and a delete waiting for its second D.
	selected int64
	selLine  int
	// What render needs to draw only what is new (render.go): a count of
	// changes to m.msgs other than appends, the widest sender name seen, and
	// what m.lines was drawn from.
	msgsVersion   int
	senderMax     int
	drawn         drawnState
	jumpTo        int64 // a search result to show, once older pages bring it
	action        composeAction
	target        wire.Message
	confirmDelete int64
	// actionFromReading: the action was started in reading mode, so ending
	// it (a reaction or edit sent, any action cancelled) goes back there —
	// otherwise the reader's next k or j would be typed.
	actionFromReading bool
	// disconnected: our own connection is down (reconnecting or offline),
	// so what presence last said of the others is no longer known.
	disconnected bool
	// stashed: the draft in the composer when a reply, reaction or edit
	// took it over; it comes back when the action ends.
	stashed string
	drafts  map[string]string // unsent text by conversation
	histPos int               // input history: how far back the composer shows (0: not browsing)
	active  bool

	// lineCache keeps each message's rendered lines: a tick or a new message
	// re-renders one message, not the whole history.
	lineCache map[string]cachedLines
	bodies    bodyCache // messages' text as drawn (body.go)
	parts     lineParts // what message lines share (messagelines.go)
	// composerShown is the composer as last drawn (render.go): a frame in a
	// busy chat draws it again only when it changed.
	composerShown *composerShown

	offset  int // history lines scrolled up from the bottom
	newHere int // messages that arrived while scrolled up
	lines   []string
	// lineSeq is the seq_no of the message each of lines belongs to (0:
	// a separator, a marker, a pending message): what the screen shows
	// decides what is reported read.
	lineSeq []int64
	// lineW is the width in cells of each of lines, measured once when the
	// line was drawn: a View pads the lines on screen without measuring them.
	lineW []int
	// tickAt maps the line that ends in a tick View draws to its message's
	// seq_no (render.go).
	tickAt map[int]int64
	// shown: the chat is on screen (not the inbox in its place). Off screen
	// render only marks it dirty, drawn when it shows. redraws counts the
	// drawings of the whole history, draws every drawing (whole or of what
	// was added), for tests.
	shown, dirty bool
	redraws      int
	draws        int
	width        int
	height       int

	// Who else is around (presence.go): typing hints by user, and presence.
	typers   map[string]time.Time
	presence map[string]wire.MemberPresence

	// completing is a tab completion of a mention under way (complete.go).
	completing *mentionCompletion
}

// maxContentW is the widest a message's text runs, as prose is set for
// reading (and as Slack and Element lay out a wide window).
const maxContentW = 100

const (
	tickColW = 3 // " ✓✓"
	timeColW = 6 // "15:04 "
)

func newChatModel(c *common) chatModel {
	m := chatModel{c: c, statuses: map[string]wire.MemberStatus{}, failed: map[string]string{}, composerShown: &composerShown{}}
	m.compose = newComposer(c)
	return m
}

// cachedLines is one message's rendering and what it depended on.
type cachedLines struct {
	key    lineKey
	lines  []string
	widths []int // of lines, in cells
	// tickBack counts the lines after the one that ends in the tick (a
	// reactions line, a reason not sent).
	tickBack int
}

type lineKey struct {
	width, senderW int
	names          int // the display names' version (names.go)
	showName       bool
	tick           tick
	failed         string
	seq            int64
	minute         int64
	updated        int64  // the last event applied to the message
	quote          string // a reply's quoted line
	selected       bool
}

func (m *chatModel) restyle() {
	m.compose.SetStyles(composerStyles(m.c.styles))
	m.lineCache, m.drawn = nil, drawnState{}
	m.render()
}

func (m *chatModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.compose.SetWidth(max(w, 4))
	m.render()
}

// open resets the screen for a conversation and starts loading it.
func (m *chatModel) open(e wire.InboxEntry) tea.Cmd {
	// What was typed and not sent stays with its conversation.
	drafts := m.drafts
	if drafts == nil {
		drafts = map[string]string{}
	}
	var keep tea.Cmd
	if m.conv.ConversationID != "" {
		if v := m.compose.Value(); v != "" {
			drafts[m.conv.ConversationID] = v
		} else {
			delete(drafts, m.conv.ConversationID)
		}
		keep = saveDrafts(m.c, map[string]string{m.conv.ConversationID: m.compose.Value()})
	}
	*m = chatModel{
		c: m.c, conv: e, statuses: map[string]wire.MemberStatus{}, failed: map[string]string{},
		compose: m.compose, width: m.width, height: m.height, active: true, drafts: drafts, composerShown: m.composerShown, disconnected: m.disconnected,
		shown: m.shown, redraws: m.redraws, // on screen or not, as it was: a chat opened in place (a restore) draws at once
		windowGen: m.windowGen + 1,
	}
	m.lastSeq = e.LastSeq
	if e.Unread > 0 {
		m.unreadFrom = e.LastReadSeq + 1
		m.toUnread = true
	}
	m.compose.Reset()
	if d, ok := drafts[e.ConversationID]; ok {
		m.compose.SetValue(d)
	}
	m.render()
	c, id := m.c, e.ConversationID
	load := m.loadNewest()
	if m.toUnread && e.LastSeq-e.LastReadSeq > int64(c.page) {
		// Further back than the newest page: one page there, not every
		// page between (window.go).
		load = m.loadAt(m.unreadFrom - unreadContext)
	}
	stat := func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		st, err := c.be.Statuses(ctx, id)
		return statusesMsg{conv: id, statuses: st, err: err}
	}
	info := func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		cv, err := c.be.Conversation(ctx, id)
		return convInfoMsg{conv: cv, err: err}
	}
	return tea.Batch(load, stat, info, loadPresence(c, id), presenceTick(id), m.focusCompose(), keep)
}

// loadNewest asks for the newest page; also after a reconnect when what is on
// screen came from the cache only.
func (m *chatModel) loadNewest() tea.Cmd {
	c, id, gen := m.c, m.conv.ConversationID, m.windowGen
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		p, err := c.be.History(ctx, id, 0, c.page)
		return historyMsg{conv: id, page: p, err: err, gen: gen}
	}
}

func (m *chatModel) close() {
	m.active = false
	m.compose.Blur()
	m.composing = false
}

func (m *chatModel) focusCompose() tea.Cmd {
	if m.conv.ConversationID == "" {
		return nil
	}
	m.composing = true
	m.afterLayoutChange()
	return m.compose.Focus()
}

func (m *chatModel) blurCompose() {
	m.composing = false
	m.compose.Blur()
}

func (m chatModel) Update(msg tea.Msg) (chatModel, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case historyMsg:
		if msg.conv != m.conv.ConversationID {
			return m, nil
		}
		if msg.gen != m.windowGen { // for a window replaced since
			if msg.below {
				m.loadingNewer = false
			} else if msg.before != 0 && !msg.fresh {
				m.loadingOlder = false
				m.render()
			}
			return m, nil
		}
		if msg.below {
			return m, m.pageBelow(msg)
		}
		if msg.fresh {
			m.loaded = true
			if msg.err == nil {
				m.startWindow(msg)
			}
		}
		if msg.before != 0 {
			m.loadingOlder = false
		}
		if msg.err != nil {
			m.loadErr = msg.err
			m.c.log.Error("load history", "conv", msg.conv, "before", msg.before, "err", msg.err)
			if msg.before == 0 {
				m.loaded = true
			}
			m.render()
			return m, flash("history: "+errText(msg.err), true)
		}
		m.loadErr = nil
		m.stale = msg.page.Stale
		if msg.before == 0 {
			m.loaded = true
			for _, p := range msg.page.Pending {
				m.addPending(p)
			}
			// A refused message keeps its text on screen, with the reason,
			// after the chat is opened again.
			for id, reason := range msg.page.Refused {
				m.failed[id] = reason
			}
		}
		m.more = msg.page.More
		anchor := m.bottomSeq()
		m.merge(msg.page.Messages)
		trimmed := !msg.fresh && msg.before != 0 && len(m.msgs) > maxWindow
		if trimmed {
			m.trimNewest(maxWindow) // an older page in: the newest go
		}
		// On the way back to the first unread nothing is drawn until it is
		// there: a chat opening at 5,000 unread drew every page it passed.
		onTheWay := m.toUnread && m.jumpTo == 0 && len(m.msgs) > 0 && m.msgs[0].SeqNo > m.unreadFrom && m.more
		if !onTheWay {
			m.render()
		}
		if trimmed {
			m.keepBottom(anchor)
		}
		if m.toOldest && msg.before != 0 {
			m.toOldest = m.more
			m.scroll(len(m.lines)) // stay on the first line loaded while the next page comes
		}
		if m.jumpTo > 0 {
			cmds = append(cmds, m.continueJump())
		} else if m.toUnread {
			if len(m.msgs) > 0 && m.msgs[0].SeqNo > m.unreadFrom && m.more {
				cmds = append(cmds, m.loadOlder()) // the first unread is further back
			} else {
				m.toUnread = false
				m.scrollToUnread()
			}
		}
		cmds = append(cmds, m.maybeLoadOlder(), m.maybeLoadNewer(), m.maybeMarkRead())

	case presenceMsg, presenceTickMsg, client.TypingEvent, typingExpiredMsg:
		return m, m.updatePresence(msg)

	case editedMsg:
		return m, m.edited(msg)

	case statusesMsg:
		if msg.conv != m.conv.ConversationID || msg.err != nil {
			return m, nil
		}
		for _, st := range msg.statuses {
			m.setStatus(st)
		}
		m.render()

	case convInfoMsg:
		if msg.err != nil || msg.conv.ConversationID != m.conv.ConversationID {
			return m, nil
		}
		m.participants = msg.conv.Participants
		if msg.conv.Name != "" {
			m.conv.Name = msg.conv.Name
		}
		m.topic, m.conv.Type = msg.conv.Topic, msg.conv.Type
		m.render()

	case sendQueuedMsg:
		if msg.err != nil {
			if msg.conv == m.conv.ConversationID && m.compose.Value() == "" {
				m.compose.SetValue(msg.text)
			}
			return m, flash("not sent: "+errText(msg.err), true)
		}
		if msg.conv == m.conv.ConversationID && visible(msg.msg) {
			m.addPending(msg.msg)
			m.offset, m.newHere = 0, 0
			m.render()
			if m.behind { // what was sent shows at the newest
				return m, m.loadAt(m.lastSeq)
			}
		}

	case attachmentDoneMsg:
		if msg.err != nil {
			return m, flash("attachment: "+errText(msg.err), true)
		}
		return m, flash(msg.what, false)

	case markedReadMsg:
		if msg.err != nil {
			m.c.log.Warn("mark read", "conv", msg.conv, "seq", msg.seq, "err", msg.err)
		}
		return m, m.c.markedRead(msg)

	case client.MessageEvent:
		if msg.Message.ConversationID != m.conv.ConversationID {
			return m, nil
		}
		m.stoppedTyping(msg.Message.SenderID)
		if m.behind {
			m.heardNewer(msg.Message)
			return m, nil
		}
		m.lastSeq = max(m.lastSeq, msg.Message.SeqNo)
		before := len(m.lines)
		var newest int64
		if n := len(m.msgs); n > 0 {
			newest = m.msgs[n-1].SeqNo
		}
		added := m.merge([]wire.Message{msg.Message})
		m.render()
		cmds = append(cmds, m.membershipChanged(msg.Message))
		// A message after the newest goes at the bottom: keep the lines the
		// reader is looking at in place. An older one (catch-up filling a gap)
		// lands above and moves nothing, since the offset counts from the bottom.
		if added && m.offset > 0 && msg.Message.SeqNo > newest {
			m.offset += len(m.lines) - before
			if msg.Message.SenderID != m.c.me && visible(msg.Message) {
				m.newHere++
			}
		}
		m.trimLive()
		cmds = append(cmds, m.maybeMarkRead())

	case client.ChangedEvent:
		if msg.Message.ConversationID != m.conv.ConversationID {
			return m, nil
		}
		before := len(m.lines)
		m.changed(msg.Message)
		m.render()
		if m.offset > 0 { // a reaction line came or went above the bottom: keep the view
			m.offset = max(m.offset+len(m.lines)-before, 0)
			m.afterLayoutChange()
		}

	case client.SentEvent:
		if msg.Sent.ConversationID != m.conv.ConversationID {
			return m, nil
		}
		found := false
		for i, p := range m.pending {
			if p.MessageID == msg.Sent.MessageID {
				p.SeqNo, p.Timestamp = msg.Sent.SeqNo, msg.Sent.Timestamp
				m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
				m.lastSeq = max(m.lastSeq, p.SeqNo)
				if !m.behind { // behind, it shows when the newest page comes
					m.merge([]wire.Message{p})
				}
				found = true
				break
			}
		}
		if !found {
			if m.early == nil || len(m.early) >= maxEarly {
				m.early = map[string]wire.SendResponse{} // answers to resends of an older session: nobody waits for them
			}
			m.early[msg.Sent.MessageID] = msg.Sent
		}
		m.render()

	case client.SendFailedEvent:
		if msg.ConversationID == m.conv.ConversationID {
			m.failed[msg.MessageID] = errText(msg.Err)
			m.render()
		}

	case client.StatusEvent:
		if msg.ConversationID == m.conv.ConversationID {
			m.setStatus(msg.Status)
			m.render()
		}

	case client.ConversationEvent:
		if msg.Conversation.ConversationID == m.conv.ConversationID && len(msg.Conversation.Participants) > 0 {
			m.participants = msg.Conversation.Participants
			m.render()
		}

	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(3)
		case tea.MouseWheelDown:
			m.scroll(-3)
		}
		cmds = append(cmds, m.maybeLoadOlder(), m.maybeLoadNewer(), m.maybeMarkRead())

	case tea.KeyPressMsg:
		cmds = append(cmds, m.handleKey(msg))

	case tea.PasteMsg:
		// A paste while reading starts writing: nothing pasted is lost.
		if !m.composing {
			cmds = append(cmds, m.focusCompose())
		}
		var cmd tea.Cmd
		m.compose, cmd = m.compose.Update(msg)
		m.afterLayoutChange()
		cmds = append(cmds, cmd)

	default:
		if m.composing {
			var cmd tea.Cmd
			m.compose, cmd = m.compose.Update(msg)
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *chatModel) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	hist := m.historyHeight()
	if !matches(msg, k.Top) {
		m.toOldest = false // any other key: the reader went elsewhere
	}
	// Nor is the chat moved to its first unread once the reader has pressed
	// a key: a page arriving after their G must not take them back up.
	m.toUnread = false
	if m.composing {
		m.endCompletion(msg)
		switch {
		case msg.String() == "tab" && m.completeMention():
			m.afterLayoutChange()
			return nil
		case matches(msg, k.Send) && msg.String() == "enter":
			return m.send()
		case matches(msg, k.Cancel):
			if m.action != actMessage {
				if m.actionFromReading {
					m.blurCompose()
				}
				m.cancelAction()
				m.afterLayoutChange()
				return nil
			}
			m.blurCompose()
			m.afterLayoutChange()
			return nil
		case matches(msg, k.Editor):
			return m.openEditor()
		case matches(msg, k.Recall) || matches(msg, k.Forward):
			cmd, _ := m.recall(matches(msg, k.Recall))
			return cmd
		case msg.String() == "up" && m.compose.Value() == "" && m.action == actMessage && m.histPos == 0:
			if m.editLast() {
				return nil
			}
			cmd, _ := m.recall(true)
			return cmd
		case (msg.String() == "up" || msg.String() == "down") && m.histPos > 0:
			if cmd, ok := m.recall(msg.String() == "up"); ok {
				return cmd
			}
		case msg.String() == "pgup":
			m.scroll(hist - 1)
			return tea.Batch(m.maybeLoadOlder(), m.maybeMarkRead())
		case msg.String() == "pgdown":
			m.scroll(-(hist - 1))
			return tea.Batch(m.maybeLoadNewer(), m.maybeMarkRead())
		case m.action == actReact:
			if emoji, ok := m.quickReaction(msg.String()); ok {
				m.compose.SetValue(emoji)
				return m.send()
			}
		}
		before := m.compose.TextRev() // not Value: that would build the text on every key
		var cmd tea.Cmd
		m.compose, cmd = m.compose.Update(msg)
		m.afterLayoutChange()
		if m.compose.TextRev() != before && !m.compose.Empty() {
			return tea.Batch(cmd, sendTyping(m.c, m.conv.ConversationID))
		}
		return cmd
	}
	if cmd, ok := m.handleActionKey(msg); ok {
		return cmd
	}
	switch {
	case matches(msg, k.Compose):
		return m.focusCompose()
	case matches(msg, k.Editor):
		return m.openEditor()
	case matches(msg, k.Up):
		m.scroll(1)
	case matches(msg, k.Down):
		m.scroll(-1)
	case matches(msg, k.HalfUp):
		m.scroll(hist / 2)
	case matches(msg, k.HalfDown):
		m.scroll(-hist / 2)
	case matches(msg, k.PageUp):
		m.scroll(hist - 1)
	case matches(msg, k.PageDown):
		m.scroll(-(hist - 1))
	case matches(msg, k.Top):
		m.toOldest = m.more
		m.scroll(len(m.lines))
		if m.more { // an older page on its way is for the window replaced
			return m.loadAt(1) // the first page in place of the window
		}
	case matches(msg, k.FirstUnread):
		if n := len(m.msgs); m.unreadFrom > 0 && n > 0 &&
			(m.more && m.msgs[0].SeqNo > m.unreadFrom || m.behind && m.msgs[n-1].SeqNo < m.unreadFrom) {
			m.toUnread = true // the window moved away from it
			return m.loadAt(m.unreadFrom - unreadContext)
		}
		if !m.scrollToUnread() {
			return flash("nothing was unread when you opened this chat", false)
		}
	case matches(msg, k.Mute):
		conv := m.conv.ConversationID
		return func() tea.Msg { return toggleMuteMsg{conv: conv} }
	case matches(msg, k.Bottom):
		m.scroll(-len(m.lines))
		if m.behind {
			return m.loadAt(m.lastSeq)
		}
	default:
		return nil
	}
	return tea.Batch(m.maybeLoadOlder(), m.maybeLoadNewer(), m.maybeMarkRead())
}

// send hands the composed text to the backend. The composer clears at once; the
// message appears as pending when Send returns, which is a local queue write.
func (m *chatModel) send() tea.Cmd {
	text := strings.TrimSpace(m.compose.Value())
	if text == "" {
		return nil
	}
	if n := len(text); n > maxMessageBytes {
		// Kept in the box, to shorten: sent, the server would refuse it and
		// the text would be left only in a ✗ message.
		return flash(fmt.Sprintf("not sent: the message is %d bytes; the limit is %d (16 KiB)", n, maxMessageBytes), true)
	}
	if path, rest, ok := attachCommand(text); ok && m.action == actMessage {
		m.compose.Reset()
		m.afterLayoutChange()
		return m.attach(path, rest)
	}
	out := m.outgoing(text)
	m.compose.Reset()
	// A reply is writing, so the composer stays; a reaction or an edit is a
	// one-off on a message, done from where the reader was.
	if m.actionFromReading && (m.action == actReact || m.action == actEdit) {
		m.blurCompose()
	}
	m.action, m.target, m.actionFromReading = actMessage, wire.Message{}, false
	m.unstash()
	m.afterLayoutChange()
	var keep tea.Cmd
	if out.Kind == "" {
		m.c.inputs.add(out.ConversationID, text)
		keep = keepInput(m.c, out.ConversationID, text)
	}
	m.histPos = 0
	return tea.Batch(m.sendMessage(out, text), keep)
}

// sendMessage hands a message or event to the backend; text is what was
// typed, given back to the composer if the queue refuses it.
func (m *chatModel) sendMessage(out wire.Message, text string) tea.Cmd {
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		msg, err := c.be.Send(ctx, out)
		if err != nil {
			c.log.Error("send", "conv", out.ConversationID, "kind", out.Kind, "err", err)
		}
		return sendQueuedMsg{conv: out.ConversationID, msg: msg, err: err, text: text}
	}
}

// maxEarly bounds chatModel.early: a client.SentEvent for a message this screen never
// queued (an outbox resend after a restart) is never claimed.
const maxEarly = 64

func (m *chatModel) addPending(p wire.Message) {
	if p.SeqNo > 0 {
		m.merge([]wire.Message{p})
		return
	}
	for _, q := range m.pending {
		if q.MessageID == p.MessageID {
			return
		}
	}
	for _, q := range m.msgs {
		if q.MessageID == p.MessageID {
			return // already stored (the message came back before Send returned)
		}
	}
	if p.SenderID == "" {
		p.SenderID = m.c.me
	}
	if p.Timestamp.IsZero() {
		p.Timestamp = m.c.now()
	}
	if r, ok := m.early[p.MessageID]; ok { // the client.SentEvent beat Send's return
		delete(m.early, p.MessageID)
		p.SeqNo, p.Timestamp = r.SeqNo, r.Timestamp
		m.merge([]wire.Message{p})
		return
	}
	m.pending = append(m.pending, p)
}

// merge inserts stored messages in seq order, dropping duplicates (delivery is
// at-least-once) and retiring pending copies of our own. It reports whether
// anything new was added.
func (m *chatModel) merge(in []wire.Message) bool {
	var older []wire.Message // to go somewhere before the newest: merged in one pass below
	added := false
	for _, msg := range in {
		if msg.SeqNo <= 0 {
			continue
		}
		for i, p := range m.pending {
			if p.MessageID == msg.MessageID {
				m.pending = append(m.pending[:i:i], m.pending[i+1:]...)
				break
			}
		}
		m.senderMax = max(m.senderMax, lineWidth(msg.SenderID))
		n := len(m.msgs)
		if n == 0 || m.msgs[n-1].SeqNo < msg.SeqNo {
			m.msgs = append(m.msgs, msg) // render draws only what is new
			added = true
			continue
		}
		older = append(older, msg)
	}
	if len(older) == 0 {
		return added
	}
	// A page of older messages (or a gap filled): one merge of two sorted
	// lists, not an insertion each, which moved every later message along
	// and made loading thousands of them quadratic.
	slices.SortFunc(older, func(a, b wire.Message) int { return cmp.Compare(a.SeqNo, b.SeqNo) })
	merged := make([]wire.Message, 0, len(m.msgs)+len(older))
	i, j := 0, 0
	for i < len(m.msgs) || j < len(older) {
		switch {
		case j == len(older) || i < len(m.msgs) && m.msgs[i].SeqNo < older[j].SeqNo:
			merged = append(merged, m.msgs[i])
			i++
		case i < len(m.msgs) && m.msgs[i].SeqNo == older[j].SeqNo:
			j++ // had it already
		default:
			if len(merged) == 0 || merged[len(merged)-1].SeqNo != older[j].SeqNo {
				merged = append(merged, older[j])
				added = true
			}
			j++
		}
	}
	if len(merged) != len(m.msgs) {
		m.msgs = merged
		m.msgsVersion++ // not at the end: render draws everything again
	}
	return added
}

func (m *chatModel) setStatus(st wire.MemberStatus) {
	old := m.statuses[st.UserID]
	// Boundaries only move forward; a late or repeated event must not undo a tick.
	st.LastDeliveredSeq = max(st.LastDeliveredSeq, old.LastDeliveredSeq, st.LastReadSeq)
	st.LastReadSeq = max(st.LastReadSeq, old.LastReadSeq)
	m.statuses[st.UserID] = st
}

// tick is the delivery state of one of our messages.
type tick int

const (
	tickNone tick = iota
	tickPending
	tickSent
	tickDelivered
	tickRead
	tickFailed
	// tickLater: stored and ours; View draws the tick from the boundaries
	// (render.go says why).
	tickLater
)

// boundaries returns the delivered and read boundaries that count for ticks:
// the other member's in a direct chat, the minimum over every other member in a
// group.
func (m *chatModel) boundaries() (delivered, read int64) {
	others := map[string]bool{}
	for _, p := range m.participants {
		if p.UserID != m.c.me {
			others[p.UserID] = true
		}
	}
	if len(others) == 0 {
		if a, b, ok := wire.DirectMembers(m.conv.ConversationID); ok {
			others[a], others[b] = true, true
			delete(others, m.c.me)
		}
		for u := range m.statuses {
			if u != m.c.me {
				others[u] = true
			}
		}
	}
	if len(others) == 0 {
		return 0, 0
	}
	first := true
	for u := range others {
		st := m.statuses[u] // a member with no status yet has boundaries 0
		d := max(st.LastDeliveredSeq, st.LastReadSeq)
		if first {
			delivered, read, first = d, st.LastReadSeq, false
			continue
		}
		delivered, read = min(delivered, d), min(read, st.LastReadSeq)
	}
	return delivered, read
}

func (m *chatModel) tickFor(msg wire.Message, delivered, read int64) tick {
	if msg.SenderID != m.c.me {
		return tickNone
	}
	if _, bad := m.failed[msg.MessageID]; bad {
		return tickFailed
	}
	switch {
	case msg.SeqNo <= 0:
		return tickPending
	case msg.SeqNo <= read:
		return tickRead
	case msg.SeqNo <= delivered:
		return tickDelivered
	}
	return tickSent
}

func (m *chatModel) tickGlyph(t tick) string {
	s := m.c.styles
	switch t {
	case tickPending:
		return s.TickPending.Render(" ◷")
	case tickSent:
		return s.TickSent.Render(" ✓")
	case tickDelivered:
		return s.TickDelivered.Render("✓✓")
	case tickRead:
		return s.TickRead.Render("✓✓")
	case tickFailed:
		return s.TickFailed.Render(" ✗")
	}
	return "  "
}

// maybeLoadOlder asks for the previous page when the reader nears the top of
// what is loaded. It runs as a command: the screen keeps answering meanwhile.
func (m *chatModel) maybeLoadOlder() tea.Cmd {
	if len(m.lines)-m.offset-m.historyHeight() > m.historyHeight() {
		return nil
	}
	return m.loadOlder()
}

// scrollToUnread puts the "new" marker at the top of the view (or shows all
// when everything fits); false when there is no marker.
func (m *chatModel) scrollToUnread() bool {
	if m.newLine < 0 {
		return false
	}
	m.offset = max(len(m.lines)-m.historyHeight()-m.newLine, 0)
	m.afterLayoutChange()
	return true
}

// loadOlder asks for the page before the oldest message loaded.
func (m *chatModel) loadOlder() tea.Cmd {
	if !m.loaded || !m.more || m.loadingOlder || m.loadErr != nil {
		return nil
	}
	before := int64(0)
	if len(m.msgs) > 0 {
		before = m.msgs[0].SeqNo
	}
	if before <= 1 {
		m.more = false
		m.render()
		return nil
	}
	atTop := m.offset >= len(m.lines)-m.historyHeight()
	m.loadingOlder = true
	if !m.toUnread { // on the way to the first unread, drawn once it is there
		m.render()
	}
	if atTop {
		m.offset = max(len(m.lines)-m.historyHeight(), 0) // show the "loading" line
	}
	c, id, gen := m.c, m.conv.ConversationID, m.windowGen
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		p, err := c.be.History(ctx, id, before, c.page)
		return historyMsg{conv: id, before: before, page: p, err: err, gen: gen}
	}
}

// maybeMarkRead reports read what has been on screen: the newest message
// whose last line is in view (at the bottom, the newest message and any event
// after it), never past it. Opening a chat at its first unread, or scrolling
// down through the unread, moves the boundary as far as the screen has gone,
// so the sender's blue ticks and the other devices' unread counts stay true.
func (m *chatModel) maybeMarkRead() tea.Cmd {
	if !m.active || len(m.msgs) == 0 {
		return nil
	}
	if m.offset == 0 {
		m.newHere = 0
	}
	// On the way to the first unread or to a search result the lines are
	// not yet what will be shown.
	if m.toUnread || m.jumpTo > 0 || !m.loaded {
		return nil
	}
	seen := m.seenSeq()
	if seen <= max(m.readSent, m.conv.LastReadSeq) {
		return nil
	}
	m.readSent = seen
	m.unreadLeft = 0
	for i := len(m.msgs) - 1; i >= 0 && m.msgs[i].SeqNo > seen; i-- {
		if x := m.msgs[i]; x.SenderID != m.c.me && visible(x) {
			m.unreadLeft++
		}
	}
	if m.behind && len(m.msgs) > 0 {
		// Below the window nothing is loaded to look at: each seq_no there
		// counts as a message (window.go).
		m.unreadLeft += max(m.lastSeq-m.msgs[len(m.msgs)-1].SeqNo, 0)
	}
	return m.c.markRead(m.conv.ConversationID, seen)
}

// seenSeq is the newest seq_no the screen shows whole (0: none).
func (m *chatModel) seenSeq() int64 {
	if m.offset == 0 {
		return m.msgs[len(m.msgs)-1].SeqNo
	}
	end := min(len(m.lines)-m.offset, len(m.lineSeq))
	start := max(end-m.historyHeight(), 0)
	for i := end - 1; i >= start; i-- {
		s := m.lineSeq[i]
		if s == 0 {
			continue
		}
		// A message running on below the screen has not been seen whole.
		if end < len(m.lineSeq) && m.lineSeq[end] == s {
			for i > start && m.lineSeq[i-1] == s {
				i--
			}
			continue
		}
		return s
	}
	return 0
}

func (m *chatModel) scroll(n int) {
	m.offset = min(max(m.offset+n, 0), max(len(m.lines)-m.historyHeight(), 0))
	if m.offset == 0 {
		m.newHere = 0
	}
}

// afterLayoutChange keeps the offset valid when the composer grows or shrinks.
func (m *chatModel) afterLayoutChange() {
	m.offset = min(m.offset, max(len(m.lines)-m.historyHeight(), 0))
}

const chatHeaderH = 2

func (m *chatModel) composerHeight() int {
	h := m.compose.Height() + 1 // the rule above it
	if m.action != actMessage {
		h++ // what the composer writes: a reply, an edit, a reaction
	}
	return h
}

func (m *chatModel) historyHeight() int {
	return max(m.height-chatHeaderH-m.composerHeight(), 1)
}

// maxMessageBytes is the server's limit on a message's text (its default,
// MaxMessageBytes in server.Config).
const maxMessageBytes = 16 << 10

// tickGlyphW is the width of every tick glyph.
const tickGlyphW = 2

func daySeparator(s *Styles, label string, w int) string {
	label = " " + label + " "
	side := max((w-ansi.StringWidth(label))/2, 1)
	return s.Faint.Render(strings.Repeat("─", side)) + s.DaySep.Render(label) +
		s.Faint.Render(strings.Repeat("─", max(w-side-ansi.StringWidth(label), 0)))
}

// newMarker is the line above the first message that was unread on opening.
func newMarker(s *Styles, w int) string {
	label := " new "
	return s.Unread.Render(strings.Repeat("─", max(w-ansi.StringWidth(label)-2, 0)) + label + "──")
}

func centre(s string, w int) string {
	return strings.Repeat(" ", max((w-lipgloss.Width(s))/2, 0)) + s
}

func (m chatModel) View() string {
	lines, _ := m.viewLines()
	return strings.Join(lines, "\n")
}

// viewLines is the chat's screen lines and their widths in cells (-1: not
// known, to be measured): the history lines' widths were measured when they
// were drawn, so fitLines does not measure them on every View.
func (m chatModel) viewLines() ([]string, []int) {
	s := m.c.styles
	w := m.width
	// Header: the name, what kind of conversation, and a scroll hint.
	header, headerW, rule := m.headerLines()

	hist := m.historyHeight()
	var view []string
	var viewW []int // nil: measure
	switch {
	case !m.loaded:
		view = []string{centre(s.Subtle.Render("loading…"), w)}
	case len(m.msgs) == 0 && len(m.pending) == 0 && m.loadErr != nil:
		view = []string{" " + s.Error.Render("Could not load messages: "+errText(m.loadErr))}
	case len(m.msgs) == 0 && len(m.pending) == 0:
		view = []string{centre(s.Subtle.Render("No messages yet. Say hello!"), w)}
	default:
		end := len(m.lines) - m.offset
		start := max(end-hist, 0)
		view = m.lines[start:end]
		viewW = m.lineW[start:end]
		// The ticks of stored messages, from the boundaries as they are now.
		delivered, read := m.boundaries()
		copied := false
		for i := start; i < end; i++ {
			seq, ok := m.tickAt[i]
			if !ok {
				continue
			}
			if !copied {
				view, viewW, copied = slices.Clone(view), slices.Clone(viewW), true
			}
			t := tickSent
			switch {
			case seq <= read:
				t = tickRead
			case seq <= delivered:
				t = tickDelivered
			}
			view[i-start] += m.tickGlyph(t)
			viewW[i-start] += tickWidth
		}
	}
	// Messages sit at the bottom, next to the composer, as in every chat app.
	pad := make([]string, max(hist-len(view), 0))
	parts := []string{header, rule}
	parts = append(parts, pad...)
	parts = append(parts, view...)
	widths := make([]int, len(parts), len(parts)+8)
	widths[0], widths[1] = headerW, w
	if viewW != nil {
		copy(widths[2+len(pad):], viewW)
	} else {
		for i := 2 + len(pad); i < len(parts); i++ {
			widths[i] = -1
		}
	}
	ruleW := w
	if n := m.compose.Len(); n > maxMessageBytes*3/4 {
		// The size, as the limit nears: a long text is not refused as a surprise.
		ruleW = -1
		count := fmt.Sprintf(" %d / %d bytes ", n, maxMessageBytes)
		st := s.Subtle
		if n > maxMessageBytes {
			st = s.Error
		}
		rule = s.Faint.Render(strings.Repeat("─", max(w-ansi.StringWidth(count)-2, 0))) + st.Render(count) + s.Faint.Render("──")
	}
	parts = append(parts, rule)
	widths = append(widths, ruleW)
	if line := m.actionLine(); line != "" {
		parts = append(parts, line)
		widths = append(widths, -1)
	}
	cl, cw := m.composerLines()
	return append(parts, cl...), append(widths, cw...)
}

// ShortHelp is the chat's keys for the status line, by mode.
func (m chatModel) ShortHelp() []helpKV {
	k := m.c.keys
	if m.composing {
		bs := kv(k.Send, k.Newline, k.Cancel, k.Finder)
		bs[2].desc = "read"
		return bs
	}
	return kv(k.Compose, k.Back, k.Members, k.Help)
}
