package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Muted conversations of an account on this machine: muted.json beside the
// account's cache. A UI uses it to ring nothing for them; the server knows
// nothing of it.

var mutesMu sync.Mutex // read-modify-write of the file, within this process

func (c Config) mutesPath(server, userID string) (string, error) {
	cache, err := c.CachePath(server, userID)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(cache), "muted.json"), nil
}

// Muted returns the account's muted conversations.
func (c Config) Muted(server, userID string) (map[string]bool, error) {
	path, err := c.mutesPath(server, userID)
	if err != nil {
		return nil, err
	}
	mutesMu.Lock()
	defer mutesMu.Unlock()
	return readMutes(path)
}

// SetMuted mutes or unmutes one of the account's conversations.
func (c Config) SetMuted(server, userID, conversationID string, muted bool) error {
	path, err := c.mutesPath(server, userID)
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
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("save muted conversations: %w", err)
	}
	return nil
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
