package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the whole process to the file
// named by CHAT_CPUPROFILE, for as long as the process runs: the costs that
// matter (a burst arriving in the TUI, a long paste) are measured on the real
// binary in a real terminal, where `go test -cpuprofile` cannot reach. The
// returned stop flushes the profile; it is a no-op when the variable is unset.
func startCPUProfile(getenv func(string) string) (stop func(), err error) {
	path := getenv("CHAT_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CHAT_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("CHAT_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
