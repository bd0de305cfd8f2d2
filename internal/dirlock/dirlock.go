// Package dirlock keeps one process at a time on a data directory: a
// chatserver serving from it, or a restore writing into it. The lock is an
// flock on <dir>/lock, so the kernel drops it when its process dies, however
// it dies: a kill -9 leaves no stale lock behind.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrHeld: another process holds the directory.
var ErrHeld = errors.New("another process is using this directory")

// Lock is a held lock; Close lets it go.
type Lock struct{ f *os.File }

// Acquire takes dir's lock without waiting: ErrHeld when another process has it.
func Acquire(dir string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", dir, ErrHeld)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return &Lock{f: f}, nil
}

// Close releases the lock (the file stays: removing it would race with a
// process opening it to lock).
func (l *Lock) Close() error { return l.f.Close() }
