package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/chatterm/chat/client"
	"github.com/chatterm/chat/wire"
)

// highlightWordsFile, in the chat home, lists the TUI's highlight words
// (docs/tui.md, "Mentions"): one word or phrase a line, # starting a comment.
const highlightWordsFile = "highlight_words"

// highlightWords are the words that make a message a mention of the user in
// the TUI, as weechat's highlight_words: those of CHAT_HIGHLIGHT_WORDS
// (comma-separated) and of <home>/highlight_words.
func highlightWords(cfg client.Config, env string) ([]string, error) {
	var words []string
	for _, w := range strings.Split(env, ",") {
		if w = strings.TrimSpace(w); w != "" {
			words = append(words, w)
		}
	}
	home, err := cfg.HomeDir()
	if err != nil {
		return words, nil // no home: only the environment's
	}
	path := filepath.Join(home, highlightWordsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return words, nil
	}
	if err != nil {
		return nil, fmt.Errorf("highlight words: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		if w := strings.TrimSpace(line); w != "" {
			words = append(words, w)
		}
	}
	return words, nil
}

// Mentions lists the cached messages that mention the user, for the TUI's
// mentions view (tui.MentionLister).
func (b *tuiBackend) Mentions(ctx context.Context, limit int) ([]wire.Message, error) {
	s, err := b.session()
	if err != nil {
		return nil, err
	}
	return s.Store().Mentions(ctx, limit)
}
