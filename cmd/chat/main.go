// The runtime re-reads the CPU limits every second to update GOMAXPROCS
// (Go 1.25 on): a wake-up a second of an idle chat (or chat tail) for a
// setting a terminal client has no use to follow; the start still takes it.
//go:debug updatemaxprocs=0

// Command chat is the terminal chat client: with no arguments the full-screen
// TUI, with a command (send, history, ls, tail, ...) a scripting tool. See
// docs/cli.md and chat --help.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chatterm/chat/internal/initenv"
)

func main() {
	// Before anything reads the environment: the package initialisers ran
	// without TMUX (internal/initenv), main and what it starts get it back.
	initenv.Restore()
	trace := openStartTrace(os.Getenv, time.Now())
	ctx, stop := signal.NotifyContext(withStartTrace(context.Background(), trace), os.Interrupt, syscall.SIGTERM)
	stopProfile, err := startCPUProfile(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	trace.close()
	stop()
	os.Exit(code)
}

// run is the whole program minus the process: tests call it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	return a.main(ctx, args)
}
