package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Muted conversations of the logged-in account, for the TUI: a small JSON
// file beside the account's cache (muted.json), so a mute outlives the
// program. Only this machine's notifications are muted; the server knows
// nothing of it.

var mutesMu sync.Mutex // one writer at a time within this process

func (b *tuiBackend) mutesPath() (string, error) {
	s, err := b.session()
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	cfg := b.cfg
	b.mu.Unlock()
	cache, err := cfg.CachePath(s.Server(), s.UserID())
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(cache), "muted.json"), nil
}

// Muted returns the muted conversations.
func (b *tuiBackend) Muted(context.Context) (map[string]bool, error) {
	path, err := b.mutesPath()
	if err != nil {
		return nil, err
	}
	mutesMu.Lock()
	defer mutesMu.Unlock()
	return readMutes(path)
}

// SetMuted mutes or unmutes a conversation.
func (b *tuiBackend) SetMuted(_ context.Context, conversationID string, muted bool) error {
	path, err := b.mutesPath()
	if err != nil {
		return err
	}
	mutesMu.Lock()
	defer mutesMu.Unlock()
	m, err := readMutes(path)
	if err != nil {
		return err
	}
	if muted {
		m[conversationID] = true
	} else {
		delete(m, conversationID)
	}
	data, _ := json.Marshal(m)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".muted-*")
	if err != nil {
		return fmt.Errorf("save muted conversations: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("save muted conversations: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save muted conversations: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

func readMutes(path string) (map[string]bool, error) {
	m := map[string]bool{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read muted conversations: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}
