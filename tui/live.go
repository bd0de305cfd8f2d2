package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/client"
)

// Live is the Model as a running program should hold it. Model's methods take
// it by value, the Elm way, and Update hands it back as a tea.Model; a value
// that size (tens of kilobytes: every screen's state is in it) boxed into an
// interface is a fresh heap object per message, so a burst of events, keys or
// frames became megabytes a second of garbage. Live keeps the one Model and
// writes each Update's result over it: the same state changes, no allocation.
// Tests keep using Model's value semantics, which compare states before and
// after.
type Live struct {
	m     Model
	last  tea.View // the View drawn last (pacer_withhold.go)
	shown bool     // last holds a View
	// same: the last Update changed nothing (the pacer's frameHandedMsg, the
	// session's StreamPausedEvent alone): its View is the last one, not
	// counted as a change.
	same bool
	// paused: the last Update carried the session's word that its stream
	// paused (client.StreamPausedEvent): once its View is decided (drawn,
	// withheld or the last one), the pacer draws what is due at once.
	paused bool
}

// NewLive wraps the root model for tea.NewProgram.
func NewLive(m Model) *Live { return &Live{m: m} }

// Init starts what Model.Init starts.
func (l *Live) Init() tea.Cmd { return l.m.Init() }

// Update applies msg as Model.Update does and keeps the result in place.
func (l *Live) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case frameDueMsg:
		return l, nil // nothing changes: the View after it is drawn
	case frameHandedMsg:
		l.m.c.pacer.handed()
		l.same = true
		return l, nil
	case client.StreamPausedEvent:
		// The model takes it too: its Update waits for the next event
		// (tui.go), and nothing else would. It changes nothing there.
		next, cmd := l.m.updateAll(msg)
		l.m = next
		l.paused, l.same = true, true
		return l, cmd
	case eventBatchMsg:
		l.paused = l.paused || batchPaused(msg)
	}
	next, cmd := l.m.updateAll(msg)
	l.m = next
	return l, cmd
}

// Model returns a copy of the state, for tests and tools that inspect it.
func (l *Live) Model() Model { return l.m }

// batchPaused says whether a batch of events carries the session's word that
// its stream paused.
func batchPaused(batch eventBatchMsg) bool {
	for _, ev := range batch {
		if _, ok := ev.(client.StreamPausedEvent); ok {
			return true
		}
	}
	return false
}
