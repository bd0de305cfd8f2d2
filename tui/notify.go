package tui

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/internal/termtext"
	"github.com/chatterm/chat/wire"
)

// Telling the user a message arrived while they were not looking: the window
// title always carries the unread count (Model.View); besides, by
// Options.Notify, the terminal bell (the default), a desktop notification
// through the terminal (OSC 9 or OSC 777) or notify-send, or nothing.
const (
	NotifyBell       = "bell"
	NotifyOff        = "off"
	NotifyOSC9       = "osc9"        // iTerm2, kitty, WezTerm, Windows Terminal
	NotifyOSC777     = "osc777"      // foot, Ghostty, rxvt-unicode
	NotifyNotifySend = "notify-send" // libnotify, outside the terminal
)

// ValidNotify says whether mode is one of the Notify modes ("" is the bell).
func ValidNotify(mode string) bool {
	switch mode {
	case "", NotifyBell, NotifyOff, NotifyOSC9, NotifyOSC777, NotifyNotifySend:
		return true
	}
	return false
}

// notifyGap bounds how often one rings: a burst of messages is one ring.
const notifyGap = 3 * time.Second

// notifyHeldMsg: the hold-off after a notification is over; what arrived
// during it is told in one summary.
type notifyHeldMsg struct{}

// notify tells of m, which arrived unseen at now; nil when the mode is off
// or the conversation muted. Within notifyGap of the last notification m is
// held instead, and the end of the gap tells of everything held in one
// summary ("3 new messages from bob, carol") rather than of nothing. now is
// the caller's, read once for a commit's messages: the clock was 3% of what
// a burst cost with the inbox shown.
func (mdl *Model) notify(m wire.Message, now time.Time) tea.Cmd {
	mode := mdl.c.notify
	mention := mdl.c.mentionsMe(m)
	if mode == NotifyOff || mdl.c.muted[m.ConversationID] && !mention {
		return nil // a mention rings in a muted chat too
	}
	if wait := notifyGap - now.Sub(mdl.lastNotify); wait > 0 {
		mdl.held.add(m)
		if mdl.held.count > 1 {
			return nil // the first held set the timer
		}
		return tea.Tick(wait, func(time.Time) tea.Msg { return notifyHeldMsg{} })
	}
	mdl.held = heldNotes{}
	mdl.lastNotify = now
	who := mdl.c.who(m.SenderID)
	if mention {
		who += " mentioned you"
	}
	return mdl.ring(who, wire.Preview(m.Content, m.Attachment))
}

// notifyHeld tells of the messages held during the hold-off, in one
// notification.
func (mdl *Model) notifyHeld() tea.Cmd {
	held := mdl.held
	mdl.held = heldNotes{}
	if held.count == 0 || mdl.c.notify == NotifyOff {
		return nil
	}
	mdl.lastNotify = mdl.c.now()
	if held.count == 1 {
		return mdl.ring(mdl.c.who(held.first.SenderID), wire.Preview(held.first.Content, held.first.Attachment))
	}
	var senders []string
	for _, id := range held.senders {
		if who := mdl.c.who(id); !slices.Contains(senders, who) {
			senders = append(senders, who)
		}
	}
	return mdl.ring("chat", fmt.Sprintf("%d new messages from %s", held.count, strings.Join(senders, ", ")))
}

// ring sends one notification by the mode: who (a sender) and body.
func (mdl *Model) ring(who, body string) tea.Cmd {
	mode := mdl.c.notify
	// Text from someone else reaches the terminal only through the
	// sanitiser, and without the separators of the escape sequences.
	who = termtext.OneLine(who)
	body = termtext.OneLine(body)
	if r := []rune(body); len(r) > 100 {
		body = string(r[:99]) + "…"
	}
	sep := strings.NewReplacer(";", ",", "\a", "", "\x1b", "")
	who, body = sep.Replace(who), sep.Replace(body)
	switch mode {
	case NotifyOSC9:
		return tea.Raw(fmt.Sprintf("\x1b]9;%s: %s\x07", who, body))
	case NotifyOSC777:
		return tea.Raw(fmt.Sprintf("\x1b]777;notify;chat: %s;%s\x07", who, body))
	case NotifyNotifySend:
		ctx := mdl.c.ctx
		log := mdl.c.log
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := exec.CommandContext(ctx, "notify-send", "--app-name=chat", "chat: "+who, body).Run(); err != nil {
				log.Warn("notify-send", "err", err)
			}
			return nil
		}
	}
	return tea.Raw("\a")
}
