package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Issue 28: goldmark's extension package compiles its regular expressions
// in its variables, when a program that links it starts (3–9 ms of every
// run of chat); internal/mdterm has its own strikethrough and linkify
// parsers so it is not linked, and compiles their expressions on the first
// text it parses. GODEBUG=inittrace=1 lists every package initialised.
func TestStartDoesNotInitialiseGoldmarkExtensions(t *testing.T) {
	c := exec.Command(chatBin, "--help")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ := c.CombinedOutput() // --help's exit code is not what is tested
	trace := string(out)
	if !strings.Contains(trace, "init github.com/yuin/goldmark/parser @") {
		t.Fatalf("no init trace of goldmark's parser: %q", trace)
	}
	// mtibben/confusables builds its 6,300-entry map in its initialiser;
	// internal/termtext holds the same table as static data (skeleton.go).
	for _, pkg := range []string{"github.com/yuin/goldmark/extension", "github.com/yuin/goldmark/renderer/html", "github.com/mtibben/confusables"} {
		if strings.Contains(trace, "init "+pkg+" @") {
			t.Errorf("chat --help initialises %s", pkg)
		}
	}
}

// The TUI's start populates the heap's next pages from an initialiser
// (internal/heapwarm): the package is linked and initialised in chat. Run
// as the TUI without a terminal, chat ends with its error after the
// initialisers.
func TestTUIStartInitialisesHeapwarm(t *testing.T) {
	c := exec.Command(chatBin)
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1", "CHAT_HOME="+t.TempDir())
	out, _ := c.CombinedOutput() // no terminal: an error, which is not what is tested
	for _, pkg := range []string{"github.com/chatterm/chat/internal/heapwarm", "github.com/chatterm/chat/internal/widthwarm"} {
		if !strings.Contains(string(out), "init "+pkg+" @") {
			t.Errorf("chat does not initialise %s: %q", pkg, out)
		}
	}
}
