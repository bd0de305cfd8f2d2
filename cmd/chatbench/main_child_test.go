package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary be the bench's children too: a scenario that
// starts `chatbench serve` or `chatbench storm-worker` re-executes
// os.Executable(), which under go test is this binary.
func TestMain(m *testing.M) {
	if name, ok, err := runChild(os.Args[1:]); ok {
		if err != nil {
			fmt.Fprintf(os.Stderr, "chatbench %s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
