package tui

import (
	"context"
	"fmt"
	"os/exec"
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

// notify tells of m, which arrived unseen; nil when the mode is off or one
// rang too recently.
func (mdl *Model) notify(m wire.Message) tea.Cmd {
	mode := mdl.c.notify
	now := mdl.c.now()
	if mode == NotifyOff || mdl.c.muted[m.ConversationID] || now.Sub(mdl.lastNotify) < notifyGap {
		return nil
	}
	mdl.lastNotify = now
	// Text from someone else reaches the terminal only through the
	// sanitiser, and without the separators of the escape sequences.
	who := termtext.OneLine(m.SenderID)
	body := termtext.OneLine(wire.Preview(m.Content, m.Attachment))
	if r := []rune(body); len(r) > 100 {
		body = string(r[:99]) + "…"
	}
	body = strings.NewReplacer(";", ",", "\a", "", "\x1b", "").Replace(body)
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
