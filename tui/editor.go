package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Writing a long message in the user's editor ($VISUAL, else $EDITOR, else
// vi), as git and mutt do: the composer's text goes to a temporary file, the
// TUI gives the terminal to the editor, and what was saved comes back into
// the composer, to be read over and sent with Enter.

// editedMsg is what the editor left in the file.
type editedMsg struct {
	conv string
	text string
	err  error
}

// editorCommand is the editor run on a file holding text, and what turns its
// end into an editedMsg (the file is removed then).
func editorCommand(conv, text string) (*exec.Cmd, tea.ExecCallback, error) {
	editor := strings.TrimSpace(os.Getenv("VISUAL"))
	if editor == "" {
		editor = strings.TrimSpace(os.Getenv("EDITOR"))
	}
	if editor == "" {
		editor = "vi"
	}
	f, err := os.CreateTemp("", "chat-message-*.txt")
	if err != nil {
		return nil, nil, fmt.Errorf("a file for the editor: %w", err)
	}
	name := f.Name()
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return nil, nil, fmt.Errorf("a file for the editor: %w", err)
	}
	// "code --wait" and "emacsclient -t" are editors too: words, then the file.
	words := strings.Fields(editor)
	cmd := exec.Command(words[0], append(words[1:], name)...)
	done := func(runErr error) tea.Msg {
		defer os.Remove(name)
		if runErr != nil {
			return editedMsg{conv: conv, err: fmt.Errorf("%s: %w", editor, runErr)}
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return editedMsg{conv: conv, err: err}
		}
		// Editors end the file with a newline; the message does not.
		return editedMsg{conv: conv, text: strings.TrimRight(string(data), "\r\n")}
	}
	return cmd, done, nil
}

// openEditor hands the terminal to the editor with the composer's text.
func (m *chatModel) openEditor() tea.Cmd {
	cmd, done, err := editorCommand(m.conv.ConversationID, m.compose.Value())
	if err != nil {
		return flash(err.Error(), true)
	}
	return tea.ExecProcess(cmd, done)
}

// edited puts what the editor left into the composer (nothing is sent
// without Enter); an editor that failed leaves the composer as it was.
func (m *chatModel) edited(msg editedMsg) tea.Cmd {
	if msg.err != nil {
		return flash("editor: "+msg.err.Error(), true)
	}
	if msg.conv != m.conv.ConversationID {
		return nil
	}
	m.compose.SetValue(msg.text)
	m.afterLayoutChange()
	return m.focusCompose()
}
