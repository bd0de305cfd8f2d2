package tui

import (
	"os"
	"path/filepath"
	"testing"
)

// The editor gets the composer's text in a file and what it saves comes back
// into the composer, trailing newline dropped, not sent; the file is gone
// after. VISUAL wins over EDITOR, and may carry arguments.
func TestEditorRoundTrip(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "editor.sh")
	seen := filepath.Join(dir, "seen")
	// The "editor" records what it was given and its arguments, then writes
	// a long message.
	body := "#!/bin/sh\nprintf '%s' \"$1\" > " + seen + ".arg\ncp \"$2\" " + seen + "\nprintf 'line one\\nline two\\n' > \"$2\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", "false")
	t.Setenv("VISUAL", script+" --wait")

	be := fixture()
	h := newHarness(t, be, 80, 24)
	h.key("enter") // bob
	h.typeText("draft")
	m := h.m.(Model)
	cmd, done, err := editorCommand(m.chat.conv.ConversationID, m.chat.compose.Value())
	if err != nil {
		t.Fatal(err)
	}
	file := cmd.Args[len(cmd.Args)-1]
	h.send(done(cmd.Run()))

	if got, _ := os.ReadFile(seen); string(got) != "draft" {
		t.Fatalf("the editor was given %q, want the composer's text", got)
	}
	if got, _ := os.ReadFile(seen + ".arg"); string(got) != "--wait" {
		t.Fatalf("the editor's own arguments = %q", got)
	}
	if got := h.m.(Model).chat.compose.Value(); got != "line one\nline two" {
		t.Fatalf("composer after the editor = %q", got)
	}
	if len(be.sends) != 0 {
		t.Fatalf("the editor's text was sent without Enter: %+v", be.sends)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is still there: %v", err)
	}

	// An editor that fails leaves the composer alone.
	t.Setenv("VISUAL", "false")
	cmd, done, _ = editorCommand(bobConv, "kept")
	h.send(done(cmd.Run()))
	if got := h.m.(Model).chat.compose.Value(); got != "line one\nline two" {
		t.Fatalf("a failed editor changed the composer to %q", got)
	}
}
