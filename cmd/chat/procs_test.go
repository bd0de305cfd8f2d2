package main

import (
	"runtime"
	"testing"
)

func TestOneProcessorAfterThePaint(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	if !oneProcessor([]string{"TERM=xterm", "HOME=/home/a"}) || runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("GOMAXPROCS is %d after oneProcessor, want 1", runtime.GOMAXPROCS(0))
	}
}

func TestOneProcessorKeepsTheUsersChoice(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	if oneProcessor([]string{"GOMAXPROCS=2"}) || runtime.GOMAXPROCS(0) != 2 {
		t.Fatalf("GOMAXPROCS is %d with the user's GOMAXPROCS=2, want it kept", runtime.GOMAXPROCS(0))
	}
}
