package dirlock

import (
	"errors"
	"testing"
)

func TestOneHolderAtATime(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrHeld) {
		t.Fatalf("a second Acquire while held: %v, want ErrHeld", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Close: %v", err)
	}
	l.Close()
}
