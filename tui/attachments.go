package tui

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/chatterm/chat/wire"
)

// attachmentDoneMsg: opening or saving an attachment finished.
type attachmentDoneMsg struct {
	what string // "opened", "saved to PATH"
	err  error
}

// attachmentLine is how an attachment shows under its message: its name,
// type and size as its sender described it, else its media id.
func attachmentLine(x wire.Message) string {
	a := x.AttachmentInfo
	if a == nil || a.Name == "" && a.Type == "" {
		return "📎 attachment " + oneLine(x.Attachment)
	}
	parts := []string{oneLine(a.Name)}
	if a.Type != "" {
		parts = append(parts, oneLine(a.Type))
	}
	if a.Size > 0 {
		parts = append(parts, wire.SizeLabel(a.Size))
	}
	return "📎 " + strings.Join(parts, " · ")
}

// withAttachment is the message o and w work on: the selected one, else the
// newest with an attachment.
func (m *chatModel) withAttachment() (wire.Message, bool) {
	if x, ok := m.messageAt(m.selected); ok && m.selected != 0 {
		return x, x.Attachment != ""
	}
	for i := len(m.msgs) - 1; i >= 0; i-- {
		if x := m.msgs[i]; visible(x) && x.Attachment != "" && !x.Deleted {
			return x, true
		}
	}
	return wire.Message{}, false
}

// openAttachment opens the attachment's short-lived URL outside the terminal.
func (m *chatModel) openAttachment() tea.Cmd {
	x, ok := m.withAttachment()
	if !ok {
		return flash("no attachment here (s selects a message)", false)
	}
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		url, err := c.be.MediaURL(ctx, x.Attachment)
		if err == nil {
			err = c.openURL(url)
		}
		return attachmentDoneMsg{what: "opened " + attachmentName(x), err: err}
	}
}

// saveAttachment downloads it into the download directory.
func (m *chatModel) saveAttachment() tea.Cmd {
	x, ok := m.withAttachment()
	if !ok {
		return flash("no attachment here (s selects a message)", false)
	}
	c := m.c
	return func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		path, err := c.be.SaveMedia(ctx, x.Attachment, attachmentName(x))
		return attachmentDoneMsg{what: "saved to " + path, err: err}
	}
}

func attachmentName(x wire.Message) string {
	if x.AttachmentInfo != nil && x.AttachmentInfo.Name != "" {
		return x.AttachmentInfo.Name
	}
	return x.Attachment[strings.LastIndexByte(x.Attachment, '/')+1:]
}

// attachCommand reads "/attach PATH [TEXT]" (a PATH with spaces in double
// quotes); ok is false for any other text.
func attachCommand(text string) (path, rest string, ok bool) {
	rest, ok = strings.CutPrefix(text, "/attach ")
	if !ok {
		return "", "", false
	}
	rest = strings.TrimSpace(rest)
	if q, ok := strings.CutPrefix(rest, `"`); ok {
		if end := strings.IndexByte(q, '"'); end >= 0 {
			return q[:end], strings.TrimSpace(q[end+1:]), true
		}
	}
	path, rest, _ = strings.Cut(rest, " ")
	return path, strings.TrimSpace(rest), path != ""
}

// attach uploads a file and queues the message that carries it.
func (m *chatModel) attach(path, text string) tea.Cmd {
	c, id := m.c, m.conv.ConversationID
	return tea.Batch(flash("uploading "+path+"…", false), func() tea.Msg {
		ctx, cancel := c.call()
		defer cancel()
		msg, err := c.be.Attach(ctx, id, path, text)
		if err != nil {
			c.log.Error("attach", "conv", id, "path", path, "err", err)
		}
		return sendQueuedMsg{conv: id, msg: msg, err: err, text: "/attach " + path + " " + text}
	})
}

// openURL hands a URL to $BROWSER, else the desktop's opener. It does not
// wait for the program: a browser may run for as long as it likes.
func openURL(url string) error {
	var cmd *exec.Cmd
	switch {
	case os.Getenv("BROWSER") != "":
		cmd = exec.Command(os.Getenv("BROWSER"), url)
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", url)
	default:
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return errors.New("nothing to open it with: set $BROWSER, or save it with w")
		}
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil // never onto the TUI's screen
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaps it whenever it ends
	return nil
}
